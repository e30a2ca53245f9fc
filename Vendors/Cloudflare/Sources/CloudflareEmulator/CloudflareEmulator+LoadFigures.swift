import WaitingRoomEmulatorKit

extension CloudflareEmulator {
    /// Cloudflare holds no keys: visitors, admissions, revocations, expiries; requests per kind,
    /// served and faulted; answers per kind.
    package func loadFigures() -> EmulatorLoadFigures {
        let c = counters
        let keys =
            [
                ("visitorsCreated", c.visitorsCreated), ("admitted", c.admitted), ("revoked", c.revoked),
                ("sessionsExpired", c.sessionsExpired), ("placesLost", c.placesLost), ("faultsInjected", c.faultsInjected)
            ] + c.faultsOn.sorted { $0.key < $1.key }.map { ("faultsInjectedOn \($0.key)", $0.value) }
        let requests = c.requests.keys.sorted().flatMap { kind -> [(String, Int)] in
            let faulted = c.faultsOn[kind] ?? 0
            return [
                (Self.requestName(kind) + " (served)", (c.requests[kind] ?? 0) - faulted), (Self.requestName(kind) + " (faulted)", faulted)
            ]
        }
        let replies = c.replies.sorted { $0.key < $1.key }.map { ("page \($0.key)", $0.value) }
        return EmulatorLoadFigures(keys: keys, requests: requests, replies: replies)
    }

    /// A request kind as the report names it.
    static func requestName(_ kind: String) -> String {
        switch kind {
        case CloudflareEmulatorFault.page: "GET /cf/… (protected page)"
        case CloudflareEmulatorFault.status: "GET …/waiting_rooms/{name}/status"
        default: kind
        }
    }
}
