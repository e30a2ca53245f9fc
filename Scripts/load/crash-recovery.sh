#!/usr/bin/env bash
# Issue 27 §3, end to end: a 300-user NetFUNNEL load keeps its state in SQLite (--state), is
# killed with SIGKILL while keys are out and 5004 faults are pending, then `waitingroom returns`
# finishes what it left; the emulator's counters must show keysNeverReturned 0 and
# keysAutoReturned 0. Loopback only.
#
#   Scripts/load/crash-recovery.sh [RUNS]        (WAITINGROOM=path/to/waitingroom to pick a binary)
set -euo pipefail
cd "$(dirname "$0")/../.."
bin=${WAITINGROOM:-.build/debug/waitingroom}
[ -x "$bin" ] || swift build --product waitingroom >/dev/null
runs=${1:-1}
work=$(mktemp -d /tmp/wr-crash.XXXXXX)
trap 'kill $emulator 2>/dev/null || true; rm -rf "$work"' EXIT

"$bin" emulate --port 0 --json --config Scripts/load/emulator-limit5.json >"$work/emulate.json" 2>"$work/emulate.err" &
emulator=$!
for _ in $(seq 100); do [ -s "$work/emulate.json" ] && break; sleep 0.1; done
base=$(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print(d.get("baseURL") or d.get("url") or d["netfunnel"]["serverUrl"])' "$work/emulate.json")
admin="$base/_emulator/netfunnel"
failures=0
for run in $(seq "$runs"); do
  curl -fsS -X POST "$admin/reset" >/dev/null
  rm -f "$work/state.sqlite"*
  settings=(--vendor netfunnel --set "serverUrl=$base" --set clientId=emulator-0000 --set allowInsecureHTTP=true)
  "$bin" load "${settings[@]}" --scope service_1 --room segKey_basic --users 300 --hold 0.3 \
      --state "$work/state.sqlite" --lease 3 --json >"$work/load.json" 2>"$work/load.err" &
  load=$!
  # every user holds its key (300 issued), some have passed and returned theirs: kill mid-run
  for _ in $(seq 300); do
    issued=$(curl -fsS "$admin/counters" | python3 -c 'import json,sys; c=json.load(sys.stdin); print(c["keysIssued"], c["keysReturned"])')
    set -- $issued
    [ "$1" -ge 300 ] && [ "$2" -ge 20 ] && break
    sleep 0.1
  done
  # 5004 faults pending at the kill: the recovering process must get through them
  curl -fsS -X POST "$admin/faults" -H 'content-type: application/json' -d '{"action":"drop","on":"5004","count":10}' >/dev/null
  curl -fsS -X POST "$admin/faults" -H 'content-type: application/json' -d '{"action":"status","status":503,"on":"5004","count":10}' >/dev/null
  # kill while passed users hold keys (their 5004s now fail on the faults)
  for _ in $(seq 100); do
    held=$(curl -fsS "$admin/counters" | python3 -c 'import json,sys; print(json.load(sys.stdin)["keysHeld"])')
    [ "$held" -ge 3 ] && break
    sleep 0.05
  done
  kill -KILL "$load"; wait "$load" 2>/dev/null || true
  before=$(curl -fsS "$admin/counters")
  "$bin" returns "${settings[@]}" --state "$work/state.sqlite" --json >"$work/returns.json" 2>"$work/returns.err" || true
  after=$(curl -fsS "$admin/counters")
  python3 - "$run" "$before" "$after" "$work/returns.json" <<'PY' || failures=$((failures + 1))
import json, sys
run, before, after = sys.argv[1], json.loads(sys.argv[2]), json.loads(sys.argv[3])
returns = json.load(open(sys.argv[4]))
print(f"run {run}: at the kill keysHeld={before['keysHeld']} waiting={before['waiting']} · returns: claimed {returns['claimed']} "
      f"returned late {returns['returned_late']} already gone {returns['already_gone']} gave up {returns['gave_up']} "
      f"left {returns['left_in_journal']} · after: keysNeverReturned={after['keysNeverReturned']} "
      f"keysAutoReturned={after['keysAutoReturned']} keysHeld={after['keysHeld']} waiting={after['waiting']}")
sys.exit(0 if after["keysNeverReturned"] == 0 and after["keysAutoReturned"] == 0 and after["waiting"] == 0 else 1)
PY
done
echo "$((runs - failures))/$runs runs ended with keysNeverReturned 0 and keysAutoReturned 0"
[ "$failures" -eq 0 ]
