#!/usr/bin/env bash
# Start-up of `waitingroom --help` next to `lua5.4 -e ''`, in one run (the ratio is what matters:
# machines here are noisy), for the release binary as `swift build -c release` links it and for
# a stripped copy of it:
#   - release:  Package.swift links release builds of `waitingroom` with the Swift runtime and
#               Foundation inside (`-static-stdlib`) and position-dependent (`-no-pie`): no Swift
#               shared libraries to load and no load-time relocation of the binary's ~130k
#               pointers. (Linked as shared libraries and PIE, as debug builds are, --help took
#               about twice as long: 16.6 ms against 6–9 ms, lua5.4 1.0–1.3 ms.) It exports no
#               symbols (`--no-export-dynamic`): exporting all ~44k cost a `dladdr` scan at
#               load and the loader's lookups (6.0–6.2× → 4.6–5.3× lua5.4).
#   - stripped: the same binary after `strip -s` (no symbol table: about half the size; a crash
#               then prints addresses instead of names).
# The command line is parsed synchronously on the main thread, and ArgumentParser's own commands
# (--help, help, completion scripts) run there: they exit before Swift concurrency starts a thread
# (an async main parsed on the cooperative pool and started three dispatch threads: 8.1 → 6.5–6.8
# ms, stripped copies A/B). What start-up still costs (callgrind, perf; release build): ~17 M
# instructions, two thirds of them the Swift runtime answering ArgumentParser's reflection (~58
# protocol-conformance questions, each uncached one a scan of the binary's ~10,300 conformance
# records), and the kernel mapping the binary's pages (455 page faults against lua's ~100).
# Floors on the same machine, each static like the release binary (bench/startup-floor.sh, three
# runs): a bare `print` 1.5–1.7× lua5.4, with Foundation 2.2–2.5×, a three-command ArgumentParser
# tool with ~3,500 conformance records 2.9–3.7× (as an AsyncParsableCommand 3.5–3.8×).
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
