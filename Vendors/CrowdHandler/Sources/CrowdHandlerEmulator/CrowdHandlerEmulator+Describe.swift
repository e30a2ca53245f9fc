import CrowdHandler
import WaitingRoom
import WaitingRoomEmulatorKit

extension CrowdHandlerEmulator {
    /// From the `"crowdhandler"` section of a shared emulator document (none: the demo rooms).
    package static func make(section: JSONValue?, clock: any WaitingRoomClock) throws -> CrowdHandlerEmulator {
        guard let section, section != .null else { return CrowdHandlerEmulator(configuration: .demo, now: { clock.now() }) }
        return CrowdHandlerEmulator(
            configuration: try CrowdHandlerEmulatorConfiguration(json: section, now: clock.now()), now: { clock.now() })
    }

    /// Where the client is pointed: the options ``clientDefaults(server:)`` gives an address.
    package static let clientAddressKeys: Set<String> = ["apiURL", "waitURL", "siteURL"]

    /// The client options for an emulator on `server`: the demo public key, the emulator as API
    /// and waiting room, `/site` as the protected site (rooms guard `/site/{slug}`), 1 s polls.
    package static func clientDefaults(server: EmulatorAddress) -> JSONValue {
        .object([
            "publicKey": .string(CrowdHandlerEmulatorConfiguration.demoPublicKey),
            "apiURL": .string(server.baseURL),
            "waitURL": .string(server.baseURL),
            "siteURL": .string(server.baseURL + "/site"),
            "pollInterval": .number(1000)
        ])
    }

    /// Its addresses, public key and rooms.
    package func describe(server: EmulatorAddress) -> JSONValue {
        .object([
            "apiURL": .string(server.baseURL), "waitURL": .string(server.baseURL), "siteURL": .string(server.baseURL + "/site"),
            "publicKey": .string(CrowdHandlerEmulatorConfiguration.demoPublicKey),
            "rooms": snapshot()["rooms"] ?? .object([:])
        ])
    }

    package func summary(server: EmulatorAddress) -> [String] {
        var lines = [
            "CrowdHandler  apiURL=\(server.baseURL) waitURL=\(server.baseURL) siteURL=\(server.baseURL)/site"
                + "  (POST /v1/requests, GET /v1/requests/{token}, PUT /v1/responses/{id}, GET /v1/rooms; "
                + (configuration.publicKeys.isEmpty ? "any x-api-key)" : "x-api-key \(configuration.publicKeys.joined(separator: ", ")))")
        ]
        for (slug, room) in configuration.rooms.sorted(by: { $0.key < $1.key }) {
            var notes: [String] = []
            if room.blocked {
                notes.append("blocked (403)")
            } else if room.closed {
                notes.append("closed")
            } else if let capacity = room.capacity {
                notes.append("capacity \(capacity), \(room.rate)/min")
            } else {
                notes.append("open")
            }
            lines.append("  room \(slug)  guards …\(room.urlPattern ?? "/" + slug)  (\(notes.joined(separator: ", ")))")
        }
        return lines
    }
}
