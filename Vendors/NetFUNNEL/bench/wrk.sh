#!/usr/bin/env bash
# NetFUNNEL emulator 5002 requests/s vs nginx serving a static file, in one run: see bench/wrk.sh.
#   Vendors/NetFUNNEL/bench/wrk.sh      (env as bench/wrk.sh: BUILD, DURATION, THREADS, CONNS)
ONLY=netfunnel exec "$(dirname "$0")/../../../bench/wrk.sh" "$@"
