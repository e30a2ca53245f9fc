import WaitingRoom
import WaitingRoomEmulatorKit

extension QueueItEmulatorFault {
    /// The kit's fault this stands for.
    package var emulatorFault: EmulatorFault {
        let action: EmulatorFault.Action =
            switch kind {
            case .delay: .delay(.milliseconds(delayMs))
            case .drop: .drop
            case .status: .status(status)
            case .nonjson: .garbage
            }
        return EmulatorFault(action, on: on.rawValue, count: count, body: body)
    }

    /// What Queue-it's emulator understands in a fault: its request kinds (`enqueue`, the
    /// default, `queue` and `integrationconfig`), and the older form as an alias, read with the
    /// kit's bounds.
    package static let vocabulary = EmulatorFaultVocabulary(
        vendor: "queueit", requestKinds: [Target.enqueue.rawValue, Target.queue.rawValue, Target.integrationconfig.rawValue],
        defaultTarget: Target.enqueue.rawValue,
        alias: { json, path in
            guard json["kind"] != nil else { return nil }
            let reader = try ConfigurationReader(json, path: path, vendor: "queueit")
            try reader.rejectUnknownKeys(["kind", "count", "status", "delayMs", "body", "on"])
            guard let name = try reader.string("kind"), let kind = Kind(rawValue: name) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "\(path).kind", "expected one of \(Kind.allCases.map(\.rawValue).joined(separator: ", "))", vendor: "queueit")
            }
            var target = Target.enqueue
            if let on = try reader.string("on") {
                guard let parsed = Target(rawValue: on) else {
                    throw WaitingRoomError.invalidConfiguration(
                        field: "\(path).on", "expected one of \(Target.allCases.map(\.rawValue).joined(separator: ", "))", vendor: "queueit"
                    )
                }
                target = parsed
            }
            return QueueItEmulatorFault(
                kind: kind, count: try reader.int("count", range: EmulatorFaultBounds.count) ?? 1,
                status: try reader.int("status", range: EmulatorFaultBounds.status) ?? 503,
                delayMs: try reader.int("delayMs", range: EmulatorFaultBounds.delayMs) ?? 0,
                body: try reader.string("body"), on: target
            ).emulatorFault
        })
}
