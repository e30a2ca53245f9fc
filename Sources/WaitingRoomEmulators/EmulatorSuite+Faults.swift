import CrowdHandler
import CrowdHandlerEmulator
import Foundation
import NetFUNNEL
import NetFUNNELEmulator
import QueueIt
import QueueItEmulator
import WaitingRoom

/// Faults for `waitingroom load --chaos` and `--faults`: injected into the embedded emulators.
extension EmulatorSuite {
    /// The NetFUNNEL opcodes chaos mode targets: issue-and-enter, the waiting poll and the key return.
    public static let chaosOpcodes = [5101, 5002, 5004]

    /// Installs `perKind` faults of each kind (dropped connection, HTTP 503, malformed reply,
    /// a `delay` longer than a usual `networkTimeout`) on every request kind of `vendor`'s
    /// emulator; returns how many faults were installed.
    ///
    /// NetFUNNEL: on 5101, 5002 and 5004 (``chaosOpcodes``). Queue-it: on the enqueue call and on
    /// the queue page the follow driver polls (`QueueItEmulator.installChaos(perKind:delayMs:)`).
    /// CrowdHandler: on `POST` and `GET /v1/requests` (`CrowdHandlerEmulator.installChaos(perKind:delayMs:)`).
    /// - Throws: `.invalidConfiguration` (field `vendor`) for a vendor without an emulator.
    @discardableResult
    public func installChaos(vendor: String, perKind: Int, delay: Duration = .milliseconds(1500)) throws -> Int {
        guard perKind > 0 else { return 0 }
        switch vendor {
        case NetFUNNELConfiguration.vendorID:
            let actions: [NetFUNNELFault.Action] = [.dropConnection, .httpStatus(503), .malformedBody, .delay(delay)]
            for opcode in Self.chaosOpcodes {
                for action in actions { netfunnel.inject(NetFUNNELFault(opcode: opcode, action: action, count: perKind)) }
            }
            return Self.chaosOpcodes.count * actions.count * perKind
        case QueueItConfiguration.vendorID:
            queueit.installChaos(perKind: perKind, delayMs: Int(delay.milliseconds))
            return 8 * perKind  // four kinds on enqueue, four on the queue page
        case CrowdHandlerConfiguration.vendorID:
            return crowdhandler.installChaos(perKind: perKind, delayMs: Int(delay.milliseconds))
        default:
            throw WaitingRoomError.invalidConfiguration(
                field: "vendor", "the embedded emulator has no faults for \"\(vendor)\" (netfunnel, queueit, crowdhandler)")
        }
    }

    /// Installs faults from a JSON document: an array of `vendor`'s fault objects (the emulator's
    /// admin fault JSON), or an object with `netfunnel`, `queueit` and/or `crowdhandler` arrays. Returns how
    /// many fault entries were installed.
    /// - Throws: `.invalidConfiguration` naming the field of the first bad fault.
    @discardableResult
    public func installFaults(_ document: JSONValue, vendor: String) throws -> Int {
        var sections: [(String, JSONValue)] = []
        switch document {
        case .array:
            sections = [(vendor, document)]
        case .object(let members):
            for key in members.keys.sorted() {
                guard [NetFUNNELConfiguration.vendorID, QueueItConfiguration.vendorID, CrowdHandlerConfiguration.vendorID].contains(key) else {
                    throw WaitingRoomError.invalidConfiguration(field: "faults.\(key)", "unknown vendor; expected netfunnel, queueit or crowdhandler")
                }
                sections.append((key, members[key] ?? .null))
            }
        default:
            throw WaitingRoomError.invalidConfiguration(
                field: "faults", "expected an array of fault objects, or an object with netfunnel/queueit/crowdhandler arrays")
        }
        var installed = 0
        for (section, value) in sections {
            guard case .array(let items) = value else {
                throw WaitingRoomError.invalidConfiguration(field: "faults.\(section)", "expected an array of fault objects")
            }
            for (index, item) in items.enumerated() {
                let path = "faults.\(section)[\(index)]"
                switch section {
                case NetFUNNELConfiguration.vendorID:
                    do {
                        netfunnel.inject(try NetFUNNELFault(json: item))
                    } catch let error as WaitingRoomError {
                        throw WaitingRoomError.invalidConfiguration(field: path, error.message)
                    }
                case QueueItConfiguration.vendorID:
                    queueit.inject(try Self.queueItFault(item, path: path))
                case CrowdHandlerConfiguration.vendorID:
                    crowdhandler.inject(try CrowdHandlerEmulatorFault(json: item, path: path))
                default:
                    throw WaitingRoomError.invalidConfiguration(
                        field: "faults", "the embedded emulator has no faults for \"\(section)\" (netfunnel, queueit, crowdhandler)")
                }
                installed += 1
            }
        }
        return installed
    }

    /// A Queue-it fault from its admin JSON (`kind`, `count`, `status`, `delayMs`, `body`, `on`).
    static func queueItFault(_ json: JSONValue, path: String) throws -> QueueItEmulatorFault {
        let reader = try ConfigurationReader(json, path: path, vendor: QueueItConfiguration.vendorID)
        try reader.rejectUnknownKeys(["kind", "count", "status", "delayMs", "body", "on"])
        let kinds = QueueItEmulatorFault.Kind.allCases.map(\.rawValue)
        guard let name = try reader.string("kind"), let kind = QueueItEmulatorFault.Kind(rawValue: name) else {
            throw WaitingRoomError.invalidConfiguration(field: "\(path).kind", "expected one of \(kinds.joined(separator: ", "))")
        }
        let targets = QueueItEmulatorFault.Target.allCases.map(\.rawValue)
        var target = QueueItEmulatorFault.Target.enqueue
        if let on = try reader.string("on") {
            guard let parsed = QueueItEmulatorFault.Target(rawValue: on) else {
                throw WaitingRoomError.invalidConfiguration(field: "\(path).on", "expected one of \(targets.joined(separator: ", "))")
            }
            target = parsed
        }
        return QueueItEmulatorFault(
            kind: kind, count: try reader.int("count", range: 1...1_000_000) ?? 1,
            status: try reader.int("status", range: 100...599) ?? 503,
            delayMs: try reader.int("delayMs", range: 0...600_000) ?? 0,
            body: try reader.string("body"), on: target)
    }
}
