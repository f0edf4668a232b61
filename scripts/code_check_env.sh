#!/usr/bin/env bash
# A project environment for measuring the code check (`codeweaver eval code`): the packages
# the data sets' code imports, at pinned versions: a `.venv` (pandas 2.2, NumPy 2.1,
# CPython's own) and a `node_modules` (React 19, React Router 7, Express 5, Node's types).
# Packages that are not installed are never flagged, so the lists set what is judged.
#
#   scripts/code_check_env.sh DIR   # makes DIR/.venv and DIR/node_modules; then, in DIR: codeweaver eval code …
set -euo pipefail
dir="${1:?usage: scripts/code_check_env.sh DIR}"
python="${PYTHON:-python3}"
mkdir -p "$dir"
"$python" -m venv "$dir/.venv"
"$dir/.venv/bin/pip" install --quiet --disable-pip-version-check \
    "pandas==2.2.3" "numpy==2.1.3" "requests==2.32.3" "scikit-learn==1.5.2" \
    "pymongo==4.10.1" "django==5.1.3" "ipython==8.29.0"
printf '{"name": "code-check-env", "version": "1.0.0", "private": true}\n' > "$dir/package.json"
(cd "$dir" && npm install --no-audit --no-fund --loglevel=error --save-exact \
    "@angular/core@21.2.26" "@angular/platform-browser-dynamic@21.2.26" "@nestjs/common@12.5.1" \
    "@nestjs/core@12.5.1" "@nestjs/graphql@14.0.3" "@reduxjs/toolkit@2.15.0" \
    "@types/express@5.0.6" "@types/jquery@4.0.1" "@types/lodash@4.17.27" \
    "@types/node@26.6.6" "@types/react@19.3.0" "@types/react-dom@19.3.0" \
    "@vitejs/plugin-vue@6.0.11" "axios@1.21.1" "class-transformer@0.5.1" \
    "class-validator@0.15.1" "date-fns@4.4.0" "express@5.3.0" \
    "graphql@16.15.0" "jquery@4.0.0" "jwt-decode@4.0.0" \
    "lodash@4.18.1" "next@16.4.6" "react@19.3.1" \
    "react-dom@19.3.1" "react-redux@9.3.1" "react-router-dom@7.18.6" \
    "redux@5.0.1" "rxjs@7.8.2" "styled-components@6.6.0" \
    "typeorm@1.1.1" "uuid@14.0.3" "vite@8.3.8" \
    "vue@3.5.45" "webpack@5.113.0" "zod@4.6.7")
echo "ready: $dir/node_modules ($(ls "$dir/node_modules" | wc -l) entries)"
echo "ready: $dir/.venv ($("$dir/.venv/bin/python" --version))"
