#!/usr/bin/env bash
# Benchmarks the Queue-it emulator's enqueue endpoint against nginx serving a static file, in the
# same run, on loopback with keep-alive. Also prints queueittokens validated per second.
#
#   Vendors/QueueIt/bench/wrk.sh            # release build (slow first build), 10 s per wrk run
#   CONFIG=debug DURATION=5 Vendors/QueueIt/bench/wrk.sh
#
# Env: CONFIG (release|debug), DURATION (s), THREADS, CONNS, ROOM (default sale: a queueing room),
#      TOKENS (tokens to validate, default 200000), SCRATCH (extra swift flags, e.g. --scratch-path).
set -euo pipefail
cd "$(dirname "$0")/../../.."
CONFIG=${CONFIG:-release}
DURATION=${DURATION:-10}
THREADS=${THREADS:-2}
CONNS=${CONNS:-32}
ROOM=${ROOM:-sale}
TOKENS=${TOKENS:-200000}
# SCRATCH: e.g. "--scratch-path .build-release" to keep the release build apart from .build.
SCRATCH=${SCRATCH:-}
WORK=$(mktemp -d /tmp/qi-bench.XXXXXX)
PORTFILE=$WORK/port
cleanup() {
  [ -n "${NGINX_PID:-}" ] && kill "$NGINX_PID" 2>/dev/null || true
  [ -n "${EMU_PID:-}" ] && kill "$EMU_PID" 2>/dev/null || true
  rm -rf "$WORK"
}
trap cleanup EXIT

# `swift test` builds with testable imports also in release (`swift build --build-tests` does not).
echo "== building tests ($CONFIG) and validating tokens =="
WR_BENCH=1 WR_BENCH_TOKENS=$TOKENS swift test -c "$CONFIG" $SCRATCH --filter 'QueueItBenchmarks/tokenValidationThroughput' 2>&1 | grep -E 'bench:' || true

echo "== starting emulator =="
WR_BENCH_SERVE=$((DURATION * 2 + 20)) WR_BENCH_PORTFILE=$PORTFILE \
  swift test -c "$CONFIG" --skip-build $SCRATCH --filter 'QueueItBenchmarks/serveForBenchmark' >"$WORK/emu.log" 2>&1 &
EMU_PID=$!
for _ in $(seq 1 600); do [ -s "$PORTFILE" ] && break; sleep 0.1; done
[ -s "$PORTFILE" ] || { echo "emulator did not start:"; cat "$WORK/emu.log"; exit 1; }
EPORT=$(cat "$PORTFILE")
echo "emulator on 127.0.0.1:$EPORT"

echo "== starting nginx =="
NPORT=$((20000 + RANDOM % 20000))
mkdir -p "$WORK/www" "$WORK/logs"
chmod 755 "$WORK" "$WORK/www"
curl -s -X POST -H 'Content-Type: application/json' \
  -d '{"userId":"u","userAgent":"a","sdkVersion":"s"}' \
  "http://127.0.0.1:$EPORT/api/mobileapp/queue/demo/$ROOM/enqueue" >"$WORK/www/static.json"
chmod 644 "$WORK/www/static.json"
echo "static file: $(wc -c <"$WORK/www/static.json") bytes (a real enqueue answer)"
cat >"$WORK/nginx.conf" <<NGX
worker_processes $THREADS;
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log;
daemon off;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  server {
    listen 127.0.0.1:$NPORT;
    root $WORK/www;
    location / { default_type application/json; }
  }
}
NGX
nginx -p "$WORK" -c "$WORK/nginx.conf" &
NGINX_PID=$!
sleep 0.5

run_wrk() { wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" "$@"; }
echo "== wrk: emulator enqueue (POST, Lua body) =="
E_OUT=$(run_wrk -s Vendors/QueueIt/bench/enqueue.lua "http://127.0.0.1:$EPORT/api/mobileapp/queue/demo/$ROOM/enqueue")
echo "$E_OUT"
echo "== wrk: nginx static file =="
N_OUT=$(run_wrk "http://127.0.0.1:$NPORT/static.json")
echo "$N_OUT"
if echo "$N_OUT" | grep -q "Non-2xx"; then echo "nginx answered errors:"; tail -3 "$WORK/logs/error.log"; fi
E_RPS=$(echo "$E_OUT" | awk '/Requests\/sec/ {print $2}')
N_RPS=$(echo "$N_OUT" | awk '/Requests\/sec/ {print $2}')
echo "== summary =="
echo "emulator enqueue: $E_RPS req/s; nginx static: $N_RPS req/s; ratio emulator/nginx: $(awk -v a="$E_RPS" -v b="$N_RPS" 'BEGIN { if (b > 0) printf "%.3f", a / b; else print "n/a" }')"
echo "(config $CONFIG, $THREADS threads, $CONNS connections, ${DURATION}s each, $(nproc) cores)"
