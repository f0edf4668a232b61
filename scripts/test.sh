#!/usr/bin/env bash
# Install with the dev extra, then lint, type-check and run every test.
# Needs PostgreSQL on 127.0.0.1:5432 (database `test`, trust auth), Redis on
# 127.0.0.1:6379, Debian's Chromium for the browser test and Node.js 20+ with npm for the
# TypeScript MCP client test; Chromium is installed here when missing (root or sudo).
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
# The official TypeScript SDK's MCP client drives the MCP server in a test (Node.js 20+);
# its packages come from the lock file, installed when node_modules is missing (npm then
# has not written its copy of the lock) or the lock is newer than that copy.
mcp_ts=tests/e2e/mcp_ts
if [ "$mcp_ts/package-lock.json" -nt "$mcp_ts/node_modules/.package-lock.json" ]; then
  echo "==> installing the TypeScript MCP client's packages (npm ci)"
  npm ci --prefix "$mcp_ts" --no-audit --no-fund >/dev/null
fi
.venv/bin/ruff check src tests
.venv/bin/ruff format --check src tests
.venv/bin/mypy
.venv/bin/lint-imports --no-cache
.venv/bin/python -m pytest -q "$@"
