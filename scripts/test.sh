#!/usr/bin/env bash
# Install with the dev extra, then lint, type-check and run every test.
set -euo pipefail
cd "$(dirname "$0")/.."
./scripts/bootstrap.sh dev
.venv/bin/ruff check src tests
.venv/bin/ruff format --check src tests
.venv/bin/mypy
.venv/bin/python -m pytest -q "$@"
