#!/usr/bin/env bash
# NetFUNNEL emulator 5002 requests/s vs nginx serving the same reply from a file and a Hummingbird
# static route, in one run: see bench/wrk.sh.
#   Vendors/NetFUNNEL/bench/wrk.sh      (env as bench/wrk.sh: BUILD, DURATION, THREADS, CONNS, ROUNDS)
ONLY=netfunnel exec "$(dirname "$0")/../../../bench/wrk.sh" "$@"
