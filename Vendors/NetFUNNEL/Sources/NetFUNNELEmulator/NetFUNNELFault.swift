import NetFUNNEL
import WaitingRoom
import WaitingRoomEmulatorKit

/// NetFUNNEL's older fault form, kept as an alias of the emulator kit's ``EmulatorFault`` (the
/// admin route and `--faults` files read both), and the emulator's view of a fault it serves.
///
/// Older JSON: `{"opcode": 5002, "delayMs": 500}`, `{"drop": true}`, `{"httpStatus": 503}`,
/// `{"malformed": true}`, `{"code": 505}`, `{"loseReply": true}`, each with optional `"count": N`
/// (none: until cleared). The kit's form: `{"action": "delay|drop|status|garbage|loseReply|code",
/// "on": "5002", …}` (`on` is the opcode; `garbage` is `malformed`, `code` takes `"code": 505`).
package struct NetFUNNELFault: Sendable, Equatable {
    /// What happens to a matching request.
    package enum Action: Sendable, Equatable {
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
    package var opcode: Int?
    /// What happens.
    package var action: Action
    /// How many requests it affects; nil = until cleared.
    package var remaining: Int?

    package init(opcode: Int? = nil, action: Action, count: Int? = nil) {
        self.opcode = opcode
        self.action = action
        self.remaining = count
    }

    /// Reads the admin JSON form; errors name the field.
    package init(json: JSONValue) throws {
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
    package var json: JSONValue {
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

    /// The request kind of an opcode in the kit's queue (`"5002"`; `"other"` without one).
    static func kind(_ opcode: Int?) -> String { opcode.map(String.init) ?? "other" }

    /// The kit's fault this stands for.
    package var emulatorFault: EmulatorFault {
        let kitAction: EmulatorFault.Action =
            switch action {
            case .delay(let d): .delay(d)
            case .dropConnection: .drop
            case .loseReply: .vendor("loseReply", nil)
            case .httpStatus(let s): .status(s)
            case .malformedBody: .garbage
            case .forceCode(let c): .vendor("code", c)
            }
        return EmulatorFault(kitAction, on: opcode.map(String.init) ?? EmulatorFault.anyRequest, count: remaining)
    }

    /// The emulator's view of a kit fault served to a request with `opcode`.
    init?(_ fault: EmulatorFault, opcode: Int?) {
        let action: Action
        switch fault.action {
        case .delay(let d): action = .delay(d)
        case .drop: action = .dropConnection
        case .status(let s): action = .httpStatus(s)
        case .garbage: action = .malformedBody
        case .vendor("loseReply", _): action = .loseReply
        case .vendor("code", let c?): action = .forceCode(c)
        case .vendor: return nil
        }
        self.init(opcode: opcode, action: action, count: fault.count)
    }

    /// What NetFUNNEL's emulator understands in a fault: the opcodes as request kinds, its own
    /// actions `loseReply` and `code`, and the older form as an alias.
    package static let vocabulary = EmulatorFaultVocabulary(
        vendor: "netfunnel", requestKinds: NetFUNNELOpcode.allCases.map { String($0.rawValue) } + ["other"],
        vendorActions: ["loseReply": false, "code": true],
        alias: { json, path in
            do {
                return try NetFUNNELFault(json: json).emulatorFault
            } catch let error as WaitingRoomError {
                // The older parser names its fields `fault…`; the caller's path replaces that.
                let field = error.field.map { $0.hasPrefix("fault") ? path + $0.dropFirst("fault".count) : $0 } ?? path
                let prefix = (error.field ?? "") + ": "
                let message = error.message.hasPrefix(prefix) ? String(error.message.dropFirst(prefix.count)) : error.message
                throw WaitingRoomError.invalidConfiguration(field: field, message, vendor: "netfunnel")
            }
        })
}
