import WaitingRoomEmulatorKit

extension NetFUNNELEmulator {
    /// Keys taken and never returned, auto-returned by timeout, issued and returned, waiters
    /// dropped, faults, abandoned requests; requests per opcode and replies per code.
    package func loadFigures() -> EmulatorLoadFigures {
        let n = counters()
        return EmulatorLoadFigures(
            keys: [
                ("keysNeverReturned", n.keysNeverReturned), ("keysAutoReturned", n.keysAutoReturned),
                ("waitersDropped", n.waitersDropped), ("keysIssued", n.keysIssued), ("keysReturned", n.keysReturned),
                ("faultsInjected", n.faultsInjected), ("requestsAbandoned", n.requestsAbandoned)
            ],
            holdsKeys: true,
            requests: n.requests.sorted { $0.key < $1.key }.map { ("opcode \($0.key)", $0.value) },
            replies: n.replies.sorted { $0.key < $1.key }.map { ("code \($0.key)", $0.value) })
    }
}
