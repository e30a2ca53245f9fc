import WaitingRoom

/// What one vendor's emulator understands in a fault: its request kinds, its own actions and
/// its older JSON forms (aliases), read by the one parser with the one set of bounds
/// (``EmulatorFaultBounds``).
package struct EmulatorFaultVocabulary: Sendable {
    /// The vendor id (errors name it).
    package let vendor: String
    /// The request kinds a fault may target (besides `any`).
    package let requestKinds: [String]
    /// The kind a fault without `on` targets.
    package let defaultTarget: String
    /// The vendor's own actions, by name: true when it takes a number (`"code": N`).
    package let vendorActions: [String: Bool]
    /// Reads an older, vendor-specific form (an alias); nil when `json` is not one.
    package let alias: @Sendable (_ json: JSONValue, _ path: String) throws -> EmulatorFault?

    package init(
        vendor: String, requestKinds: [String], defaultTarget: String = EmulatorFault.anyRequest,
        vendorActions: [String: Bool] = [:],
        alias: @escaping @Sendable (_ json: JSONValue, _ path: String) throws -> EmulatorFault? = { _, _ in nil }
    ) {
        self.vendor = vendor
        self.requestKinds = requestKinds
        self.defaultTarget = defaultTarget
        self.vendorActions = vendorActions
        self.alias = alias
    }

    /// Reads one fault: the JSON form (it has `action`), else an alias. Errors name the field.
    package func parse(_ json: JSONValue, path: String = "fault") throws -> EmulatorFault {
        guard let object = json.objectValue else {
            throw WaitingRoomError.invalidConfiguration(field: path, "expected a fault object", vendor: vendor)
        }
        guard object["action"] != nil else {
            if let fault = try alias(json, path) { return try checked(fault, path: path) }
            throw WaitingRoomError.invalidConfiguration(
                field: "\(path).action", "missing; expected one of \(actionNames.joined(separator: ", "))", vendor: vendor)
        }
        let reader = try ConfigurationReader(json, path: path, vendor: vendor)
        try reader.rejectUnknownKeys(["action", "on", "count", "delayMs", "status", "body", "code"])
        let name = try reader.string("action") ?? ""
        let action: EmulatorFault.Action
        switch name {
        case "delay": action = .delay(.milliseconds(try reader.int("delayMs", range: EmulatorFaultBounds.delayMs) ?? 2000))
        case "drop": action = .drop
        case "status": action = .status(try reader.int("status", range: EmulatorFaultBounds.status) ?? 503)
        case "garbage": action = .garbage
        default:
            guard let takesNumber = vendorActions[name] else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(path).action", "\"\(name)\" is not an action; expected one of \(actionNames.joined(separator: ", "))",
                    vendor: vendor)
            }
            let number = try reader.int("code", range: EmulatorFaultBounds.code)
            if takesNumber, number == nil {
                throw WaitingRoomError.invalidConfiguration(field: "\(path).code", "\(name) needs a code", vendor: vendor)
            }
            action = .vendor(name, takesNumber ? number : nil)
        }
        let fault = EmulatorFault(
            action, on: try reader.string("on") ?? defaultTarget,
            count: try reader.int("count", range: EmulatorFaultBounds.count) ?? 1,
            body: try reader.string("body"))
        return try checked(fault, path: path)
    }

    /// Reads one fault object or an array of them.
    package func parseList(_ json: JSONValue, path: String = "faults") throws -> [EmulatorFault] {
        switch json {
        case .array(let items):
            return try items.enumerated().map { try parse($0.element, path: "\(path)[\($0.offset)]") }
        case .object:
            return [try parse(json, path: path)]
        default:
            throw WaitingRoomError.invalidConfiguration(field: path, "expected a fault object or an array of them", vendor: vendor)
        }
    }

    /// Every action name this vendor accepts.
    package var actionNames: [String] { ["delay", "drop", "status", "garbage"] + vendorActions.keys.sorted() }

    private func checked(_ fault: EmulatorFault, path: String) throws -> EmulatorFault {
        guard fault.on == EmulatorFault.anyRequest || requestKinds.contains(fault.on) else {
            throw WaitingRoomError.invalidConfiguration(
                field: "\(path).on",
                "\"\(fault.on)\" is not a request kind; expected one of \((requestKinds + [EmulatorFault.anyRequest]).joined(separator: ", "))",
                vendor: vendor)
        }
        if let count = fault.count, !EmulatorFaultBounds.count.contains(count) {
            throw WaitingRoomError.outOfRange(field: "\(path).count", value: count, range: EmulatorFaultBounds.count, vendor: vendor)
        }
        if let body = fault.body, body.utf8.count > EmulatorFaultBounds.bodyBytes {
            throw WaitingRoomError.invalidConfiguration(
                field: "\(path).body", "\(body.utf8.count) bytes; at most \(EmulatorFaultBounds.bodyBytes)", vendor: vendor)
        }
        return fault
    }
}
