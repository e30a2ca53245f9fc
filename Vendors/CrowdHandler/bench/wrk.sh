#!/bin/sh
# CrowdHandler emulator under wrk on loopback (needs wrk): start `waitingroom emulate --port 8080` first.
exec wrk -t2 -c32 -d10s -H 'x-api-key: demo-public-key' 'http://127.0.0.1:8080/v1/rooms'
