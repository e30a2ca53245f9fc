import Foundation
import QueueIt
import WaitingRoom
import WaitingRoomEmulatorKit

extension QueueItEmulator {
    /// The waiting rooms and counters for the `/_emulator/` dashboard, with the admin calls that
    /// change a room (admission rate, admit one, open, safety net, disable) and add or clear faults.
    /// Queue-it passes hold no key, so `keysNeverReturned` is nil.
    package func emulatorStatus() -> EmulatorStatus {
        let t = model.now()
        let (rooms, stateCounters) = model.state.withLockedValue { s -> ([EmulatorStatus.Room], QueueItEmulatorCounters) in
            var rooms: [EmulatorStatus.Room] = []
            for (cid, customerRooms) in s.rooms.sorted(by: { $0.key < $1.key }) {
                for (rid, var r) in customerRooms.sorted(by: { $0.key < $1.key }) {
                    r.advance(to: t)
                    s.rooms[cid]?[rid] = r
                    let path = "/_emulator/queueit/rooms/\(cid)/\(rid)"
                    rooms.append(
                        EmulatorStatus.Room(
                            key: RoomKey(scope: cid, room: rid), state: r.config.state.rawValue, waiting: r.waiting,
                            admittedTotal: r.admittedCount, rate: r.config.state == .queue ? r.config.admitPerSecond : 0,
                            rateNote: "admissions/s (configured)", limit: r.config.admitPerSecond, limitNote: "admissions/s",
                            controls: [
                                EmulatorControl(
                                    label: "Set rate", path: path, body: .object(["admitPerSecond": .string("$value")]),
                                    input: "admissions/s", value: r.config.admitPerSecond),
                                EmulatorControl(label: "Admit 1", path: path + "/admit?count=1"),
                                EmulatorControl(label: "Queue", path: path, body: .object(["state": .string("queue")])),
                                EmulatorControl(label: "Safety net", path: path, body: .object(["state": .string("safetynet")])),
                                EmulatorControl(label: "Disable", path: path, body: .object(["state": .string("disabled")]))
                            ]))
                }
            }
            return (rooms, s.counters)
        }
        var counters = stateCounters
        counters.pendingFaults = model.faults.pending
        let faultsPath = "/_emulator/queueit/faults"
        return EmulatorStatus(
            vendor: QueueItConfiguration.vendorID, displayName: "Queue-it", rooms: rooms, keysNeverReturned: nil,
            faultsInjected: counters.faultsInjected, faultsPending: counters.pendingFaults,
            counters: [
                "enqueueCount": Double(counters.enqueueCount), "passedCount": Double(counters.passedCount),
                "passedVisitors": Double(counters.passedVisitors), "faultsInjectedOnEnqueue": Double(counters.faultsInjectedOnEnqueue),
                "faultsInjectedOnQueue": Double(counters.faultsInjectedOnQueue)
            ],
            controls: [
                EmulatorControl(
                    label: "5× HTTP 503 on enqueue", path: faultsPath,
                    body: .object(["kind": .string("status"), "status": .number(503), "count": .number(5), "on": .string("enqueue")])),
                EmulatorControl(
                    label: "5× dropped queue polls", path: faultsPath,
                    body: .object(["kind": .string("drop"), "count": .number(5), "on": .string("queue")])),
                EmulatorControl(
                    label: "5× 2 s delay on enqueue", path: faultsPath,
                    body: .object(["kind": .string("delay"), "delayMs": .number(2000), "count": .number(5), "on": .string("enqueue")])),
                EmulatorControl(label: "Clear faults", method: "DELETE", path: faultsPath),
                EmulatorControl(label: "Reset", path: "/_emulator/queueit/reset")
            ])
    }
}
