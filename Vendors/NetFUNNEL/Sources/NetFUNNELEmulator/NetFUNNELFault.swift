import WaitingRoom

/// A fault the emulator injects into `/ts.wseq` answers, per opcode (or all), for a number of
/// requests (or until cleared).
///
/// JSON (admin endpoint): `{"opcode": 5002, "delayMs": 500}`, `{"drop": true}`,
/// `{"httpStatus": 503}`, `{"malformed": true}`, `{"code": 505}`, `{"loseReply": true}`, each with
/// optional `"count": N`.
public struct NetFUNNELFault: Sendable, Equatable {
    /// What happens to a matching request.
    public enum Action: Sendable, Equatable {
        /// Answer normally after this long (real time: client deadlines are real time).
        case delay(Duration)
        /// Close the connection without a complete answer.
        case dropConnection
        /// The server handles the request (keys issued or replaced, slots taken), then the
        /// connection closes before the answer arrives: a lost reply.
        case loseReply
        /// Answer with this HTTP status and an HTML error page.
        case httpStatus(Int)
        /// Answer HTTP 200 with a body that is not a NetFUNNEL reply.
        case malformedBody
        /// Answer with this NetFUNNEL result code without touching the state machine.
        case forceCode(Int)
    }

    /// The opcode it applies to; nil = every opcode.
    public var opcode: Int?
    /// What happens.
    public var action: Action
    /// How many requests it affects; nil = until cleared.
    public var remaining: Int?

    public init(opcode: Int? = nil, action: Action, count: Int? = nil) {
        self.opcode = opcode
        self.action = action
        self.remaining = count
    }

    /// Reads the admin JSON form; errors name the field.
    public init(json: JSONValue) throws {
        let reader = try ConfigurationReader(json, path: "fault", vendor: "netfunnel")
        try reader.rejectUnknownKeys(["opcode", "delayMs", "drop", "httpStatus", "malformed", "code", "loseReply", "count"])
        opcode = try reader.int("opcode", range: 0...9999)
        remaining = try reader.int("count", range: 1...1_000_000)
        var actions: [Action] = []
        if let ms = try reader.int("delayMs", range: 0...600_000) { actions.append(.delay(.milliseconds(ms))) }
        if try reader.bool("drop") == true { actions.append(.dropConnection) }
        if try reader.bool("loseReply") == true { actions.append(.loseReply) }
        if let status = try reader.int("httpStatus", range: 400...599) { actions.append(.httpStatus(status)) }
        if try reader.bool("malformed") == true { actions.append(.malformedBody) }
        if let code = try reader.int("code", range: 100...999) { actions.append(.forceCode(code)) }
        guard actions.count == 1, let action = actions.first else {
            throw WaitingRoomError.invalidConfiguration(
                field: "fault", "give exactly one of delayMs, drop, loseReply, httpStatus, malformed, code", vendor: "netfunnel")
        }
        self.action = action
    }

    /// The JSON form.
    public var json: JSONValue {
        var object: [String: JSONValue] = [:]
        if let opcode { object["opcode"] = .number(Double(opcode)) }
        if let remaining { object["count"] = .number(Double(remaining)) }
        switch action {
        case .delay(let d): object["delayMs"] = .number(Double(d.milliseconds))
        case .dropConnection: object["drop"] = .bool(true)
        case .loseReply: object["loseReply"] = .bool(true)
        case .httpStatus(let s): object["httpStatus"] = .number(Double(s))
        case .malformedBody: object["malformed"] = .bool(true)
        case .forceCode(let c): object["code"] = .number(Double(c))
        }
        return .object(object)
    }
}
