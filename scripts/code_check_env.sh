#!/usr/bin/env bash
# A project environment for measuring the code check (`codeweaver eval code`): the packages
# the data sets' code imports, at pinned versions (pandas 2.2, NumPy 2.1, CPython's own).
# Packages that are not installed are never flagged, so the list sets what is judged.
#
#   scripts/code_check_env.sh DIR      # makes DIR/.venv; then: cd DIR && codeweaver eval code …
set -euo pipefail
dir="${1:?usage: scripts/code_check_env.sh DIR}"
python="${PYTHON:-python3}"
mkdir -p "$dir"
"$python" -m venv "$dir/.venv"
"$dir/.venv/bin/pip" install --quiet --disable-pip-version-check \
    "pandas==2.2.3" "numpy==2.1.3" "requests==2.32.3" "scikit-learn==1.5.2" \
    "pymongo==4.10.1" "django==5.1.3" "ipython==8.29.0"
echo "ready: $dir/.venv ($("$dir/.venv/bin/python" --version))"
