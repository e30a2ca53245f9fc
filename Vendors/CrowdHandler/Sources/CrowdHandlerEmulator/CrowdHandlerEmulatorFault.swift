import WaitingRoom
import WaitingRoomEmulatorKit

/// CrowdHandler's older fault form, kept as an alias of the emulator kit's ``EmulatorFault``
/// (the admin routes and `--faults` files read both): `{"kind": "delay|drop|status|garbage",
/// "on": "requests.post|requests.get|responses|rooms|any", "count": 1, "status": 503, "delayMs": 2000}`.
/// The kit's form is `{"action": …, "on": …, …}`.
package struct CrowdHandlerEmulatorFault: Sendable, Hashable {
    package enum Kind: String, Sendable, Hashable, CaseIterable {
        /// Answer normally after `delayMs`.
        case delay
        /// Close the connection in the middle of the answer.
        case drop
        /// Answer with HTTP `status` (default 503).
        case status
        /// Answer HTTP 200 with a body that is not the API's JSON.
        case garbage
    }

    /// The request kinds faults target.
    package enum Target: String, Sendable, Hashable, CaseIterable {
        case requestsPost = "requests.post"
        case requestsGet = "requests.get"
        case responses
        case rooms
        case any
    }

    package var kind: Kind
    package var on: Target
    package var count: Int
    package var status: Int
    package var delayMs: Int

    package init(kind: Kind, on: Target = .any, count: Int = 1, status: Int = 503, delayMs: Int = 2000) {
        self.kind = kind
        self.on = on
        self.count = count
        self.status = status
        self.delayMs = delayMs
    }

    /// Reads the admin JSON form.
    package init(json: JSONValue, path: String = "fault") throws {
        let r = try ConfigurationReader(json, path: path, vendor: "crowdhandler")
        try r.rejectUnknownKeys(["kind", "on", "count", "status", "delayMs"])
        guard let k = try r.string("kind"), let kind = Kind(rawValue: k) else {
            throw WaitingRoomError.invalidConfiguration(
                field: "\(path).kind", "expected one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        var on = Target.any
        if let o = try r.string("on") {
            guard let t = Target(rawValue: o) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(path).on", "expected one of \(Target.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            on = t
        }
        self.init(
            kind: kind, on: on, count: try r.int("count", range: 1...1_000_000) ?? 1,
            status: try r.int("status", range: 200...599) ?? 503, delayMs: try r.int("delayMs", range: 0...600_000) ?? 2000)
    }

    /// The kit's fault this stands for.
    package var emulatorFault: EmulatorFault {
        let action: EmulatorFault.Action =
            switch kind {
            case .delay: .delay(.milliseconds(delayMs))
            case .drop: .drop
            case .status: .status(status)
            case .garbage: .garbage
            }
        return EmulatorFault(action, on: on.rawValue, count: count)
    }

    /// What CrowdHandler's emulator understands in a fault: its request kinds, and this older
    /// form as an alias.
    package static let vocabulary = EmulatorFaultVocabulary(
        vendor: "crowdhandler", requestKinds: Target.allCases.filter { $0 != .any }.map(\.rawValue),
        alias: { json, path in
            guard json["kind"] != nil else { return nil }
            return try CrowdHandlerEmulatorFault(json: json, path: path).emulatorFault
        })
}
