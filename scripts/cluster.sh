#!/usr/bin/env bash
# CodeWeaver as several replicas sharing everything, from local processes:
#   PostgreSQL (threads, sessions)  and Redis (rate limit, run slots): this machine's own
#   Milvus Lite as a gRPC server    (answer cache, knowledge base)
#   `codeweaver model serve`        (one model for every replica; not with --scripted)
#   N x `codeweaver serve`          (the replicas; put any load balancer in front)
#
# usage: scripts/cluster.sh start [--scripted] [--replicas N]
#        scripts/cluster.sh stop | status
#
# Settings (environment): CLUSTER_DIR (state, logs; default .cluster), CLUSTER_MODEL_PORT
# (8100), CLUSTER_MILVUS_PORT (19530), CLUSTER_REPLICA_PORT (first replica; 8101),
# DATABASE_URL (postgresql://postgres@127.0.0.1:5432/postgres), CODEWEAVER_REDIS_URL
# (redis://127.0.0.1:6379/0), CODEWEAVER_MODEL (local:qwen2.5-coder-1.5b: what the
# model server serves; a `scripted:` model runs in each replica instead, as --scripted
# does with scripted:echo). Every other CODEWEAVER_* setting reaches the replicas as is.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$(pwd)
venv="$root/.venv/bin"
dir=$(mkdir -p "${CLUSTER_DIR:-.cluster}" && cd "${CLUSTER_DIR:-.cluster}" && pwd)
model_port=${CLUSTER_MODEL_PORT:-8100}
milvus_port=${CLUSTER_MILVUS_PORT:-19530}
replica_port=${CLUSTER_REPLICA_PORT:-8101}
database_url=${DATABASE_URL:-postgresql://postgres@127.0.0.1:5432/postgres}
redis_url=${CODEWEAVER_REDIS_URL:-redis://127.0.0.1:6379/0}
model=${CODEWEAVER_MODEL:-local:qwen2.5-coder-1.5b}

ready=0
say() { echo "==> $*"; }
die() { echo "cluster: $*" >&2; exit 2; }

# Start a process in its own process group (so stop reaches its children) and record it.
launch() {
  local name=$1; shift
  setsid "$@" >"$dir/$name.log" 2>&1 < /dev/null &
  echo $! >"$dir/$name.pid"
  echo "$name" >>"$dir/order"
}

alive() { [ -f "$dir/$1.pid" ] && kill -0 "$(cat "$dir/$1.pid")" 2>/dev/null; }

# Wait until `check` succeeds, failing with the process's log if it dies or times out.
wait_for() {
  local name=$1 seconds=$2; shift 2
  local deadline=$((SECONDS + seconds))
  until "$@" >/dev/null 2>&1; do
    if ! alive "$name"; then
      tail -n 20 "$dir/$name.log" >&2
      die "$name exited; its log is $dir/$name.log"
    fi
    [ $SECONDS -lt $deadline ] || die "$name did not become ready in ${seconds} s ($dir/$name.log)"
    sleep 0.5
  done
}

http_ok() { "$venv/python" -c 'import sys, httpx; sys.exit(httpx.get(sys.argv[1], timeout=2).status_code != 200)' "$1"; }
port_open() { "$venv/python" -c 'import socket, sys; socket.create_connection(("127.0.0.1", int(sys.argv[1])), 1).close()' "$1"; }

check_services() {
  "$venv/python" - "$database_url" "$redis_url" <<'EOF' || exit 2
import sys
try:
    import psycopg, pymilvus, redis  # noqa: F401
except ImportError as exc:
    sys.exit(f"cluster: {exc.name} is missing: run ./scripts/bootstrap.sh postgres,milvus,openai")
try:
    psycopg.connect(sys.argv[1], connect_timeout=3).close()
except Exception as exc:
    sys.exit(f"cluster: PostgreSQL at DATABASE_URL does not answer ({type(exc).__name__}); "
             "on Debian: pg_ctlcluster 15 main start")
try:
    redis.Redis.from_url(sys.argv[2], socket_timeout=3).ping()
except Exception as exc:
    sys.exit(f"cluster: Redis at CODEWEAVER_REDIS_URL does not answer ({type(exc).__name__}); "
             "on Debian: service redis-server start")
EOF
}

stop() {
  [ -f "$dir/order" ] || { say "nothing is running"; return 0; }
  # Replicas first, then what they use.
  for name in $(tac "$dir/order"); do
    if alive "$name"; then
      local pid; pid=$(cat "$dir/$name.pid")
      kill -TERM -- "-$pid" 2>/dev/null || true
      for _ in $(seq 1 40); do kill -0 "$pid" 2>/dev/null || break; sleep 0.5; done
      if kill -0 "$pid" 2>/dev/null; then
        say "$name did not stop in 20 s: killing it"
        kill -KILL -- "-$pid" 2>/dev/null || true
      fi
      say "stopped $name"
    fi
    rm -f "$dir/$name.pid"
  done
  rm -f "$dir/order"
}

status() {
  [ -f "$dir/order" ] || { say "nothing is running"; return 0; }
  for name in $(cat "$dir/order"); do
    if alive "$name"; then echo "$name: running (pid $(cat "$dir/$name.pid"))"; else echo "$name: stopped"; fi
  done
}

start() {
  local scripted=0 replicas=2
  while [ $# -gt 0 ]; do
    case $1 in
      --scripted) scripted=1 ;;
      --replicas) replicas=${2:?--replicas needs a number}; shift ;;
      *) die "unknown option $1" ;;
    esac
    shift
  done
  [[ $replicas =~ ^[1-9][0-9]*$ ]] || die "--replicas must be a positive number"
  [ -x "$venv/codeweaver" ] || die "no .venv: run ./scripts/bootstrap.sh postgres,milvus,openai"
  [ -f "$dir/order" ] && die "already started (scripts/cluster.sh stop first)"
  # A start that fails half way stops what it started.
  trap '[ "$ready" = 1 ] || stop' EXIT
  check_services

  say "Milvus Lite server on 127.0.0.1:$milvus_port"
  launch milvus "$venv/python" -m milvus_lite server --data-dir "$dir/milvus" \
    --host 127.0.0.1 --port "$milvus_port"
  wait_for milvus 60 port_open "$milvus_port"

  local replica_model
  local -a replica_env=()
  if [ $scripted -eq 1 ] || [[ $model == scripted:* ]]; then
    # A scripted model needs no model server: each replica runs it.
    [[ $model == scripted:* ]] && replica_model=$model || replica_model=scripted:echo
  else
    say "model server for $model on 127.0.0.1:$model_port (loading the weights)"
    launch model "$venv/codeweaver" model serve --model "$model" --port "$model_port"
    wait_for model 600 http_ok "http://127.0.0.1:$model_port/v1/models"
    replica_model="openai:${model#*:}"
    replica_env=("OPENAI_BASE_URL=http://127.0.0.1:$model_port/v1")
  fi

  for i in $(seq 1 "$replicas"); do
    local port=$((replica_port + i - 1))
    say "replica $i on 127.0.0.1:$port"
    launch "replica$i" env "${replica_env[@]}" \
      CODEWEAVER_MODEL="$replica_model" \
      CODEWEAVER_DATA_DIR="$dir/replica$i" \
      DATABASE_URL="$database_url" \
      CODEWEAVER_REDIS_URL="$redis_url" \
      CODEWEAVER_VECTOR_STORE=milvus \
      MILVUS_URI="http://127.0.0.1:$milvus_port" \
      "$venv/codeweaver" serve --host 127.0.0.1 --port "$port"
  done
  for i in $(seq 1 "$replicas"); do
    wait_for "replica$i" 300 http_ok "http://127.0.0.1:$((replica_port + i - 1))/api/health"
  done
  ready=1
  say "ready: replicas on ports $replica_port..$((replica_port + replicas - 1)); logs in $dir"
}

case ${1:-} in
  start) shift; start "$@" ;;
  stop) stop ;;
  status) status ;;
  *) echo "usage: scripts/cluster.sh start [--scripted] [--replicas N] | stop | status" >&2; exit 2 ;;
esac
