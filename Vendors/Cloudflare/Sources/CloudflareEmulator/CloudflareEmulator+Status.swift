import Cloudflare
import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

extension CloudflareEmulator {
    /// The rooms and counters for the `/_emulator/` dashboard, with the admin calls that change a
    /// room (rate, active users, admit one, queue all, suspend, reject) and add or clear faults.
    /// Cloudflare sessions hold no key, so `keysNeverReturned` is nil. Each room links to its page
    /// under `/cf`.
    package func emulatorStatus() -> EmulatorStatus {
        let snapshot = model.snapshot()
        let counters = model.counters
        var rooms: [EmulatorStatus.Room] = []
        // the rooms now: configured ones and those the management API made
        for name in model.roomNames() {
            guard let room = model.room(named: name) else { continue }
            let figures = snapshot["rooms"]?[name]
            let waiting = Int(figures?["waiting"]?.numberValue ?? 0)
            let inside = Int(figures?["active"]?.numberValue ?? 0)
            let admitted = Int(figures?["admitted"]?.numberValue ?? 0)
            let prequeueing = figures?["prequeueing"] == .bool(true)
            let state =
                room.suspended
                ? "suspended"
                : prequeueing
                    ? "event_prequeueing"
                    : room.queueingMethod == .reject ? "reject" : room.queueAll ? "queue_all" : waiting > 0 ? "queueing" : "not_queueing"
            let path = "/_emulator/cloudflare/rooms/\(name)"
            let pagePath =
                Self.sitePrefix + (room.path ?? "/" + (name.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? name))
            rooms.append(
                EmulatorStatus.Room(
                    key: RoomKey(scope: "site", room: name), state: state, waiting: waiting, admittedTotal: admitted, inside: inside,
                    rate: ["queueing", "not_queueing"].contains(state) ? Double(room.newUsersPerMinute) / 60 : 0,
                    rateNote: "new users/s (configured \(room.newUsersPerMinute)/min)",
                    limit: Double(room.totalActiveUsers), limitNote: "total active users", queuePagePath: pagePath,
                    controls: [
                        EmulatorControl(
                            label: "Set new users/min", path: path, body: .object(["new_users_per_minute": .string("$value")]),
                            input: "new users/min", value: Double(room.newUsersPerMinute)),
                        EmulatorControl(
                            label: "Set active users", path: path, body: .object(["total_active_users": .string("$value")]),
                            input: "total active users", value: Double(room.totalActiveUsers)),
                        EmulatorControl(label: "Admit 1", path: path + "/admit", body: .object(["count": .number(1)])),
                        EmulatorControl(label: "Queue all", path: path, body: .object(["queue_all": .bool(true)])),
                        EmulatorControl(
                            label: "FIFO", path: path,
                            body: .object(["queueing_method": .string("fifo"), "queue_all": .bool(false), "suspended": .bool(false)])),
                        EmulatorControl(label: "Reject", path: path, body: .object(["queueing_method": .string("reject")])),
                        EmulatorControl(label: "Suspend", path: path, body: .object(["suspended": .bool(true)]))
                    ]))
        }
        let faultsPath = "/_emulator/cloudflare/faults"
        var figures: [String: Double] = [
            "visitorsCreated": Double(counters.visitorsCreated), "admitted": Double(counters.admitted), "revoked": Double(counters.revoked),
            "sessionsExpired": Double(counters.sessionsExpired), "placesLost": Double(counters.placesLost)
        ]
        for (target, n) in counters.faultsOn { figures["faultsOn \(target)"] = Double(n) }
        return EmulatorStatus(
            vendor: CloudflareConfiguration.vendorID, displayName: "Cloudflare Waiting Room", rooms: rooms, keysNeverReturned: nil,
            faultsInjected: counters.faultsInjected, faultsPending: model.faults.pending, counters: figures,
            controls: [
                EmulatorControl(
                    label: "5× HTTP 503 on the protected page", path: faultsPath,
                    body: .object(["action": .string("status"), "status": .number(503), "count": .number(5), "on": .string("page")])),
                EmulatorControl(
                    label: "5× dropped page requests", path: faultsPath,
                    body: .object(["action": .string("drop"), "count": .number(5), "on": .string("page")])),
                EmulatorControl(
                    label: "5× 2 s delay on the page", path: faultsPath,
                    body: .object(["action": .string("delay"), "delayMs": .number(2000), "count": .number(5), "on": .string("page")])),
                EmulatorControl(label: "Clear faults", method: "DELETE", path: faultsPath),
                EmulatorControl(label: "Reset", path: "/_emulator/cloudflare/reset")
            ])
    }
}
