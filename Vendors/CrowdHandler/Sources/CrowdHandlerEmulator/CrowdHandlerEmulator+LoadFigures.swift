import WaitingRoomEmulatorKit

extension CrowdHandlerEmulator {
    /// CrowdHandler holds no keys: sessions, checks and promotions; every request kind the client
    /// sent, served and faulted; answers per kind.
    package func loadFigures() -> EmulatorLoadFigures {
        let c = counters
        let keys =
            [
                ("sessionsCreated", c.sessionsCreated), ("sessionsChecked", c.sessionsChecked), ("promoted", c.promoted),
                ("refused", c.refused), ("responsesRecorded", c.responsesRecorded), ("faultsInjected", c.faultsInjected)
            ] + c.faultsOn.sorted { $0.key < $1.key }.map { ("faultsInjectedOn \($0.key)", $0.value) }
        let requests = c.requests.keys.sorted().flatMap { kind -> [(String, Int)] in
            let faulted = c.faultsOn[kind] ?? 0
            return [
                (Self.requestName(kind) + " (served)", (c.requests[kind] ?? 0) - faulted),
                (Self.requestName(kind) + " (faulted)", faulted)
            ]
        }
        let replies =
            c.replies.sorted { $0.key < $1.key }.map { ("/v1/requests \($0.key)", $0.value) }
            + [("responses recorded", c.responsesRecorded), ("users promoted", c.promoted)]
        return EmulatorLoadFigures(keys: keys, requests: requests, replies: replies)
    }

    /// A request kind (`requests.post`, …) as the report names it.
    static func requestName(_ kind: String) -> String {
        switch kind {
        case "requests.post": "POST /v1/requests"
        case "requests.get": "GET /v1/requests/{token}"
        case "responses": "PUT /v1/responses/{id}"
        case "rooms": "GET /v1/rooms"
        default: kind
        }
    }
}
