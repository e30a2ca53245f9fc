#!/usr/bin/env bash
# Builds and runs bench/gate-response-parser (README.md beside this file): GateResponseFramer
# against NIO's HTTPResponseDecoder. The package is laid out under $WORK (default
# /tmp/gate-response-parser-bench) with the proxy's current GateResponseFramer.swift,
# GateUpstreamHead.swift and GateProxyWire.swift copied in, and depends on the swift-nio checkout
# of this repository's own build (.build/checkouts/swift-nio, there after any `swift build`).
#
#   bench/gate-response-parser/run.sh            9 rounds, then the edge cases
#   bench/gate-response-parser/run.sh 15         15 rounds
#   ONLY=differences bench/gate-response-parser/run.sh
#   ONLY=timing bench/gate-response-parser/run.sh
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
work=${WORK:-/tmp/gate-response-parser-bench}
nio=${NIO:-$root/.build/checkouts/swift-nio}
if [ ! -f "$nio/Package.swift" ]; then
    echo "no swift-nio checkout at $nio: run 'swift build' in $root first (or set NIO=)" >&2
    exit 1
fi
mkdir -p "$work/Sources/GateResponseParserBench"
cp "$here"/Sources/GateResponseParserBench/*.swift "$work/Sources/GateResponseParserBench/"
for file in GateResponseFramer GateUpstreamHead GateProxyWire; do
    # WaitingRoomGate's two helpers they use are in Shims.swift
    sed '/^import WaitingRoomGate$/d' "$root/Sources/WaitingRoomGateProxy/$file.swift" > "$work/Sources/GateResponseParserBench/$file.swift"
done
cat > "$work/Package.swift" <<EOF
// swift-tools-version:6.0
// Written by bench/gate-response-parser/run.sh.
import PackageDescription

let package = Package(
    name: "GateResponseParserBench",
    dependencies: [.package(path: "$nio")],
    targets: [
        .executableTarget(
            name: "GateResponseParserBench",
            dependencies: [
                .product(name: "NIOCore", package: "swift-nio"),
                .product(name: "NIOEmbedded", package: "swift-nio"),
                .product(name: "NIOHTTP1", package: "swift-nio"),
            ],
            swiftSettings: [.swiftLanguageMode(.v5)]
        )
    ]
)
EOF
cc -O2 -shared -fPIC -o "$work/malloc-counter.so" "$here/malloc-counter.c"
# swift-nio's manifest takes swift-atomics, -collections and -system from beside it with this set
(cd "$work" && SWIFTCI_USE_LOCAL_DEPS=1 swift build -c release >&2)
bin="$work/.build/release/GateResponseParserBench"
if [ "${ONLY:-}" != differences ]; then
    LD_PRELOAD="$work/malloc-counter.so" "$bin" "${1:-9}"
fi
if [ "${ONLY:-}" != timing ]; then
    echo
    "$bin" differences
fi
