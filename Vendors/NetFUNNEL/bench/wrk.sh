#!/usr/bin/env bash
# Emulator 5002 requests/s vs a static file from nginx, both on loopback with keep-alive, in one run.
#   Vendors/NetFUNNEL/bench/wrk.sh            (env: DURATION=10 THREADS=2 CONNECTIONS=32)
# Needs: wrk, nginx (Debian packages); nginx runs from a temporary config on a high port.
set -euo pipefail
cd "$(dirname "$0")/../../.."
DURATION=${DURATION:-10}
THREADS=${THREADS:-2}
CONNECTIONS=${CONNECTIONS:-32}
EMU_PORT=${EMU_PORT:-18181}
NGINX_PORT=${NGINX_PORT:-18182}
WORK=$(mktemp -d)
URL_FILE="$WORK/url"
SERVE_SECONDS=$((DURATION * 2 + 60))

BUILD=${BUILD:-release}   # release (default) or debug
echo "building ($BUILD)…"
[ "${SKIP_BUILD:-0}" = 1 ] || swift build -c "$BUILD" --build-tests >/dev/null
BIN=$(ls -d .build/"$BUILD"/*PackageTests.xctest | head -1)

echo "starting the emulator ($BUILD) on 127.0.0.1:$EMU_PORT"
WR_BENCH_SERVE=1 WR_BENCH_PORT=$EMU_PORT WR_BENCH_SECONDS=$SERVE_SECONDS WR_BENCH_URL_FILE=$URL_FILE \
  "$BIN" --testing-library swift-testing --filter benchServeEmulator >"$WORK/emulator.log" 2>&1 &
EMU_PID=$!

mkdir -p "$WORK/www" "$WORK/logs"
# a static file the size of a typical 5002 reply
printf "NetFunnel.gRtype=5002;NetFunnel.gControl.result='5002:201:key=%064d&nwait=0&nnext=0&tps=0.000000&ttl=1&ip=127.0.0.1&port=%d&vwr_html=&vwr_type=&live_message=&chk_enter_cnt=1&sticky=nf4';NetFunnel.gControl._showResult();" 0 "$EMU_PORT" > "$WORK/www/reply.js"
cat >"$WORK/nginx.conf" <<CONF
user root;
worker_processes auto;
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path $WORK/tmp; proxy_temp_path $WORK/tmp; fastcgi_temp_path $WORK/tmp;
  uwsgi_temp_path $WORK/tmp; scgi_temp_path $WORK/tmp;
  server { listen 127.0.0.1:$NGINX_PORT; root $WORK/www; }
}
CONF
mkdir -p "$WORK/tmp"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
"$NGINX" -e "$WORK/logs/error.log" -c "$WORK/nginx.conf" -p "$WORK"

cleanup() {
  kill "$(cat "$WORK/nginx.pid" 2>/dev/null)" 2>/dev/null || true
  kill "$EMU_PID" 2>/dev/null || true
}
trap cleanup EXIT

for _ in $(seq 1 600); do [ -s "$URL_FILE" ] && break; sleep 0.1; done
[ -s "$URL_FILE" ] || { echo "emulator did not start"; cat "$WORK/emulator.log"; exit 1; }
EMU_URL=$(cat "$URL_FILE")
NGINX_URL="http://127.0.0.1:$NGINX_PORT/reply.js"

echo "warm-up"; wrk -t1 -c4 -d2s "$EMU_URL" >/dev/null; wrk -t1 -c4 -d2s "$NGINX_URL" >/dev/null
echo "== emulator 5002 ($EMU_URL)"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" "$EMU_URL" | tee "$WORK/emu.txt"
echo "== nginx static file ($NGINX_URL)"
wrk -t"$THREADS" -c"$CONNECTIONS" -d"${DURATION}s" "$NGINX_URL" | tee "$WORK/nginx.txt"
EMU_RPS=$(awk '/Requests\/sec/ {print $2}' "$WORK/emu.txt")
NGINX_RPS=$(awk '/Requests\/sec/ {print $2}' "$WORK/nginx.txt")
echo
echo "($BUILD build; $(nproc) cores; wrk -t$THREADS -c$CONNECTIONS -d${DURATION}s)"
echo "emulator 5002: $EMU_RPS req/s; nginx static: $NGINX_RPS req/s; ratio emulator/nginx: $(awk -v a="$EMU_RPS" -v b="$NGINX_RPS" 'BEGIN {printf "%.3f", a/b}')"
