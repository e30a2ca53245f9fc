#!/usr/bin/env bash
# The emulators' request rates next to two baselines serving the same reply bytes, in one run, on
# loopback with keep-alive: nginx serving a static file (temporary config on a free port), and a
# Hummingbird route serving the bytes from memory on the emulators' own server setup
# (`waitingroom bench --serve-static`), which separates the framework's cost from ours.
#   - NetFUNNEL: 5002 (key check) of a waiting key, GET
#   - Queue-it: enqueue, POST with a small JSON body (wrk Lua body script), the same POST to both
#     baselines (nginx answers a POST to a file with the file); nginx's GET rate is shown too
#   - gate: `waitingroom gate --vendor queueit --emulator` in front of two upstreams, GET with a
#     valid `QueueITAccepted` cookie (minted token → the gate's cookie), each next to the same GET
#     to its upstream directly; the figure is gate / upstream (goal ≥ 0.5):
#       nginx static (the fastest upstream there is), with nginx itself as a reverse proxy in front
#       of it for reference (what a proxy reaches when wrk, proxy and upstream share the cores);
#       a Hummingbird app (`bench --serve-static`), the kind of server the gate fronts, with
#       nginx as a reverse proxy in front of it too (the same reference for this row);
#     each also over a Unix-domain socket (`--upstream unix:PATH`), and the app once more with
#     `--session-memo 0` (every request's cookie checked and signed afresh); for each gate-row
#     target it also prints the CPU time per request of wrk and of each server process
#     (`/proc/PID/stat`), and the summary the gate's ÷ the app's and ÷ nginx's proxy's
#   - authz: `waitingroom gate --authz` behind nginx's auth_request (deploy/nginx's template as
#     shipped) and behind Caddy (deploy/caddy/Caddyfile as shipped), each ÷ the same proxy sending
#     the same GET (valid cookie) straight to the same app (goal ≥ 0.7), with the CPU time per
#     request of every process; the ledgers (--state SQLite, PostgreSQL ÷ in memory) with a cookie
#     and with replayed tokens on the start route; live configuration (--config-url) under load
#     (bench/README.md, "The auth mode")
# The figures that matter are the ratios emulator / nginx, emulator / Hummingbird static and
# Hummingbird static / nginx: machines here are noisy. `waitingroom bench emulators` measures the
# same in process (and `bench all --json` includes it).
# Needs wrk and nginx (Debian: apt-get install wrk nginx-light curl); Scripts/setup does not install them.
#
#   bench/wrk.sh                       # builds `waitingroom` in release (.build-release), 10 s per run
#   DURATION=5 BUILD=debug bench/wrk.sh
# Env: BUILD (release|debug), DURATION (s), THREADS, CONNS, ONLY (netfunnel|queueit|gate|authz), SKIP_BUILD=1,
# GATE_ARGS (more `waitingroom gate` options, e.g. "--threads 1"),
# ROUNDS (runs per target, default 2, in the order A B C then C B A; each target keeps its best),
# PAIRS (gate row: adjacent app-direct / gate-in-front pairs after the rounds, default 5; the
# median of their ratios is the figure least moved by a load that drifts).
# The authz row (`waitingroom gate --authz` behind nginx and Caddy; bench/README.md, "The auth
# mode"): AUTHZ_PAIRS (rounds of each comparison, A B then B A…, default 4), AUTHZ_PARTS (any of
# "nginx caddy ledgers live", default all), AUTHZ_NGINX_WORKERS (worker_processes, default 1 as
# deploy/README.md's wrapper; e.g. auto), AUTHZ_GATE_ARGS (more gate options, e.g. "--threads 1"),
# AUTHZ_KEEPALIVE (an experiment: the template's and the plain proxy's `keepalive 16` replaced),
# AUTHZ_GATE_SOCKET=1 (the gate on a socket file, `--listen unix:PATH`; with AUTHZ_PARTS=nginx),
# TOKENS (minted tokens for the ledger load, default 1000), LIVE_DURATION (s, default 20), PGBIN
# (PostgreSQL's initdb/pg_ctl folder; default the newest /usr/lib/postgresql/*/bin). Needs
# envsubst; Caddy and PostgreSQL rows are skipped without caddy or the PostgreSQL binaries.
set -euo pipefail
cd "$(dirname "$0")/.."
BUILD=${BUILD:-release}
DURATION=${DURATION:-10}
THREADS=${THREADS:-2}
CONNS=${CONNS:-32}
ROUNDS=${ROUNDS:-2}
PAIRS=${PAIRS:-5}
ONLY=${ONLY:-}
SCRATCH=.build-$BUILD
[ "$BUILD" = debug ] && SCRATCH=.build
for tool in wrk nginx curl; do
  command -v "$tool" >/dev/null || [ -x "/usr/sbin/$tool" ] || { echo "needs $tool (apt-get install wrk nginx-light curl)"; exit 1; }
done
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "building waitingroom ($BUILD, $SCRATCH)…"
  swift build -c "$BUILD" --scratch-path "$SCRATCH" --product waitingroom >/dev/null
fi
BIN="$SCRATCH/$BUILD/waitingroom"
WORK=$(mktemp -d /tmp/wr-wrk.XXXXXX)
cleanup() {
  [ -f "$WORK/nginx.pid" ] && kill "$(cat "$WORK/nginx.pid")" 2>/dev/null || true
  # the authz row's nginx instances, Caddy, emulator, configuration loop and PostgreSQL
  for pidfile in "$WORK"/ngx-*/nginx.pid; do [ -f "$pidfile" ] && kill "$(cat "$pidfile")" 2>/dev/null || true; done
  for pid in ${EXTRA_PIDS:-}; do kill "$pid" 2>/dev/null || true; done
  [ -n "${PG_STOP:-}" ] && $PG_STOP >/dev/null 2>&1 || true
  [ -n "${EMU_PID:-}" ] && kill "$EMU_PID" 2>/dev/null || true
  [ -n "${HELLO_PID:-}" ] && kill "$HELLO_PID" 2>/dev/null || true
  for pid in ${GATE_PIDS:-}; do kill "$pid" 2>/dev/null || true; done
  rm -rf "$WORK"
}
trap cleanup EXIT

# A NetFUNNEL segment that admits one key and keeps the next one waiting for a day, plus the
# default Queue-it rooms.
cat >"$WORK/emulator.json" <<'JSON'
{ "netfunnel": { "projects": { "service_1": { "segments": {
    "bench": { "control": "basic", "limit": 1, "timeoutSec": 86400, "retentionSec": 86400 } } } } },
  "queueit": { "customers": { "demo": { "secretKey": "demo-secret-key-0123456789", "rooms": {
    "sale": { "state": "queue", "admitPerSecond": 2, "refreshSeconds": 1 } } } } } }
JSON
"$BIN" emulate --config "$WORK/emulator.json" --port 0 --json >"$WORK/emulator.out" 2>"$WORK/emulator.log" &
EMU_PID=$!
for _ in $(seq 1 100); do grep -q baseURL "$WORK/emulator.out" 2>/dev/null && break; sleep 0.1; done
BASE=$(sed -n 's/.*"baseURL":"\([^"]*\)".*/\1/p' "$WORK/emulator.out")
[ -n "$BASE" ] || { echo "the emulator did not start:"; cat "$WORK/emulator.log"; exit 1; }
echo "emulator ($BUILD): $BASE"

# NetFUNNEL: take the one admitted key, queue a second and check that one (201 on every 5002).
NF="$BASE/ts.wseq?opcode=5101&nfid=0&sid=service_1&aid=bench&js=yes"
curl -s "$NF" >/dev/null
KEY=$(curl -s "$NF" | sed -n "s/.*key=\([^&']*\).*/\1/p")
[ -n "$KEY" ] || { echo "no NetFUNNEL key"; exit 1; }
NF_URL="$BASE/ts.wseq?opcode=5002&key=$KEY&nfid=0&prefix=NetFunnel.gRtype%3D5002%3B&ttl=1&sid=service_1&aid=bench&js=yes"
QI_URL="$BASE/api/mobileapp/queue/demo/sale/enqueue"
cat >"$WORK/enqueue.lua" <<'LUA'
wrk.method = "POST"
wrk.body = '{"userId":"bench-user","userAgent":"wrk/4 (bench)","sdkVersion":"wrk-bench-1"}'
wrk.headers["Content-Type"] = "application/json"
wrk.headers["Accept"] = "application/json"
LUA

# nginx serves files the size of the two answers.
mkdir -p "$WORK/www" "$WORK/logs" "$WORK/tmp"
curl -s "$NF_URL" >"$WORK/www/reply.js"
curl -s -X POST -H 'Content-Type: application/json' -d '{"userId":"u","userAgent":"a","sdkVersion":"s"}' "$QI_URL" >"$WORK/www/enqueue.json"
chmod -R a+rX "$WORK"
"$BIN" bench --serve-static "$WORK/www" --unix-socket "$WORK/hello.sock" >"$WORK/hello.out" 2>"$WORK/hello.log" &
HELLO_PID=$!
for _ in $(seq 1 100); do grep -q baseURL "$WORK/hello.out" 2>/dev/null && break; sleep 0.1; done
HELLO=$(sed -n 's/.*"baseURL":"\([^"]*\)".*/\1/p' "$WORK/hello.out")
[ -n "$HELLO" ] || { echo "the Hummingbird static server did not start:"; cat "$WORK/hello.log"; exit 1; }
echo "Hummingbird static ($BUILD): $HELLO"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
# two ports picked at random (nginx cannot be told port 0 and report it); another pair when
# either is taken
for _ in 1 2 3 4 5; do
# below the ephemeral range (32768–60999 on Linux): a port a connection uses as its own cannot be
# bound either; a failed start leaves the Unix socket behind, which the next one could not bind
rm -f "$WORK/nginx-static.sock"
NPORT=$((10000 + RANDOM % 22000))
PPORT=$((NPORT + 1))
HPORT=$((NPORT + 2))
cat >"$WORK/nginx.conf" <<NGX
worker_processes $THREADS;
pid $WORK/nginx.pid;
error_log $WORK/logs/error.log;
events { worker_connections 1024; }
http {
  access_log off;
  keepalive_requests 1000000;
  client_body_temp_path $WORK/tmp; proxy_temp_path $WORK/tmp; fastcgi_temp_path $WORK/tmp;
  uwsgi_temp_path $WORK/tmp; scgi_temp_path $WORK/tmp;
  types { application/javascript js; application/json json; }
  # a POST to a file is 405 in nginx: answer it with the file, as for a GET
  # also on a Unix-domain socket, for the gate's --upstream unix:PATH row
  server { listen 127.0.0.1:$NPORT; listen unix:$WORK/nginx-static.sock; root $WORK/www; error_page 405 =200 \$uri; }
  # nginx as a reverse proxy in front of the server above (keep-alive both ways): what the
  # best-known proxy reaches on this machine, the reference for the gate row
  upstream wr_static { server 127.0.0.1:$NPORT; keepalive 64; }
  # it forwards what the gate forwards: the visitor's cookie (wrk sends the gate row's) and
  # X-Forwarded-For, -Proto and -Host
  server { listen 127.0.0.1:$PPORT; location / { proxy_pass http://wr_static; proxy_http_version 1.1; proxy_set_header Connection "";
    proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for; proxy_set_header X-Forwarded-Proto \$scheme; proxy_set_header X-Forwarded-Host \$http_host; } }
  # the same proxy in front of the Hummingbird app: the reference for the gate's app row
  upstream wr_app { server ${HELLO#http://}; keepalive 64; }
  server { listen 127.0.0.1:$HPORT; location / { proxy_pass http://wr_app; proxy_http_version 1.1; proxy_set_header Connection "";
    proxy_set_header X-Forwarded-For \$proxy_add_x_forwarded_for; proxy_set_header X-Forwarded-Proto \$scheme; proxy_set_header X-Forwarded-Host \$http_host; } }
}
NGX
"$NGINX" -e "$WORK/logs/error.log" -c "$WORK/nginx.conf" -p "$WORK" 2>>"$WORK/logs/start.log" && break
done
sleep 0.3
[ -f "$WORK/nginx.pid" ] || { echo "nginx did not start:"; cat "$WORK/logs/start.log"; exit 1; }

rps() { awk '/Requests\/sec/ {print $2}'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (b + 0 == 0) printf "n/a"; else printf "%.3f", a/b}'; }
run() { wrk -t"$THREADS" -c"$CONNS" -d"${DURATION}s" "$@"; }
# ticks PID…: the CPU time (user + system, in clock ticks) the processes have used so far, all
# their threads; a process that is gone counts 0.
TICK_US=$(( 1000000 / $(getconf CLK_TCK) ))
ticks() { local t=0 pid; for pid in "$@"; do t=$(( t + $(awk '{print $14 + $15}' "/proc/$pid/stat" 2>/dev/null || echo 0) )); done; echo "$t"; }
# best LABEL ARGS…: one target's run; prints wrk's output, keeps the best rate in BEST[LABEL].
# With CPU="NAME:PID[,PID…] …" set, it also prints the CPU time each named process (and wrk
# itself) spent per request, in µs, and keeps the best run's in CPU_OF[LABEL].
# Every run also sets LAST_RPS, LAST_OUT (wrk's output), LAST_LABEL and LAST_CPU, and adds
# wrk's non-2xx/3xx answers and socket errors to NON2XX[LABEL] and SOCKERR[LABEL].
declare -A BEST CPU_OF NON2XX SOCKERR
LAST_RPS=0
best() {
  local label=$1; shift
  echo "== $label"
  local spec name pids before=() i=0
  for spec in ${CPU:-}; do pids=${spec#*:}; before[i]=$(ticks ${pids//,/ }); i=$((i + 1)); done
  local out times; times=$(mktemp "$WORK/time.XXXXXX")
  out=$( { TIMEFORMAT='%U %S'; time run "$@"; } 2>"$times" ); echo "$out"
  local r; r=$(echo "$out" | rps)
  LAST_RPS=${r:-0}
  LAST_OUT=$out
  NON2XX[$label]=$(( ${NON2XX[$label]:-0} + $(echo "$out" | awk '/Non-2xx or 3xx responses/ {n = $NF} END {print n + 0}') ))
  SOCKERR[$label]=$(( ${SOCKERR[$label]:-0} + $(echo "$out" | awk '/Socket errors/ {for (i = 1; i <= NF; i++) if ($i ~ /^[0-9]+,?$/) n += $i} END {print n + 0}') ))
  local requests; requests=$(echo "$out" | awk '/requests in/ {print $1}')
  local cpu=""
  if [ -n "${CPU:-}" ] && [ "${requests:-0}" -gt 0 ]; then
    cpu=$(tail -n 1 "$times" | awk -v n="$requests" '{printf "wrk %.1f", ($1 + $2) * 1e6 / n}')
    i=0
    for spec in $CPU; do
      name=${spec%%:*}; pids=${spec#*:}
      cpu+=$(awk -v a="${before[i]}" -v b="$(ticks ${pids//,/ })" -v us="$TICK_US" -v n="$requests" -v name="$name" 'BEGIN {printf ", %s %.1f", name, (b - a) * us / n}')
      i=$((i + 1))
    done
    echo "CPU per request (µs): $cpu"
  fi
  rm -f "$times"
  LAST_LABEL=$label
  LAST_CPU=$cpu
  if awk -v a="${BEST[$label]:-0}" -v b="${r:-0}" 'BEGIN {exit !(b > a)}'; then
    BEST[$label]=${r:-0}
    CPU_OF[$label]=$cpu
  fi
}
# cpu_of LABEL NAME: the µs per request NAME spent in LABEL's best run.
cpu_of() { echo "${CPU_OF[$1]:-}" | tr ',' '\n' | awk -v n="$2" '$1 == n {print $2}'; }
# Each target runs ROUNDS times, in the order A B C, then C B A, …: a load that comes and goes on a
# shared machine hits every target alike; each keeps its best rate.
echo "warm-up…"
wrk -t1 -c4 -d2s "$NF_URL" >/dev/null; wrk -t1 -c4 -d2s "http://127.0.0.1:$NPORT/reply.js" >/dev/null
wrk -t1 -c4 -d2s "$HELLO/reply.js" >/dev/null
SUMMARY=""
order() { if [ $(( $1 % 2 )) = 1 ]; then echo "$2"; else echo "$2" | tr ' ' '\n' | tac | tr '\n' ' '; fi; }
if [ -z "$ONLY" ] || [ "$ONLY" = netfunnel ]; then
  for round in $(seq 1 "$ROUNDS"); do
    for t in $(order "$round" "emulator hummingbird nginx"); do
      case $t in
        emulator) best "NetFUNNEL 5002 on the emulator" "$NF_URL" ;;
        hummingbird) best "Hummingbird static reply.js" "$HELLO/reply.js" ;;
        nginx) best "nginx static reply.js ($(wc -c <"$WORK/www/reply.js") bytes)" "http://127.0.0.1:$NPORT/reply.js" ;;
      esac
    done
  done
  ER=${BEST["NetFUNNEL 5002 on the emulator"]}; HR=${BEST["Hummingbird static reply.js"]}
  NR=${BEST["nginx static reply.js ($(wc -c <"$WORK/www/reply.js") bytes)"]}
  SUMMARY+="NetFUNNEL 5002: $ER req/s; Hummingbird static: $HR req/s; nginx static: $NR req/s"$'\n'
  SUMMARY+="  emulator/nginx $(ratio "$ER" "$NR"); emulator/hummingbird $(ratio "$ER" "$HR"); hummingbird/nginx $(ratio "$HR" "$NR")"$'\n'
fi
if [ -z "$ONLY" ] || [ "$ONLY" = queueit ]; then
  for round in $(seq 1 "$ROUNDS"); do
    for t in $(order "$round" "emulator hummingbird nginx nginx-get"); do
      case $t in
        emulator) best "Queue-it enqueue on the emulator (POST)" -s "$WORK/enqueue.lua" "$QI_URL" ;;
        hummingbird) best "Hummingbird static enqueue.json (POST)" -s "$WORK/enqueue.lua" "$HELLO/enqueue.json" ;;
        nginx) best "nginx static enqueue.json (POST)" -s "$WORK/enqueue.lua" "http://127.0.0.1:$NPORT/enqueue.json" ;;
        nginx-get) best "nginx static enqueue.json (GET)" "http://127.0.0.1:$NPORT/enqueue.json" ;;
      esac
    done
  done
  ER=${BEST["Queue-it enqueue on the emulator (POST)"]}; HR=${BEST["Hummingbird static enqueue.json (POST)"]}
  NR=${BEST["nginx static enqueue.json (POST)"]}; GR=${BEST["nginx static enqueue.json (GET)"]}
  SUMMARY+="Queue-it enqueue: $ER req/s; Hummingbird static: $HR req/s; nginx static: $NR req/s (POST), $GR req/s (GET)"$'\n'
  SUMMARY+="  emulator/nginx $(ratio "$ER" "$NR") (GET: $(ratio "$ER" "$GR")); emulator/hummingbird $(ratio "$ER" "$HR"); hummingbird/nginx $(ratio "$HR" "$NR")"$'\n'
fi
if [ -z "$ONLY" ] || [ "$ONLY" = gate ]; then
  # The gate (its own embedded emulator) in front of an upstream; a token minted by that emulator
  # buys the gate's cookie, which every wrk request then carries (the cookie is checked, and
  # re-issued with a fresh IssueTime, on each one: ExtendCookieValidity).
  # start_gate UPSTREAM VAR: starts a gate, sets VAR_URL and VAR_COOKIE, and VAR_PID for cleanup.
  # start_gate UPSTREAM VAR [OPTION…]: the options go to `waitingroom gate` after GATE_ARGS.
  start_gate() {
    local upstream=$1 name=$2 out="$WORK/gate-$2.out"
    shift 2
    # shellcheck disable=SC2086
    "$BIN" gate --vendor queueit --emulator --upstream "$upstream" --listen 127.0.0.1:0 ${GATE_ARGS:-} "$@" >"$out" 2>"$WORK/gate-$name.log" &
    GATE_PIDS="${GATE_PIDS:-} $!"
    eval "${name}_PID=\$!"
    for _ in $(seq 1 100); do grep -q "listening on" "$out" 2>/dev/null && break; sleep 0.1; done
    local url emu token cookie status
    url=$(sed -n 's/.*listening on \(http:[^,]*\),.*/\1/p' "$out")
    emu=$(sed -n 's/^emulator: \([^ ]*\).*/\1/p' "$out")
    [ -n "$url" ] && [ -n "$emu" ] || { echo "the gate did not start:"; cat "$out" "$WORK/gate-$2.log"; exit 1; }
    echo "gate ($BUILD): $url in front of $upstream (its emulator: $emu)"
    token=$(curl -s -X POST -H 'Content-Type: application/json' \
      -d '{"customerId":"demo","waitingRoomId":"sale","expiresIn":3600,"queueId":"3f2a9c1e-7b4d-4e21-9a0f-00000000b3ac"}' \
      "$emu/_emulator/queueit/tokens" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p')
    [ -n "$token" ] || { echo "the gate's emulator minted no token"; exit 1; }
    cookie=$(curl -s -o /dev/null -D - "$url/reply.js?queueittoken=$token" | tr -d '\r' \
      | sed -n 's/^[Ss]et-[Cc]ookie: \(QueueITAccepted[^;]*\).*/\1/p' | head -1)
    [ -n "$cookie" ] || { echo "the gate set no cookie for a valid token"; exit 1; }
    status=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" "$url/reply.js")
    [ "$status" = 200 ] || { echo "the gate answered $status, not 200, with its own cookie"; exit 1; }
    wrk -t1 -c4 -d2s -H "Cookie: $cookie" "$url/reply.js" >/dev/null
    eval "${name}_URL=\$url; ${name}_COOKIE=\$cookie"
  }
  # The direct runs send the same request as the gate's (the cookie included: a visitor's browser
  # sends it to the app whether or not a gate stands in front), so only the path differs.
  # Each upstream over loopback TCP and over a Unix-domain socket (`--upstream unix:PATH`); and
  # the app over TCP once more with `--session-memo 0`: every request's cookie checked and signed
  # afresh (the other rows send one visitor's cookie, whose decision the gate reuses for the rest
  # of each second, as for a page's burst of requests).
  UPSTREAM="http://127.0.0.1:$NPORT"
  for _ in $(seq 1 50); do [ -S "$WORK/hello.sock" ] && break; sleep 0.1; done
  start_gate "$UPSTREAM" GATE
  start_gate "unix:$WORK/nginx-static.sock" GATEU
  start_gate "$HELLO" GATEH
  start_gate "unix:$WORK/hello.sock" GATEHU
  start_gate "$HELLO" GATEHM --session-memo 0
  wrk -t1 -c4 -d2s "http://127.0.0.1:$PPORT/reply.js" >/dev/null
  wrk -t1 -c4 -d2s "http://127.0.0.1:$HPORT/reply.js" >/dev/null
  G="waitingroom gate (Queue-it cookie) in front of nginx, reply.js"
  GU="waitingroom gate (Queue-it cookie) in front of nginx over a Unix socket, reply.js"
  U="nginx static reply.js, direct (the gate's upstream)"
  P="nginx as a reverse proxy in front of the same nginx, reply.js"
  GH="waitingroom gate (Queue-it cookie) in front of the Hummingbird app, reply.js"
  GHU="waitingroom gate (Queue-it cookie) in front of the Hummingbird app over a Unix socket, reply.js"
  GHM="waitingroom gate --session-memo 0 (Queue-it cookie) in front of the Hummingbird app, reply.js"
  H="Hummingbird app (bench --serve-static) reply.js, direct"
  PH="nginx as a reverse proxy in front of the Hummingbird app, reply.js"
  # nginx's workers (its static server and its proxy run in the same ones), for the CPU figures
  # (through cat: a process that ends between the glob and the read must not fail the script)
  NGX=$({ cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v m="$(cat "$WORK/nginx.pid")" '$4 == m {printf "%s%s", (n++ ? "," : ""), $1}')
  for round in $(seq 1 "$ROUNDS"); do
    for t in $(order "$round" "gate gateu upstream proxy gateh gatehu gatehm proxyh hummingbird"); do
      case $t in
        gate) CPU="gate:$GATE_PID nginx:$NGX" best "$G" -H "Cookie: $GATE_COOKIE" "$GATE_URL/reply.js" ;;
        gateu) CPU="gate:$GATEU_PID nginx:$NGX" best "$GU" -H "Cookie: $GATEU_COOKIE" "$GATEU_URL/reply.js" ;;
        upstream) CPU="nginx:$NGX" best "$U" -H "Cookie: $GATE_COOKIE" "$UPSTREAM/reply.js" ;;
        proxy) CPU="nginx:$NGX" best "$P" -H "Cookie: $GATE_COOKIE" "http://127.0.0.1:$PPORT/reply.js" ;;
        gateh) CPU="gate:$GATEH_PID app:$HELLO_PID" best "$GH" -H "Cookie: $GATEH_COOKIE" "$GATEH_URL/reply.js" ;;
        gatehu) CPU="gate:$GATEHU_PID app:$HELLO_PID" best "$GHU" -H "Cookie: $GATEHU_COOKIE" "$GATEHU_URL/reply.js" ;;
        gatehm) CPU="gate:$GATEHM_PID app:$HELLO_PID" best "$GHM" -H "Cookie: $GATEHM_COOKIE" "$GATEHM_URL/reply.js" ;;
        proxyh) CPU="nginx:$NGX app:$HELLO_PID" best "$PH" -H "Cookie: $GATEH_COOKIE" "http://127.0.0.1:$HPORT/reply.js" ;;
        hummingbird) CPU="app:$HELLO_PID" best "$H" -H "Cookie: $GATEH_COOKIE" "$HELLO/reply.js" ;;
      esac
    done
  done
  # The headline figure once more, in adjacent pairs: the app directly and the gate in front of
  # it, one right after the other (in turn which comes first), PAIRS times; each pair's ratio
  # sees the same machine, so a load that drifts over the minutes above (this machine's direct
  # rate moves by a third within a minute) cancels out. The median and the range are reported.
  PAIR_RATIOS=""
  for pair in $(seq 1 "$PAIRS"); do
    for t in $(order "$pair" "hummingbird gateh"); do
      case $t in
        hummingbird) PH_R=$(run -H "Cookie: $GATEH_COOKIE" "$HELLO/reply.js" | rps) ;;
        gateh) PG_R=$(run -H "Cookie: $GATEH_COOKIE" "$GATEH_URL/reply.js" | rps) ;;
      esac
    done
    echo "== pair $pair: the app directly $PH_R req/s, through the gate $PG_R req/s: $(ratio "$PG_R" "$PH_R")"
    PAIR_RATIOS+="$(ratio "$PG_R" "$PH_R") "
  done
  SUMMARY+="gate with a valid Queue-it cookie in front of nginx static: ${BEST[$G]} req/s (over a Unix socket: ${BEST[$GU]}); nginx static directly: ${BEST[$U]} req/s; nginx as a reverse proxy in front of it: ${BEST[$P]} req/s"$'\n'
  SUMMARY+="  gate/upstream $(ratio "${BEST[$G]}" "${BEST[$U]}"), over a Unix socket $(ratio "${BEST[$GU]}" "${BEST[$U]}") (goal ≥ 0.5); nginx proxy/upstream $(ratio "${BEST[$P]}" "${BEST[$U]}") (what a proxy reaches here); gate/nginx proxy $(ratio "${BEST[$G]}" "${BEST[$P]}")"$'\n'
  SUMMARY+="gate with a valid Queue-it cookie in front of a Hummingbird app: ${BEST[$GH]} req/s (over a Unix socket: ${BEST[$GHU]}; every cookie checked afresh: ${BEST[$GHM]}); the app directly: ${BEST[$H]} req/s; nginx as a reverse proxy in front of it: ${BEST[$PH]} req/s"$'\n'
  SUMMARY+="  gate/upstream $(ratio "${BEST[$GH]}" "${BEST[$H]}"), over a Unix socket $(ratio "${BEST[$GHU]}" "${BEST[$H]}"), every cookie checked $(ratio "${BEST[$GHM]}" "${BEST[$H]}") (goal ≥ 0.5); nginx proxy/upstream $(ratio "${BEST[$PH]}" "${BEST[$H]}"); gate/nginx proxy $(ratio "${BEST[$GH]}" "${BEST[$PH]}")"$'\n'
  SUMMARY+="  in $PAIRS adjacent pairs (app, gate): gate/upstream median $(echo $PAIR_RATIOS | tr ' ' '\n' | sort -n | awk '{a[NR]=$1} END {printf "%s (%s–%s)", (NR % 2 ? a[(NR+1)/2] : sprintf("%.3f", (a[NR/2]+a[NR/2+1])/2)), a[1], a[NR]}') (goal ≥ 0.5)"$'\n'
  # Where the two cores go, per request (µs of CPU, the best run of each target): on two shared
  # cores the rate through a proxy is about (wrk + app direct) / (wrk + app behind it + proxy) of
  # the direct rate, so the gate's own cost per request, next to the app's and nginx's, is the
  # figure that does not depend on how the cores were shared.
  SUMMARY+="  CPU per request (µs): app directly: ${CPU_OF[$H]}; through the gate: ${CPU_OF[$GH]}; through nginx's proxy: ${CPU_OF[$PH]}"$'\n'
  SUMMARY+="  the gate's CPU per request / the app's (direct) $(ratio "$(cpu_of "$GH" gate)" "$(cpu_of "$H" app)"); / nginx proxy's $(ratio "$(cpu_of "$GH" gate)" "$(cpu_of "$PH" nginx)")"$'\n'
fi
if [ -z "$ONLY" ] || [ "$ONLY" = authz ]; then
  # `waitingroom gate --authz` behind nginx's auth_request (deploy/nginx/waitingroom.conf.template,
  # rendered as shipped) and behind Caddy (deploy/caddy/Caddyfile as shipped), each next to the
  # same proxy forwarding to the same app with no auth step; the ledgers (SQLite, PostgreSQL)
  # next to the in-memory one; and live configuration (--config-url) under load. Every
  # comparison runs AUTHZ_PAIRS rounds of its targets back to back (A B, then B A, …): the
  # figures are each target's best run and the median (and range) of the rounds' ratios.
  command -v envsubst >/dev/null || { echo "needs envsubst (apt-get install gettext-base)"; exit 1; }
  CADDY=$(command -v caddy || true)
  PGBIN=${PGBIN:-$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -1)}
  AZ_WORKERS=${AUTHZ_NGINX_WORKERS:-1}
  AZ_PAIRS=${AUTHZ_PAIRS:-4}
  LIVE_DURATION=${LIVE_DURATION:-20}
  TOKENS=${TOKENS:-1000}
  AZ_PARTS=" ${AUTHZ_PARTS:-nginx caddy ledgers live} "
  AZ_KEEPALIVE=${AUTHZ_KEEPALIVE:-}
  declare -A AZR CPU_RUNS
  # free_port: a loopback port nothing answers on (nginx and Caddy cannot be told port 0), below
  # the ephemeral range (a port some connection uses as its own cannot be bound either)
  AZ_USED=" "
  free_port() {
    local p
    for _ in $(seq 1 200); do
      p=$((10000 + RANDOM % 22000))
      case $AZ_USED in *" $p "*) continue ;; esac
      if ! (exec 3<>"/dev/tcp/127.0.0.1/$p") 2>/dev/null; then AZ_USED+="$p "; echo "$p"; return 0; fi
    done
    return 1
  }
  # workers_of PID: its children (through cat: a process that ends meanwhile must not fail the script)
  workers_of() { { cat /proc/[0-9]*/stat 2>/dev/null || true; } | awk -v m="$1" '$4 == m {printf "%s%s", (n++ ? "," : ""), $1}'; }
  mint() {
    curl -s -X POST -H 'Content-Type: application/json' -d '{"customerId":"demo","waitingRoomId":"sale","expiresIn":3600}' \
      "$1/_emulator/queueit/tokens" | sed -n 's/.*"token":"\([^"]*\)".*/\1/p'
  }
  median_range() {
    echo "$1" | tr ' ' '\n' | grep -v '^$' | sort -n | awk '{a[NR]=$1} END {if (NR == 0) {printf "n/a"; exit}
      printf "%s (%s–%s)", (NR % 2 ? a[(NR+1)/2] : sprintf("%.3f", (a[NR/2]+a[NR/2+1])/2)), a[1], a[NR]}'
  }
  # start_az_gate NAME OPTION…: `waitingroom gate --authz` on a free port (AZ_GATE_ENV: variables
  # for it); sets NAME_PID, NAME_ADDR (host:port) and NAME_EMU (its emulator, with --emulator).
  start_az_gate() {
    local name=$1 out="$WORK/azgate-$1.out" log="$WORK/azgate-$1.log" pid url
    shift
    # shellcheck disable=SC2086
    # AUTHZ_GATE_SOCKET=1: the gate on a socket file (`--listen unix:PATH`, nginx `server unix:PATH`)
    local listen=127.0.0.1:0
    [ -n "${AUTHZ_GATE_SOCKET:-}" ] && listen="unix:$WORK/azgate-$name.sock"
    env ${AZ_GATE_ENV:-} "$BIN" gate --authz --vendor queueit --listen "$listen" ${AUTHZ_GATE_ARGS:-} "$@" >"$out" 2>"$log" &
    pid=$!
    GATE_PIDS="${GATE_PIDS:-} $pid"
    for _ in $(seq 1 150); do grep -q "listening on" "$out" 2>/dev/null && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
    if [ -n "${AUTHZ_GATE_SOCKET:-}" ]; then
      # nginx's workers run as another user: the file must be theirs to open (deploy/README.md)
      chmod 666 "$WORK/azgate-$name.sock" 2>/dev/null || true
      grep -q "listening on unix:" "$out" && url="$listen" || url=""
    else
      url=$(sed -n 's/.*listening on http:\/\/\([^ ,]*\).*/\1/p' "$out")
    fi
    [ -n "$url" ] || { echo "the gate ($name) did not start:"; cat "$out" "$log"; exit 1; }
    eval "${name}_PID=$pid; ${name}_ADDR=$url"
    eval "${name}_EMU=\$(sed -n 's/^emulator: \([^ ]*\).*/\1/p' \"\$out\")"
    echo "gate --authz ($name, $BUILD): http://$url ${AUTHZ_GATE_ARGS:-} $*"
  }
  # start_az_nginx NAME APP GATE PORT [DIRECT_PORT]: nginx (AZ_WORKERS workers) in DIR=$WORK/ngx-NAME
  # with the wrapper main configuration of deploy/README.md ("Run it without root"; access_log
  # off for the benchmark) including the template rendered with envsubst on PORT, and with
  # DIRECT_PORT, a plain proxy to the same APP in the same workers: the template's app location
  # and upstream settings (keepalive 16, HTTP/1.1, the same headers) without the auth_request.
  # Sets NAME_PID (the master) and NAME_W (its workers).
  start_az_nginx() {
    local name=$1 app=$2 gate=$3 port=$4 direct=${5:-} dir="$WORK/ngx-$1"
    mkdir -p "$dir"
    WAITINGROOM_LISTEN=127.0.0.1:$port WAITINGROOM_UPSTREAM=$app WAITINGROOM_GATE=$gate \
      envsubst '${WAITINGROOM_LISTEN} ${WAITINGROOM_UPSTREAM} ${WAITINGROOM_GATE}' \
      <deploy/nginx/waitingroom.conf.template >"$dir/waitingroom.conf"
    # AUTHZ_KEEPALIVE: an experiment, not the shipped file: both upstreams keep N idle connections
    [ -n "$AZ_KEEPALIVE" ] && sed -i "s/^\( *keepalive\) 16;/\1 $AZ_KEEPALIVE;/" "$dir/waitingroom.conf"
    : >"$dir/direct.conf"
    if [ -n "$direct" ]; then
      cat >"$dir/direct.conf" <<NGX
upstream waitingroom_direct_app {
    server $app;
    keepalive ${AZ_KEEPALIVE:-16};
}
server {
    listen 127.0.0.1:$direct;
    server_name _;
    absolute_redirect off;
    client_max_body_size 1m;
    location / {
        proxy_pass http://waitingroom_direct_app;
        proxy_http_version 1.1;
        proxy_set_header Connection "";
        proxy_set_header Host \$http_host;
        proxy_set_header X-Forwarded-Host \$http_host;
        proxy_set_header X-Forwarded-Proto \$scheme;
        proxy_set_header X-Forwarded-For \$remote_addr;
        proxy_set_header X-Real-IP \$remote_addr;
        proxy_set_header X-Original-URL "";
        proxy_set_header X-Original-URI "";
        proxy_set_header X-Rewrite-URL "";
    }
}
NGX
    fi
    cat >"$dir/nginx.conf" <<NGX
pid $dir/nginx.pid;
error_log $dir/error.log notice;
worker_processes $AZ_WORKERS;
events {
    worker_connections 1024;
}
http {
    access_log off;
    keepalive_requests 1000000;
    client_body_temp_path $dir/client_body_temp;
    proxy_temp_path $dir/proxy_temp;
    fastcgi_temp_path $dir/fastcgi_temp;
    uwsgi_temp_path $dir/uwsgi_temp;
    scgi_temp_path $dir/scgi_temp;
    include $dir/waitingroom.conf;
    include $dir/direct.conf;
}
NGX
    "$NGINX" -p "$dir" -e "$dir/error.log" -c "$dir/nginx.conf" 2>>"$dir/start.log" || { echo "nginx ($name) did not start:"; cat "$dir/start.log"; exit 1; }
    for _ in $(seq 1 50); do [ -s "$dir/nginx.pid" ] && break; sleep 0.1; done
    # its workers, once they are there (a busy machine starts them late)
    local master workers=""
    master=$(cat "$dir/nginx.pid")
    for _ in $(seq 1 100); do workers=$(workers_of "$master"); [ -n "$workers" ] && break; sleep 0.1; done
    [ -n "$workers" ] || { echo "nginx ($name) started no workers"; cat "$dir/error.log"; exit 1; }
    eval "${name}_PID=$master; ${name}_W=$workers"
    echo "nginx ($name, $AZ_WORKERS workers): template on 127.0.0.1:$port${direct:+, plain proxy on 127.0.0.1:$direct}, app $app, gate $gate"
  }
  # az_cookie NAME EMU PORT: a token minted by EMU, through the start route on PORT (nginx or
  # Caddy), buys the gate's cookie (NAME_COOKIE); it is checked: 200 with it, 302 without.
  az_cookie() {
    local name=$1 emu=$2 port=$3 token cookie status
    token=$(mint "$emu")
    [ -n "$token" ] || { echo "$emu minted no token"; exit 1; }
    cookie=$(curl -s -o /dev/null -D - "http://127.0.0.1:$port/.waitingroom/start?rd=http://127.0.0.1:$port/reply.js?queueittoken=$token" \
      | tr -d '\r' | sed -n 's/^[Ss]et-[Cc]ookie: \(QueueITAccepted[^;]*\).*/\1/p' | head -1)
    [ -n "$cookie" ] || { echo "the start route on $port set no cookie for a valid token"; exit 1; }
    status=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $cookie" "http://127.0.0.1:$port/reply.js")
    [ "$status" = 200 ] || { echo "127.0.0.1:$port answered $status, not 200, with the gate's cookie"; exit 1; }
    status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$port/reply.js")
    [ "$status" = 302 ] || { echo "127.0.0.1:$port answered $status, not 302, without a cookie: is the gate asked?"; exit 1; }
    eval "${name}_COOKIE=\$cookie"
  }
  # az_compare KEY TARGET…: AZ_PAIRS rounds of the targets (functions az_TARGET, each one `best`
  # run), forward then backward; each round's rate of every other target ÷ the first target's is
  # added to AZR[KEY:TARGET].
  az_compare() {
    local key=$1 base=$2 round t
    shift
    local -A got
    for round in $(seq 1 "$AZ_PAIRS"); do
      for t in $(order "$round" "$*"); do "az_$t"; got[$t]=$LAST_RPS; CPU_RUNS[$LAST_LABEL]="${CPU_RUNS[$LAST_LABEL]:-}$LAST_CPU|"; done
      for t in "$@"; do
        [ "$t" = "$base" ] && continue
        AZR[$key:$t]="${AZR[$key:$t]:-}$(ratio "${got[$t]}" "${got[$base]}") "
        echo "== $key round $round: $t ÷ $base $(ratio "${got[$t]}" "${got[$base]}")"
      done
    done
  }
  azbest() { echo "${BEST[$1]:-0}"; }
  # cpu_median LABEL: each process's CPU time per request (µs), the median of LABEL's runs
  cpu_median() {
    echo "${CPU_RUNS[$1]:-}" | tr '|' '\n' | grep -v '^$' | tr ',' '\n' | awk 'NF == 2 {
        if (!($1 in n)) order[++k] = $1
        v[$1, ++n[$1]] = $2 + 0 }
      END {
        for (j = 1; j <= k; j++) {
          name = order[j]; m = n[name]
          for (a = 1; a <= m; a++) for (b = a + 1; b <= m; b++) if (v[name, b] < v[name, a]) { x = v[name, a]; v[name, a] = v[name, b]; v[name, b] = x }
          med = m % 2 ? v[name, (m + 1) / 2] : (v[name, m / 2] + v[name, m / 2 + 1]) / 2
          printf "%s%s %.1f", (j > 1 ? ", " : ""), name, med
        }
      }'
  }
  # best-of ratio and the median of the rounds: "best A/B x.xxx, median m (lo–hi) of N rounds"
  az_figure() { echo "best-of $(ratio "$(azbest "$2")" "$(azbest "$3")"), rounds' median $(median_range "${AZR[$1]:-}") of $AZ_PAIRS"; }

  HB=${HELLO#http://}
  # the static nginx's workers (the nginx-static app), for the CPU figures
  NGX=$(workers_of "$(cat "$WORK/nginx.pid")")
  P_HBA=$(free_port); P_HBD=$(free_port); P_NSA=$(free_port); P_NSD=$(free_port)
  P_CA=$(free_port); P_CD=$(free_port); P_SQL=$(free_port); P_PG=$(free_port); P_LIVE=$(free_port); P_FIX=$(free_port)
  # One gate (in-memory ledger, embedded emulator) answers nginx for both apps and Caddy.
  start_az_gate GZ --emulator --allowed-host "127.0.0.1:$P_HBA" --allowed-host "127.0.0.1:$P_NSA" --allowed-host "127.0.0.1:$P_CA"
  start_az_nginx NHB "$HB" "$GZ_ADDR" "$P_HBA" "$P_HBD"
  start_az_nginx NNS "127.0.0.1:$NPORT" "$GZ_ADDR" "$P_NSA" "$P_NSD"
  az_cookie GZ "$GZ_EMU" "$P_HBA"
  # a request the gate did not see: the direct proxies pass it (the cookie is sent all the same)
  for port in "$P_HBD" "$P_NSD"; do
    status=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $GZ_COOKIE" "http://127.0.0.1:$port/reply.js")
    [ "$status" = 200 ] || { echo "the plain proxy on $port answered $status"; exit 1; }
  done
  for port in "$P_HBA" "$P_HBD" "$P_NSA" "$P_NSD"; do wrk -t1 -c4 -d2s -H "Cookie: $GZ_COOKIE" "http://127.0.0.1:$port/reply.js" >/dev/null; done

  L_HBD="authz: nginx plain proxy → Hummingbird app, reply.js"
  L_HBA="authz: nginx auth_request + gate --authz → Hummingbird app, reply.js"
  L_NSD="authz: nginx plain proxy → nginx static, reply.js"
  L_NSA="authz: nginx auth_request + gate --authz → nginx static, reply.js"
  az_hbd() { CPU="nginx:$NHB_W app:$HELLO_PID" best "$L_HBD" -H "Cookie: $GZ_COOKIE" "http://127.0.0.1:$P_HBD/reply.js"; }
  az_hba() { CPU="nginx:$NHB_W gate:$GZ_PID app:$HELLO_PID" best "$L_HBA" -H "Cookie: $GZ_COOKIE" "http://127.0.0.1:$P_HBA/reply.js"; }
  az_nsd() { CPU="nginx:$NNS_W static:$NGX" best "$L_NSD" -H "Cookie: $GZ_COOKIE" "http://127.0.0.1:$P_NSD/reply.js"; }
  az_nsa() { CPU="nginx:$NNS_W gate:$GZ_PID static:$NGX" best "$L_NSA" -H "Cookie: $GZ_COOKIE" "http://127.0.0.1:$P_NSA/reply.js"; }
  SUMMARY+="authz (gate --authz, in-memory ledger${AUTHZ_GATE_ARGS:+, $AUTHZ_GATE_ARGS}; nginx from the template $([ -n "$AZ_KEEPALIVE" ] && echo "with keepalive $AZ_KEEPALIVE (NOT as shipped)" || echo "as shipped"), worker_processes $AZ_WORKERS; valid Queue-it cookie; goal ≥ 0.7; CPU figures: the median of the runs):"$'\n'
  if [[ $AZ_PARTS == *" nginx "* ]]; then
    az_compare hb hbd hba
    az_compare ns nsd nsa
    SUMMARY+="  Hummingbird app: nginx + gate $(azbest "$L_HBA") req/s, nginx plain proxy $(azbest "$L_HBD") req/s: $(az_figure hb:hba "$L_HBA" "$L_HBD")"$'\n'
    SUMMARY+="    CPU per request (µs): plain proxy: $(cpu_median "$L_HBD"); with the gate: $(cpu_median "$L_HBA")"$'\n'
    SUMMARY+="  nginx static app: nginx + gate $(azbest "$L_NSA") req/s, nginx plain proxy $(azbest "$L_NSD") req/s: $(az_figure ns:nsa "$L_NSA" "$L_NSD")"$'\n'
    SUMMARY+="    CPU per request (µs): plain proxy: $(cpu_median "$L_NSD"); with the gate: $(cpu_median "$L_NSA")"$'\n'
  fi

  # Caddy: deploy/caddy/Caddyfile as shipped, next to a Caddyfile with only the app's
  # reverse_proxy of that file (the same header_up lines); each Caddy its own XDG folders.
  if [[ $AZ_PARTS != *" caddy "* ]]; then
    :
  elif [ -n "$CADDY" ]; then
    start_caddy() {
      local name=$1 file=$2 port=$3 dir="$WORK/caddy-$1" pid
      mkdir -p "$dir/config" "$dir/data"
      WAITINGROOM_LISTEN=":$port" WAITINGROOM_UPSTREAM="$HB" WAITINGROOM_GATE="$GZ_ADDR" XDG_CONFIG_HOME="$dir/config" XDG_DATA_HOME="$dir/data" \
        HOME="$dir" "$CADDY" run --config "$file" --adapter caddyfile >"$dir/caddy.log" 2>&1 &
      pid=$!
      EXTRA_PIDS="${EXTRA_PIDS:-} $pid"
      for _ in $(seq 1 100); do curl -s -o /dev/null "http://127.0.0.1:$port/" && break; kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
      kill -0 "$pid" 2>/dev/null || { echo "Caddy ($name) did not start:"; cat "$dir/caddy.log"; exit 1; }
      eval "${name}_PID=$pid"
      echo "caddy ($name): :$port ($file)"
    }
    cat >"$WORK/Caddyfile.direct" <<'CADDY'
{
	admin off
	auto_https off
}
http://{$WAITINGROOM_LISTEN} {
	reverse_proxy {$WAITINGROOM_UPSTREAM} {
		header_up -X-Original-URL
		header_up -X-Original-URI
		header_up -X-Rewrite-URL
		header_up X-Real-IP {remote_host}
	}
}
CADDY
    start_caddy CA deploy/caddy/Caddyfile "$P_CA"
    start_caddy CD "$WORK/Caddyfile.direct" "$P_CD"
    status=$(curl -s -o /dev/null -w '%{http_code}' -H "Cookie: $GZ_COOKIE" "http://127.0.0.1:$P_CA/reply.js")
    [ "$status" = 200 ] || { echo "Caddy with the gate answered $status with the cookie"; exit 1; }
    status=$(curl -s -o /dev/null -w '%{http_code}' "http://127.0.0.1:$P_CA/reply.js")
    [ "$status" = 302 ] || { echo "Caddy with the gate answered $status without a cookie"; exit 1; }
    for port in "$P_CA" "$P_CD"; do wrk -t1 -c4 -d2s -H "Cookie: $GZ_COOKIE" "http://127.0.0.1:$port/reply.js" >/dev/null; done
    L_CD="authz: Caddy plain reverse_proxy → Hummingbird app, reply.js"
    L_CA="authz: Caddy (deploy/caddy/Caddyfile) + gate --authz → Hummingbird app, reply.js"
    az_cd() { CPU="caddy:$CD_PID app:$HELLO_PID" best "$L_CD" -H "Cookie: $GZ_COOKIE" "http://127.0.0.1:$P_CD/reply.js"; }
    az_ca() { CPU="caddy:$CA_PID gate:$GZ_PID app:$HELLO_PID" best "$L_CA" -H "Cookie: $GZ_COOKIE" "http://127.0.0.1:$P_CA/reply.js"; }
    az_compare caddy cd ca
    SUMMARY+="  Caddy, Hummingbird app: Caddy + gate $(azbest "$L_CA") req/s, Caddy plain reverse_proxy $(azbest "$L_CD") req/s: $(az_figure caddy:ca "$L_CA" "$L_CD")"$'\n'
    SUMMARY+="    CPU per request (µs): plain proxy: $(cpu_median "$L_CD"); with the gate: $(cpu_median "$L_CA")"$'\n'
    # Caddy's own processes are idle from here on
    for pid in $CA_PID $CD_PID; do kill "$pid" 2>/dev/null || true; done
  else
    SUMMARY+="  Caddy: skipped (no caddy; Debian: apt-get install caddy)"$'\n'
  fi

  if [[ $AZ_PARTS == *" ledgers "* ]]; then
    # Ledgers: the same gate (auth mode) with --state SQLite and PostgreSQL next to the in-memory
    # one: (a) behind nginx (the template) with the cookie, the Hummingbird app behind; (b) the
    # start route asked directly, TOKENS minted tokens in turn (each used once, then replayed: the
    # replay is found in the ledger and answered with the queue's 302).
    PG_URL=""
    if [ -x "$PGBIN/initdb" ]; then
      PGDIR="$WORK/pg"
      PG_PORT=$(free_port)
      mkdir -p "$PGDIR"
      PG_AS=()
      if [ "$(id -u)" = 0 ]; then chown postgres:postgres "$PGDIR"; PG_AS=(runuser -u postgres --); fi
      "${PG_AS[@]}" "$PGBIN/initdb" -D "$PGDIR/data" -A trust -U postgres -E UTF8 --no-locale --no-sync >"$WORK/pg-initdb.log" 2>&1 \
        || { echo "initdb failed:"; cat "$WORK/pg-initdb.log"; exit 1; }
      PG_STOP="${PG_AS[*]} $PGBIN/pg_ctl -D $PGDIR/data -m immediate -w stop"
      "${PG_AS[@]}" "$PGBIN/pg_ctl" -D "$PGDIR/data" -l "$PGDIR/server.log" -w \
        -o "-p $PG_PORT -k $PGDIR -c listen_addresses=127.0.0.1" start >"$WORK/pg-start.log" 2>&1 \
        || { echo "pg_ctl start failed:"; cat "$WORK/pg-start.log" "$PGDIR/server.log"; exit 1; }
      "${PG_AS[@]}" "$PGBIN/createdb" -h "$PGDIR" -p "$PG_PORT" -U postgres bench
      PG_URL="postgres://postgres@127.0.0.1:$PG_PORT/bench?sslmode=disable"
      PG_MASTER=$(head -1 "$PGDIR/data/postmaster.pid")
      echo "PostgreSQL ($("$PGBIN/postgres" --version | awk '{print $NF}')): $PG_URL"
    else
      echo "no PostgreSQL binaries (PGBIN=$PGBIN): the PostgreSQL ledger is skipped"
    fi
    pg_pids() { echo "$PG_MASTER,$(workers_of "$PG_MASTER")" | sed 's/,$//'; }
    start_az_gate GZS --emulator --allowed-host "127.0.0.1:$P_SQL" --state "$WORK/ledger.sqlite"
    start_az_nginx NSQL "$HB" "$GZS_ADDR" "$P_SQL"
    az_cookie GZS "$GZS_EMU" "$P_SQL"
    LEDGERS="mem sql"
    if [ -n "$PG_URL" ]; then
      start_az_gate GZP --emulator --allowed-host "127.0.0.1:$P_PG" --state "$PG_URL"
      start_az_nginx NPG "$HB" "$GZP_ADDR" "$P_PG"
      az_cookie GZP "$GZP_EMU" "$P_PG"
      LEDGERS="mem sql pg"
    fi
    wrk -t1 -c4 -d2s -H "Cookie: $GZS_COOKIE" "http://127.0.0.1:$P_SQL/reply.js" >/dev/null
    [ -n "$PG_URL" ] && wrk -t1 -c4 -d2s -H "Cookie: $GZP_COOKIE" "http://127.0.0.1:$P_PG/reply.js" >/dev/null
    L_CMEM="authz ledger (cookie): nginx + gate (in memory) → Hummingbird app"
    L_CSQL="authz ledger (cookie): nginx + gate --state SQLite → Hummingbird app"
    L_CPG="authz ledger (cookie): nginx + gate --state PostgreSQL → Hummingbird app"
    az_cmem() { CPU="nginx:$NHB_W gate:$GZ_PID app:$HELLO_PID" best "$L_CMEM" -H "Cookie: $GZ_COOKIE" "http://127.0.0.1:$P_HBA/reply.js"; }
    az_csql() { CPU="nginx:$NSQL_W gate:$GZS_PID app:$HELLO_PID" best "$L_CSQL" -H "Cookie: $GZS_COOKIE" "http://127.0.0.1:$P_SQL/reply.js"; }
    az_cpg() { CPU="nginx:$NPG_W gate:$GZP_PID app:$HELLO_PID postgres:$(pg_pids)" best "$L_CPG" -H "Cookie: $GZP_COOKIE" "http://127.0.0.1:$P_PG/reply.js"; }
    # shellcheck disable=SC2086
    az_compare ledgerc $(echo $LEDGERS | sed 's/\([a-z]*\)/c\1/g')
    # (b) the tokens: minted once (every gate's emulator signs with customer demo's secret key),
    # requested on each gate's start route by a wrk script that cycles through them (each thread
    # from its own offset) and counts the answers: 302 back to rd (first use), 302 to the queue
    # (a replay), anything else.
    { for _ in $(seq 1 "$TOKENS"); do echo "url = \"$GZ_EMU/_emulator/queueit/tokens\""; done; } >"$WORK/mint.curl"
    curl -s -X POST -H 'Content-Type: application/json' -d '{"customerId":"demo","waitingRoomId":"sale","expiresIn":3600}' -K "$WORK/mint.curl" \
      | grep -o '"token":"[^"]*"' | sed 's/"token":"\([^"]*\)"/\1/' >"$WORK/tokens.txt"
    [ "$(sort -u "$WORK/tokens.txt" | wc -l)" = "$TOKENS" ] || { echo "minted $(sort -u "$WORK/tokens.txt" | wc -l) distinct tokens, not $TOKENS"; exit 1; }
    # tokens_lua PORT: the script for a gate that answers for 127.0.0.1:PORT
    tokens_lua() {
      cat >"$WORK/tokens-$1.lua" <<LUA
  local tokens = {}
  for line in io.lines("$WORK/tokens.txt") do tokens[#tokens + 1] = line end
  local n = #tokens
  local prefix = "/.waitingroom/start?rd=http%3A%2F%2F127.0.0.1%3A$1%2Fshop%3Fqueueittoken%3D"
  local back = "http://127.0.0.1:$1/shop"
  local threads, made = {}, 0
  function setup(thread) thread:set("id", made); made = made + 1; table.insert(threads, thread) end
  local i = 0
  first, replay, other = 0, 0, 0
  function init(args) i = math.floor((id or 0) * n / 2) end
  function request() i = i % n + 1; return wrk.format("GET", prefix .. tokens[i]) end
  function response(status, headers, body)
    local location = headers["Location"] or headers["location"] or ""
    if status == 302 and location == back then first = first + 1
    elseif status == 302 and location ~= "" then replay = replay + 1
    else other = other + 1 end
  end
  function done(summary, latency, requests)
    local f, r, o = 0, 0, 0
    for _, t in ipairs(threads) do f = f + t:get("first"); r = r + t:get("replay"); o = o + t:get("other") end
    io.write(string.format("start-route answers: first use %d, replay %d, other %d\n", f, r, o))
  end
LUA
    }
    # check_tokens NAME PORT ADDR: the first token's first use goes back to rd, its second to the queue
    check_tokens() {
      local first again token
      token=$(head -1 "$WORK/tokens.txt")
      first=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "http://$3/.waitingroom/start?rd=http%3A%2F%2F127.0.0.1%3A$2%2Fshop%3Fqueueittoken%3D$token")
      again=$(curl -s -o /dev/null -w '%{http_code} %{redirect_url}' "http://$3/.waitingroom/start?rd=http%3A%2F%2F127.0.0.1%3A$2%2Fshop%3Fqueueittoken%3D$token")
      echo "$1: a token's first use: $first; again: ${again%%\?*}…"
      [ "$first" = "302 http://127.0.0.1:$2/shop" ] && [ "${again%% *}" = 302 ] && [ "$again" != "$first" ] \
        || { echo "$1: unexpected start-route answers"; exit 1; }
    }
    tokens_lua "$P_HBA"; tokens_lua "$P_SQL"; check_tokens memory "$P_HBA" "$GZ_ADDR"; check_tokens sqlite "$P_SQL" "$GZS_ADDR"
    [ -n "$PG_URL" ] && { tokens_lua "$P_PG"; check_tokens postgres "$P_PG" "$GZP_ADDR"; }
    L_TMEM="authz ledger (tokens): start route, gate in memory"
    L_TSQL="authz ledger (tokens): start route, gate --state SQLite"
    L_TPG="authz ledger (tokens): start route, gate --state PostgreSQL"
    # the answers each run's script counted, summed per target: "first replay other"
    declare -A TOK_ANSWERS
    tok_count() {
      local sum
      sum=$(echo "$LAST_OUT" | awk -v prev="${TOK_ANSWERS[$1]:-0 0 0}" '/start-route answers/ {f = $5 + 0; r = $7 + 0; o = $9 + 0}
        END {split(prev, p, " "); printf "%d %d %d", p[1] + f, p[2] + r, p[3] + o}')
      TOK_ANSWERS[$1]=$sum
    }
    tok_text() { echo "${TOK_ANSWERS[$1]:-0 0 0}" | awk '{printf "%d first uses, %d replays, %d other", $1, $2, $3}'; }
    az_tmem() { CPU="gate:$GZ_PID" best "$L_TMEM" -s "$WORK/tokens-$P_HBA.lua" "http://$GZ_ADDR/"; tok_count "$L_TMEM"; }
    az_tsql() { CPU="gate:$GZS_PID" best "$L_TSQL" -s "$WORK/tokens-$P_SQL.lua" "http://$GZS_ADDR/"; tok_count "$L_TSQL"; }
    az_tpg() { CPU="gate:$GZP_PID postgres:$(pg_pids)" best "$L_TPG" -s "$WORK/tokens-$P_PG.lua" "http://$GZP_ADDR/"; tok_count "$L_TPG"; }
    # shellcheck disable=SC2086
    az_compare ledgert $(echo $LEDGERS | sed 's/\([a-z]*\)/t\1/g')
    SUMMARY+="  ledgers (a) valid cookie behind nginx (the ledger is not read; expect ~1.0): in memory $(azbest "$L_CMEM") req/s, SQLite $(azbest "$L_CSQL") req/s${PG_URL:+, PostgreSQL $(azbest "$L_CPG") req/s}"$'\n'
    SUMMARY+="    SQLite ÷ memory: $(az_figure ledgerc:csql "$L_CSQL" "$L_CMEM")"$'\n'
    [ -n "$PG_URL" ] && SUMMARY+="    PostgreSQL ÷ memory: $(az_figure ledgerc:cpg "$L_CPG" "$L_CMEM")"$'\n'
    SUMMARY+="    CPU per request (µs): memory: $(cpu_median "$L_CMEM"); SQLite: $(cpu_median "$L_CSQL")${PG_URL:+; PostgreSQL: $(cpu_median "$L_CPG")}"$'\n'
    SUMMARY+="  ledgers (b) $TOKENS tokens on the start route, each used once then replayed (the ledger read on every request): in memory $(azbest "$L_TMEM") req/s, SQLite $(azbest "$L_TSQL") req/s${PG_URL:+, PostgreSQL $(azbest "$L_TPG") req/s}"$'\n'
    SUMMARY+="    SQLite ÷ memory: $(az_figure ledgert:tsql "$L_TSQL" "$L_TMEM")"$'\n'
    [ -n "$PG_URL" ] && SUMMARY+="    PostgreSQL ÷ memory: $(az_figure ledgert:tpg "$L_TPG" "$L_TMEM")"$'\n'
    SUMMARY+="    CPU per request (µs): memory: $(cpu_median "$L_TMEM"); SQLite: $(cpu_median "$L_TSQL")${PG_URL:+; PostgreSQL: $(cpu_median "$L_TPG")}"$'\n'
    SUMMARY+="    answers, all runs: memory $(tok_text "$L_TMEM"); SQLite $(tok_text "$L_TSQL")${PG_URL:+; PostgreSQL $(tok_text "$L_TPG")}"$'\n'
    # the ledger gates are idle from here on
    for pid in $GZS_PID ${GZP_PID:-} $NSQL_PID ${NPG_PID:-}; do kill "$pid" 2>/dev/null || true; done
    [ -n "${PG_STOP:-}" ] && { $PG_STOP >/dev/null 2>&1 || true; PG_STOP=""; }

  fi
  if [[ $AZ_PARTS == *" live "* ]]; then
    # Live configuration: a gate (no embedded emulator: customer demo, its secret key and API key
    # from the environment) pulling --config-url every 2 s from a separate `waitingroom emulate`,
    # while a loop publishes a new version every second (the queueing integration's trigger
    # alternating between "/" and "/reply", both matching /reply.js); next to the same gate reading
    # the same configuration from a file (no pulling). Both behind the template, the Hummingbird app
    # behind, LIVE_DURATION s per run; the loop runs through both.
    "$BIN" emulate --port 0 --json >"$WORK/emulate5.out" 2>"$WORK/emulate5.log" &
    EXTRA_PIDS="${EXTRA_PIDS:-} $!"
    for _ in $(seq 1 100); do grep -q baseURL "$WORK/emulate5.out" 2>/dev/null && break; sleep 0.1; done
    EMU5=$(sed -n 's/.*"baseURL":"\([^"]*\)".*/\1/p' "$WORK/emulate5.out")
    [ -n "$EMU5" ] || { echo "waitingroom emulate did not start:"; cat "$WORK/emulate5.log"; exit 1; }
    cat >"$WORK/live-config.tmpl" <<'JSON'
  {"Description": "bench/wrk.sh live configuration", "CustomerId": "demo", "AccountId": "demo", "Version": VERSION,
   "Integrations": [
    {"Name": "static", "ActionType": "Ignore", "EventId": "", "QueueDomain": "",
     "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
       {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/static/", "IsNegative": false, "IsIgnoreCase": true}]}]},
    {"Name": "everything", "ActionType": "Queue", "EventId": "sale", "QueueDomain": "", "CookieDomain": "", "ExtendCookieValidity": true,
     "CookieValidityMinute": 20, "RedirectLogic": "AllowTParameter", "ForcedTargetUrl": "",
     "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
       {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "VALUE", "IsNegative": false, "IsIgnoreCase": false}]}]}
   ]}
JSON
    LIVE_VERSION=10
    publish() {  # publish VALUE: PUT the configuration with this trigger value, then a new version
      local put post
      put=$(sed -e "s|VERSION|$LIVE_VERSION|" -e "s|VALUE|$1|" "$WORK/live-config.tmpl" | curl -s -o /dev/null -w '%{http_code}' -X PUT \
        -H 'Content-Type: application/json' --data-binary @- "$EMU5/_emulator/queueit/customers/demo/integrationconfig")
      post=$(curl -s -o /dev/null -w '%{http_code}' -X POST "$EMU5/_emulator/queueit/customers/demo/integrationconfig/version")
      LIVE_VERSION=$((LIVE_VERSION + 1))
      echo "$put $post"
    }
    [ "$(publish /)" = "200 200" ] || { echo "the emulator refused the configuration"; exit 1; }
    curl -s -H 'api-key: demo-api-key' "$EMU5/status/integrationconfig/secure/demo" >"$WORK/live-config.json"
    AZ_GATE_ENV="QUEUEIT_SECRET_KEY=demo-secret-key-0123456789 QUEUEIT_API_KEY=demo-api-key WR_LOG_LEVEL=info"
    start_az_gate GZL --customer demo --allowed-host "127.0.0.1:$P_LIVE" \
      --config-url "$EMU5/status/integrationconfig/secure/demo" --config-interval 2
    start_az_gate GZF --customer demo --allowed-host "127.0.0.1:$P_FIX" --config "$WORK/live-config.json"
    AZ_GATE_ENV=""
    start_az_nginx NLIVE "$HB" "$GZL_ADDR" "$P_LIVE"
    start_az_nginx NFIX "$HB" "$GZF_ADDR" "$P_FIX"
    az_cookie GZL "$EMU5" "$P_LIVE"
    az_cookie GZF "$EMU5" "$P_FIX"
    for port in "$P_LIVE" "$P_FIX"; do wrk -t1 -c4 -d2s -H "Cookie: $GZL_COOKIE" "http://127.0.0.1:$port/reply.js" >/dev/null; done
    ( v=0; while :; do publish "$([ $((v % 2)) = 0 ] && echo /reply || echo /)" >>"$WORK/live-loop.log"; v=$((v + 1)); sleep 1; done ) &
    LOOP_PID=$!
    EXTRA_PIDS="${EXTRA_PIDS:-} $LOOP_PID"
    L_LIVE="authz live: nginx + gate --config-url (every 2 s; a new version every 1 s) → Hummingbird app"
    L_FIX="authz live: nginx + gate --config FILE (no pulling) → Hummingbird app"
    SWAPS=""
    az_live() {
      local before after
      before=$(grep -c "gate configuration in force" "$WORK/azgate-GZL.log" || true)
      DURATION=$LIVE_DURATION CPU="nginx:$NLIVE_W gate:$GZL_PID app:$HELLO_PID" best "$L_LIVE" -H "Cookie: $GZL_COOKIE" "http://127.0.0.1:$P_LIVE/reply.js"
      after=$(grep -c "gate configuration in force" "$WORK/azgate-GZL.log" || true)
      echo "configurations put in force during the run: $((after - before))"
      SWAPS+="$((after - before)) "
    }
    az_fix() { DURATION=$LIVE_DURATION CPU="nginx:$NFIX_W gate:$GZF_PID app:$HELLO_PID" best "$L_FIX" -H "Cookie: $GZF_COOKIE" "http://127.0.0.1:$P_FIX/reply.js"; }
    az_compare live fix live
    kill "$LOOP_PID" 2>/dev/null || true
    wait "$LOOP_PID" 2>/dev/null || true
    LOOP_BAD=$(grep -vc '^200 200$' "$WORK/live-loop.log" || true)
    PULL_FAIL=$(grep -c "gate configuration not loaded" "$WORK/azgate-GZL.log" || true)
    SUMMARY+="  live configuration: pulling $(azbest "$L_LIVE") req/s, not pulling $(azbest "$L_FIX") req/s: $(az_figure live:live "$L_LIVE" "$L_FIX")"$'\n'
    SUMMARY+="    CPU per request (µs): pulling: $(cpu_median "$L_LIVE"); not pulling: $(cpu_median "$L_FIX")"$'\n'
    SUMMARY+="    $LIVE_DURATION s runs: configurations put in force per run: ${SWAPS% } ($(wc -l <"$WORK/live-loop.log") versions published, $LOOP_BAD failed; $PULL_FAIL failed pulls); non-2xx answers: ${NON2XX[$L_LIVE]:-0} (not pulling: ${NON2XX[$L_FIX]:-0}); socket errors: ${SOCKERR[$L_LIVE]:-0} (not pulling: ${SOCKERR[$L_FIX]:-0})"$'\n'
  fi
  # Anything nginx, Caddy, the gates or PostgreSQL complained about, and every non-2xx answer.
  AZ_ERRORS=""
  for dir in "$WORK"/ngx-*; do
    n=$(grep -cE '\[(warn|error|crit|alert|emerg)\]' "$dir/error.log" 2>/dev/null || true)
    [ "${n:-0}" != 0 ] && AZ_ERRORS+="nginx ${dir##*/ngx-}: $n lines ($(grep -E '\[(warn|error|crit|alert|emerg)\]' "$dir/error.log" | sed -e 's/^[^]]*\] [0-9#]*: [*0-9]* //' -e 's/, client:.*//' | sort | uniq -c | sort -rn | head -3 | tr -s ' ' | tr '\n' ';')) "
  done
  for dir in "$WORK"/caddy-*; do
    [ -d "$dir" ] || continue
    n=$(grep -c '"level":"error"' "$dir/caddy.log" 2>/dev/null || true)
    [ "${n:-0}" != 0 ] && AZ_ERRORS+="caddy ${dir##*/caddy-}: $n error lines ($(grep '"level":"error"' "$dir/caddy.log" | sed 's/.*"msg":"\([^"]*\)".*/\1/' | sort | uniq -c | sort -rn | head -2 | tr -s ' ' | tr '\n' ';')) "
  done
  for log in "$WORK"/azgate-*.log; do
    n=$(grep -vc -e "gate configuration in force" -e "DEMO ONLY" "$log" || true)
    [ "${n:-0}" != 0 ] && AZ_ERRORS+="gate ${log##*/azgate-}: $n other lines ($(grep -v -e "gate configuration in force" -e "DEMO ONLY" "$log" | head -1 | cut -c1-160)) "
  done
  for label in "$L_HBD" "$L_HBA" "$L_NSD" "$L_NSA" "${L_CD:-}" "${L_CA:-}" "${L_CMEM:-}" "${L_CSQL:-}" "${L_CPG:-}" "${L_TMEM:-}" "${L_TSQL:-}" "${L_TPG:-}" \
    "${L_LIVE:-}" "${L_FIX:-}"; do
    [ -n "$label" ] || continue
    [ "${NON2XX[$label]:-0}" != 0 ] && AZ_ERRORS+="non-2xx/3xx: ${NON2XX[$label]} in \"$label\" "
    [ "${SOCKERR[$label]:-0}" != 0 ] && AZ_ERRORS+="socket errors: ${SOCKERR[$label]} in \"$label\" "
  done
  [ -n "$AZ_ERRORS" ] || AZ_ERRORS="none (no non-2xx answers, no socket errors, nothing in the logs of nginx, Caddy or the gates)"
  SUMMARY+="  problems: $AZ_ERRORS"$'\n'
fi
echo
echo "== summary ($BUILD build; $(nproc) cores; wrk -t$THREADS -c$CONNS -d${DURATION}s; best of $ROUNDS runs per target)"
printf "%s" "$SUMMARY"
