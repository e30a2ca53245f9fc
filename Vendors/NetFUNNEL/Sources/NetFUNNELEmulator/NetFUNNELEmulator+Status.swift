import Foundation
import NetFUNNEL
import WaitingRoom
import WaitingRoomEmulatorKit

extension NetFUNNELEmulator {
    /// The segments and counters for the `/_emulator/` dashboard, with the admin calls that
    /// change a segment (limit, open, block, deactivate) and add or clear faults.
    package func emulatorStatus() -> EmulatorStatus {
        let now = clock.now()
        let (figures, counters) = state.withLockedValue { state in
            state.sweep(now: now)
            return (state.segmentFigures(now: now), state.counters)
        }
        let pending = faultQueue.pending
        let rooms = figures.map { f -> EmulatorStatus.Room in
            let path = "/_emulator/netfunnel/segments/\(f.project)/\(f.segment)"
            let state = !f.settings.active ? "inactive (bypass)" : f.settings.entryStatus.rawValue
            return EmulatorStatus.Room(
                key: RoomKey(scope: f.project, room: f.segment), state: state, waiting: f.waiting,
                admittedTotal: f.admittedTotal, inside: f.inside, rate: f.tps,
                rateNote: "admissions/s over \(Self.seconds(f.settings.tpsWindowSeconds))",
                limit: Double(f.settings.limit), limitNote: "users inside (\(f.settings.control.rawValue) control)",
                queuePagePath: "/_emulator/netfunnel/waiting-room.html?sid=\(Self.component(f.project))&aid=\(Self.component(f.segment))",
                controls: [
                    EmulatorControl(
                        label: "Set limit", path: path, body: .object(["limit": .string("$value")]),
                        input: "limit", value: Double(f.settings.limit)),
                    EmulatorControl(label: "Open", path: path, body: .object(["active": .bool(true), "entryStatus": .string("waiting")])),
                    EmulatorControl(label: "Block", path: path, body: .object(["active": .bool(true), "entryStatus": .string("block")])),
                    EmulatorControl(label: "Deactivate", path: path, body: .object(["active": .bool(false)]))
                ])
        }
        let faultsPath = "/_emulator/netfunnel/faults"
        return EmulatorStatus(
            vendor: NetFUNNELConfiguration.vendorID, displayName: "NetFUNNEL", rooms: rooms,
            keysNeverReturned: counters.keysNeverReturned, faultsInjected: counters.faultsInjected, faultsPending: pending,
            counters: [
                "keysIssued": Double(counters.keysIssued), "keysTaken": Double(counters.keysTaken),
                "keysReturned": Double(counters.keysReturned), "keysAutoReturned": Double(counters.keysAutoReturned),
                "keysHeld": Double(counters.keysHeld), "waitersLeft": Double(counters.waitersLeft),
                "waitersDropped": Double(counters.waitersDropped), "requestsAbandoned": Double(counters.requestsAbandoned)
            ],
            controls: [
                EmulatorControl(
                    label: "5× HTTP 503 on 5002", path: faultsPath,
                    body: .object(["opcode": .number(5002), "httpStatus": .number(503), "count": .number(5)])),
                EmulatorControl(
                    label: "5× dropped 5101", path: faultsPath,
                    body: .object(["opcode": .number(5101), "drop": .bool(true), "count": .number(5)])),
                EmulatorControl(
                    label: "5× 2 s delay on 5002", path: faultsPath,
                    body: .object(["opcode": .number(5002), "delayMs": .number(2000), "count": .number(5)])),
                EmulatorControl(
                    label: "5× malformed 5004", path: faultsPath,
                    body: .object(["opcode": .number(5004), "malformed": .bool(true), "count": .number(5)])),
                EmulatorControl(label: "Clear faults", method: "DELETE", path: faultsPath),
                EmulatorControl(label: "Reset", path: "/_emulator/netfunnel/reset")
            ])
    }

    static func seconds(_ value: Double) -> String {
        value == value.rounded() ? "\(Int(value)) s" : "\(value) s"
    }

    static func component(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}
