#!/usr/bin/env bash
# Queue-it emulator enqueue requests/s (POST, wrk Lua body) vs nginx serving the same answer from a
# file and a Hummingbird static route, in one run: see bench/wrk.sh. Tokens validated per second:
# `waitingroom bench queueit`.
#   Vendors/QueueIt/bench/wrk.sh        (env as bench/wrk.sh: BUILD, DURATION, THREADS, CONNS, ROUNDS)
ONLY=queueit exec "$(dirname "$0")/../../../bench/wrk.sh" "$@"
