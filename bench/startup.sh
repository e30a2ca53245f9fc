#!/usr/bin/env bash
# Start-up of `waitingroom --help` next to `lua5.4 -e ''`, in one run (the ratio is what matters:
# machines here are noisy), for the release binary as `swift build -c release` links it and for
# a stripped copy of it:
#   - release:  Package.swift links release builds of `waitingroom` with the Swift runtime,
#               Foundation and the C libraries inside (libstdc++, Lua, libedit, zlib;
#               Scripts/static-link/README.md), position-dependent (`-no-pie`), exporting no
#               symbols (`--no-export-dynamic`): only libc, libm and libgcc_s are loaded, ~180
#               symbols bound, and no load-time relocation of the binary's ~130k pointers.
#   - stripped: the same binary after `strip -s` (no symbol table: about half the size; a crash
#               then prints addresses instead of names).
# The command line is parsed by the CLI's own parser (Sources/WaitingRoomCLI/CommandLine), on the
# main thread, without reflection: help, completion scripts and usage errors exit before Swift
# concurrency starts a thread. How start-up went from 16× lua5.4 to under 2× is in bench/README.md
# ("Start-up"); bench/startup-floor.sh times the floors of a bare Swift `print`, Foundation and a
# minimal ArgumentParser tool.
#
#   bench/startup.sh                 # builds the release binary, 30 runs each
#   SKIP_BUILD=1 RUNS=50 bench/startup.sh
# Needs lua5.4 (Debian package lua5.4) and hyperfine (Debian package hyperfine).
set -euo pipefail
cd "$(dirname "$0")/.."
RUNS=${RUNS:-30}
for tool in lua5.4 hyperfine strip; do
  command -v "$tool" >/dev/null || { echo "needs $tool (apt-get install lua5.4 hyperfine binutils)"; exit 1; }
done
if [ "${SKIP_BUILD:-0}" != 1 ]; then
  echo "building waitingroom (release)…"
  swift build -c release --product waitingroom >/dev/null
fi
RELEASE=.build/release/waitingroom
STRIPPED=$(mktemp -d)/waitingroom
trap 'rm -rf "$(dirname "$STRIPPED")"' EXIT
strip -s -o "$STRIPPED" "$RELEASE"
ls -l "$RELEASE" "$STRIPPED" | awk '{printf "%-40s %6.1f MiB\n", $9, $5/1048576}'
hyperfine -N --warmup 3 --runs "$RUNS" "$RELEASE --help" "$STRIPPED --help" "lua5.4 -e ''"
echo "the figure with its baseline, from the release binary itself:"
"$RELEASE" bench startup
