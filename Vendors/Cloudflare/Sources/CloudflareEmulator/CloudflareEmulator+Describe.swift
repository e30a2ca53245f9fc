import Cloudflare
import WaitingRoom
import WaitingRoomEmulatorKit

extension CloudflareEmulator {
    /// From the `"cloudflare"` section of a shared emulator document (none: the demo rooms).
    package static func make(section: JSONValue?, clock: any WaitingRoomClock) throws -> CloudflareEmulator {
        guard let section, section != .null else { return CloudflareEmulator(configuration: .demo, now: { clock.now() }) }
        return CloudflareEmulator(configuration: try CloudflareEmulatorConfiguration(json: section, now: clock.now()), now: { clock.now() })
    }

    /// Where the client is pointed: the options ``clientDefaults(server:)`` gives an address.
    package static let clientAddressKeys: Set<String> = ["siteURL"]

    /// The client options for an emulator on `server`: the emulator's `/cf` as the protected site,
    /// refreshes honoured down to 0.5 s (the demo rooms ask for 2 s), short retries.
    package static func clientDefaults(server: EmulatorAddress) -> JSONValue {
        .object([
            "siteURL": .string(server.baseURL + sitePrefix),
            "minRefreshInterval": .number(500),
            "timeout": .number(5000),
            "retryDelay": .number(500)
        ])
    }

    /// Its site and rooms.
    package func describe(server: EmulatorAddress) -> JSONValue {
        .object([
            "siteURL": .string(server.baseURL + Self.sitePrefix),
            "statusAPI": .string(server.baseURL + "/client/v4/zones/emulator/waiting_rooms/{name}/status"),
            "rooms": snapshot()["rooms"] ?? .object([:])
        ])
    }

    package func summary(server: EmulatorAddress) -> [String] {
        var lines = [
            "Cloudflare    siteURL=\(server.baseURL)\(Self.sitePrefix)  (JSON mode with Accept: application/json and the "
                + "__cfwaitingroom cookie; GET /client/v4/zones/{zone}/waiting_rooms/{name}/status)"
        ]
        // the rooms now: configured ones and those the management API made
        for name in model.roomNames() {
            guard let room = model.room(named: name) else { continue }
            var notes: [String] = []
            if room.suspended { notes.append("suspended") }
            notes.append(room.queueingMethod.rawValue)
            if room.queueAll { notes.append("queue_all") }
            notes.append("\(room.newUsersPerMinute)/min, \(room.totalActiveUsers) active, session \(room.sessionDuration) min")
            if !room.events.isEmpty { notes.append("\(room.events.count) event(s)") }
            lines.append("  room \(name)  covers …\(Self.sitePrefix)\(room.path ?? "/" + name)  (\(notes.joined(separator: ", ")))")
        }
        return lines
    }
}
