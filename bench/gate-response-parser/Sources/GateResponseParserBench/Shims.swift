// What the copied proxy files (run.sh copies GateResponseFramer.swift, GateUpstreamHead.swift and
// GateProxyWire.swift from Sources/WaitingRoomGateProxy, without `import WaitingRoomGate`) use
// from WaitingRoomGate: the same code, so that the bench needs only swift-nio.

/// One header field (WaitingRoomGate's GateHeader).
struct GateHeader: Sendable, Hashable {
    var name: String
    var value: String

    init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

extension String {
    /// WaitingRoomGate's `equalsIgnoringASCIICase`.
    func equalsIgnoringASCIICase(_ other: String) -> Bool {
        guard utf8.count == other.utf8.count else { return false }
        var a = self
        var b = other
        return a.withUTF8 { x in
            b.withUTF8 { y in
                for i in 0..<x.count where x[i] != y[i] {
                    let lx = x[i] >= 0x41 && x[i] <= 0x5A ? x[i] | 0x20 : x[i]
                    let ly = y[i] >= 0x41 && y[i] <= 0x5A ? y[i] | 0x20 : y[i]
                    if lx != ly { return false }
                }
                return true
            }
        }
    }
}
