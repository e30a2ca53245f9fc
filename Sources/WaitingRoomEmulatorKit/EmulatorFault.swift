import WaitingRoom

/// A fault an emulator injects into the next requests of one kind: one value for every vendor.
///
/// One JSON form (`POST /_emulator/<vendor>/faults`, `waitingroom load --faults FILE`):
///
/// ```json
/// {"action": "delay", "delayMs": 1500, "on": "5002", "count": 3}
/// {"action": "drop", "on": "enqueue"}
/// {"action": "status", "status": 503, "body": "<html>…</html>", "on": "requests.post"}
/// {"action": "garbage", "on": "any"}
/// ```
///
/// `on` is one of the vendor's request kinds (``EmulatorFaultVocabulary/requestKinds``) or
/// `any`; `count` how many matching requests it affects (default 1); a vendor may add actions of
/// its own (NetFUNNEL: `loseReply`, `code` with `"code": 505`). The
/// older per-vendor forms are read as aliases (``EmulatorFaultVocabulary``).
package struct EmulatorFault: Sendable, Hashable, CustomStringConvertible {
    /// What happens to a matching request.
    package enum Action: Sendable, Hashable {
        /// Answer normally after this long (real time: the clients' deadlines are real time).
        case delay(Duration)
        /// Close the connection before a complete answer.
        case drop
        /// Answer with this HTTP status (and ``EmulatorFault/body``, else the vendor's error page).
        case status(Int)
        /// Answer 200 with a body that is not what the client expects (``EmulatorFault/body``, else
        /// the vendor's garbage).
        case garbage
        /// A vendor's own action (its name, and its number when it takes one).
        case vendor(String, Int?)

        /// The action's name in the JSON form.
        package var name: String {
            switch self {
            case .delay: return "delay"
            case .drop: return "drop"
            case .status: return "status"
            case .garbage: return "garbage"
            case .vendor(let name, _): return name
            }
        }
    }

    /// What happens.
    package var action: Action
    /// The request kind it applies to (``EmulatorFault/anyRequest`` for every kind).
    package var on: String
    /// How many matching requests it affects; nil = until cleared.
    package var count: Int?
    /// The body of a `status` or `garbage` answer (nil: the vendor's own).
    package var body: String?

    /// The request kind that matches every request.
    package static let anyRequest = "any"

    package init(_ action: Action, on: String = EmulatorFault.anyRequest, count: Int? = 1, body: String? = nil) {
        self.action = action
        self.on = on
        self.count = count
        self.body = body
    }

    /// Whether it applies to a request of kind `kind`.
    package func matches(_ kind: String) -> Bool { on == Self.anyRequest || on == kind }

    /// The JSON form (``EmulatorFaultVocabulary/parse(_:path:)`` reads it back).
    package var json: JSONValue {
        var object: [String: JSONValue] = ["action": .string(action.name), "on": .string(on)]
        if let count { object["count"] = .number(Double(count)) }
        if let body { object["body"] = .string(body) }
        switch action {
        case .delay(let d): object["delayMs"] = .number((d / .milliseconds(1)).rounded())
        case .status(let s): object["status"] = .number(Double(s))
        case .vendor(_, let n?): object["code"] = .number(Double(n))
        case .drop, .garbage, .vendor: break
        }
        return .object(object)
    }

    package var description: String { json.jsonText }
}

/// The one set of bounds every fault is read with.
package enum EmulatorFaultBounds {
    /// `count`.
    package static let count = 1...1_000_000
    /// `delayMs` (10 minutes at most).
    package static let delayMs = 0...600_000
    /// `status`: a final answer (a 1xx is no answer: 100 broke the HTTP on the wire, 101 hung the client).
    package static let status = 200...599
    /// `code` of a vendor action.
    package static let code = 100...9999
    /// `body`, in UTF-8 bytes.
    package static let bodyBytes = 64 * 1024
}
