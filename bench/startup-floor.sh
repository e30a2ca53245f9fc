#!/usr/bin/env bash
# Start-up floors on this machine, next to `lua5.4 -e ''` and the release `waitingroom --help`, in
# one hyperfine run:
#   - hello:       `print` only, `swiftc -O -static-stdlib`
#   - foundation:  the same with `import Foundation` (Foundation's static initialisers)
#   - tool-sync:   bench/startup-floor, a three-command ArgumentParser tool, synchronous main
#   - tool-async:  the same tool as an AsyncParsableCommand with its `async` main (the parse runs
#                  on the cooperative pool)
# The ArgumentParser tool has ~3,500 protocol-conformance records; for each uncached conformance
# question ArgumentParser's reflection asks, the runtime scans them all. `waitingroom` (~10,300
# records) parses its command line itself and asks none, and links its C libraries statically
# (Scripts/static-link/README.md), so it starts faster than the minimal ArgumentParser tool.
#
#   bench/startup-floor.sh            # resolves swift-argument-parser for bench/startup-floor
#   RUNS=80 bench/startup-floor.sh
# Needs lua5.4 and hyperfine (Debian packages), and the release build of waitingroom.
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-40}
for tool in lua5.4 hyperfine swiftc; do
  command -v "$tool" >/dev/null || { echo "needs $tool"; exit 1; }
done
[ -x .build/release/waitingroom ] || swift build -c release --product waitingroom >/dev/null
WORK=$(mktemp -d)
trap 'rm -rf "$WORK"' EXIT
echo 'print("hello")' > "$WORK/hello.swift"
printf 'import Foundation\nprint("hello \\(ProcessInfo.processInfo.arguments.count)")\n' > "$WORK/foundation.swift"
swiftc -O -static-stdlib "$WORK/hello.swift" -o "$WORK/hello" 2>/dev/null
swiftc -O -static-stdlib "$WORK/foundation.swift" -o "$WORK/foundation" 2>/dev/null
(cd bench/startup-floor && swift build -c release --scratch-path "$WORK/sync" >/dev/null 2>&1)
(cd bench/startup-floor && swift build -c release --scratch-path "$WORK/async" -Xswiftc -DASYNC_MAIN >/dev/null 2>&1)
for binary in "$WORK/sync/release/floor-tool" .build/release/waitingroom; do
  size=$(readelf -S -W "$binary" | awk '/swift5_protocol_conformances/ {print $6}')
  records=$(( 16#$size / 4 ))
  echo "$(basename "$binary"): $records protocol-conformance records"
done
hyperfine -N --warmup 5 --runs "$RUNS" "lua5.4 -e ''" "$WORK/hello" "$WORK/foundation" \
  "$WORK/sync/release/floor-tool --help" "$WORK/async/release/floor-tool --help" \
  ".build/release/waitingroom --help"
