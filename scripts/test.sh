#!/usr/bin/env bash
# Install with the dev extra, then lint, type-check and run every test.
# Needs PostgreSQL on 127.0.0.1:5432 (database `test`, trust auth), Redis on
# 127.0.0.1:6379 and Debian's Chromium
# for the browser test; Chromium is installed here when missing (root or sudo).
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh dev
# The integration tests read the real docs index: wait for its vectors (seconds when they
# are already in the user cache, minutes the very first time).
.venv/bin/codeweaver setup --wait
if [ ! -x /usr/bin/chromium ]; then
  echo "==> installing Debian's chromium for the web UI test"
  sudo_cmd=""
  [ "$(id -u)" -ne 0 ] && sudo_cmd="sudo"
  install="$sudo_cmd apt-get install -y --no-install-recommends chromium chromium-driver"
  $install >/dev/null || { $sudo_cmd apt-get update >/dev/null && $install >/dev/null; }
fi
.venv/bin/ruff check src tests bench
.venv/bin/ruff format --check src tests bench
.venv/bin/mypy
.venv/bin/lint-imports --no-cache
.venv/bin/python -m pytest -q "$@"
