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
# The figures that matter are the ratios emulator / nginx, emulator / Hummingbird static and
# Hummingbird static / nginx: machines here are noisy. `waitingroom bench emulators` measures the
# same in process (and `bench all --json` includes it).
# Needs wrk and nginx (Debian: apt-get install wrk nginx-light curl); Scripts/setup does not install them.
#
#   bench/wrk.sh                       # builds `waitingroom` in release (.build-release), 10 s per run
#   DURATION=5 BUILD=debug bench/wrk.sh
# Env: BUILD (release|debug), DURATION (s), THREADS, CONNS, ONLY (netfunnel|queueit|gate), SKIP_BUILD=1,
# GATE_ARGS (more `waitingroom gate` options, e.g. "--threads 1"),
# ROUNDS (runs per target, default 2, in the order A B C then C B A; each target keeps its best),
# PAIRS (gate row: adjacent app-direct / gate-in-front pairs after the rounds, default 5; the
# median of their ratios is the figure least moved by a load that drifts).
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
NPORT=$((20000 + RANDOM % 20000))
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
declare -A BEST CPU_OF
best() {
  local label=$1; shift
  echo "== $label"
  local spec name pids before=() i=0
  for spec in ${CPU:-}; do pids=${spec#*:}; before[i]=$(ticks ${pids//,/ }); i=$((i + 1)); done
  local out times; times=$(mktemp "$WORK/time.XXXXXX")
  out=$( { TIMEFORMAT='%U %S'; time run "$@"; } 2>"$times" ); echo "$out"
  local r; r=$(echo "$out" | rps)
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
  NGX=$(awk -v m="$(cat "$WORK/nginx.pid")" '$4 == m {printf "%s%s", (n++ ? "," : ""), $1}' /proc/[0-9]*/stat 2>/dev/null)
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
echo
echo "== summary ($BUILD build; $(nproc) cores; wrk -t$THREADS -c$CONNS -d${DURATION}s; best of $ROUNDS runs per target)"
printf "%s" "$SUMMARY"
