import CrowdHandler
import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

extension CrowdHandlerEmulator {
    /// The rooms and counters for the `/_emulator/` dashboard, with the admin calls that change a
    /// room (rate, capacity, admit one, open, close, block) and add or clear faults. CrowdHandler
    /// sessions hold no key to return, so `keysNeverReturned` is nil. Each room links to its live
    /// waiting page, aimed at the `/site/…` stand-in that the room guards.
    package func emulatorStatus() -> EmulatorStatus {
        let t = model.now()
        let pendingFaults = model.faults.pending
        let (rooms, counters, pending) = model.state.withLockedValue { s -> ([EmulatorStatus.Room], CrowdHandlerEmulatorCounters, Int) in
            CrowdHandlerEmulatorModel.admitByRate(&s, now: t)
            let key = s.configuration.publicKeys.first ?? CrowdHandlerEmulatorConfiguration.demoPublicKey
            var rooms: [EmulatorStatus.Room] = []
            for (slug, r) in s.rooms.sorted(by: { $0.key < $1.key }) {
                rooms.append(Self.statusRoom(slug: slug, r, key: key))
            }
            return (rooms, s.counters, pendingFaults)
        }
        let faultsPath = "/_emulator/crowdhandler/faults"
        var figures: [String: Double] = [
            "sessionsCreated": Double(counters.sessionsCreated), "sessionsChecked": Double(counters.sessionsChecked),
            "promoted": Double(counters.promoted), "refused": Double(counters.refused),
            "responsesRecorded": Double(counters.responsesRecorded)
        ]
        for (target, n) in counters.faultsOn { figures["faultsOn \(target)"] = Double(n) }
        return EmulatorStatus(
            vendor: CrowdHandlerConfiguration.vendorID, displayName: "CrowdHandler", rooms: rooms, keysNeverReturned: nil,
            faultsInjected: counters.faultsInjected, faultsPending: pending, counters: figures,
            controls: [
                EmulatorControl(
                    label: "5× HTTP 503 on POST /v1/requests", path: faultsPath,
                    body: .object(["kind": .string("status"), "status": .number(503), "count": .number(5), "on": .string("requests.post")])),
                EmulatorControl(
                    label: "5× dropped GET /v1/requests", path: faultsPath,
                    body: .object(["kind": .string("drop"), "count": .number(5), "on": .string("requests.get")])),
                EmulatorControl(
                    label: "5× 2 s delay on GET /v1/requests", path: faultsPath,
                    body: .object(["kind": .string("delay"), "delayMs": .number(2000), "count": .number(5), "on": .string("requests.get")])),
                EmulatorControl(label: "Clear faults", method: "DELETE", path: faultsPath),
                EmulatorControl(label: "Reset", path: "/_emulator/crowdhandler/reset")
            ])
    }

    /// One room's figures and controls. The scope is `site`, as in `--scope site --room {slug}`
    /// against the emulator (rooms guard `/site/{slug}`).
    static func statusRoom(slug: String, _ r: CrowdHandlerEmulatorModel.RoomState, key: String) -> EmulatorStatus.Room {
        let room = r.room
        let state = room.blocked ? "blocked" : room.closed ? "closed" : room.capacity == nil ? "open" : "queue"
        let path = "/_emulator/crowdhandler/rooms/\(slug)"
        let pattern = room.urlPattern ?? "/\(slug)"
        // a target that contains the room's pattern, so the waiting page's checks land in this room
        let target = "/site" + (pattern.hasPrefix("/") ? "" : "/") + pattern
        var query = URLComponents()
        query.queryItems = [URLQueryItem(name: "url", value: target), URLQueryItem(name: "ch-public-key", value: key)]
        let slugPath = slug.addingPercentEncoding(withAllowedCharacters: .urlPathAllowed) ?? slug
        return EmulatorStatus.Room(
            key: RoomKey(scope: "site", room: slug), state: state, waiting: r.line.count, admittedTotal: r.admittedTotal,
            rate: state == "queue" ? room.rate / 60 : 0, rateNote: "admissions/s (configured \(Self.format(room.rate))/min)",
            limit: room.capacity.map { Double($0) }, limitNote: "let in at once before a line forms",
            queuePagePath: "/\(slugPath)?" + (query.percentEncodedQuery ?? ""),
            controls: [
                EmulatorControl(
                    label: "Set rate", path: path, body: .object(["rate": .string("$value")]),
                    input: "admissions/min", value: room.rate),
                EmulatorControl(
                    label: "Set capacity", path: path, body: .object(["capacity": .string("$value")]),
                    input: "let in at once", value: Double(room.capacity ?? 0)),
                EmulatorControl(label: "Admit 1", path: path + "/admit", body: .object(["count": .number(1)])),
                EmulatorControl(label: "Open", path: path, body: .object(["blocked": .bool(false), "closed": .bool(false)])),
                EmulatorControl(label: "Close", path: path, body: .object(["closed": .bool(true)])),
                EmulatorControl(label: "Block", path: path, body: .object(["blocked": .bool(true)]))
            ])
    }

    static func format(_ x: Double) -> String {
        x == x.rounded() && abs(x) < 1e15 ? String(Int(x)) : String(x)
    }
}
