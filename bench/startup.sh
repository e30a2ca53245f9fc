#!/usr/bin/env bash
# Start-up of `waitingroom --help` next to `lua5.4 -e ''`, for the two ways to link the release
# binary, in one run (the ratio is what matters: machines here are noisy):
#   - default:  `swift build -c release` (Swift runtime and Foundation as shared libraries, PIE)
#   - static:   the Swift runtime and Foundation linked in (`--static-swift-stdlib`), a
#               position-dependent executable (no load-time relocation of its ~130k pointers),
#               symbols stripped
# What start-up costs (perf, measured on the default build): the dynamic loader resolving and
# relocating symbols across ~20 shared libraries and the kernel mapping their pages (≈ 70%),
# then the Swift runtime's protocol-conformance scans that ArgumentParser's reflection triggers
# (≈ 20%); our own static initialisers are lazy and cost nothing before `main`.
#
#   bench/startup.sh                 # both builds (the static one in .build-static), 30 runs each
#   SKIP_BUILD=1 RUNS=50 bench/startup.sh
# Needs lua5.4 (Debian package lua5.4) and hyperfine (Debian package hyperfine).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-30}
for tool in lua5.4 hyperfine; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install lua5.4 hyperfine)"; exit 1; }
done
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "building waitingroom (release, default linking)…"
  swift build -c release --product waitingroom >/dev/null
  echo "building waitingroom (release, static Swift runtime, no PIE, stripped; .build-static)…"
  swift build -c release --product waitingroom --scratch-path .build-static --static-swift-stdlib \
    -Xswiftc -Xclang-linker -Xswiftc -no-pie -Xlinker -s >/dev/null
fi
DEFAULT=.build/release/waitingroom
STATIC=.build-static/release/waitingroom
ls -l "$DEFAULT" "$STATIC" | awk '{printf "%-40s %6.1f MiB\n", $9, $5/1048576}'
hyperfine -N --warmup 3 --runs "$RUNS" "$DEFAULT --help" "$STATIC --help" "lua5.4 -e ''"
echo "the figure with its baseline, from the static binary itself:"
"$STATIC" bench startup
