import NetFUNNEL
import WaitingRoom
import WaitingRoomEmulatorKit

extension NetFUNNELEmulator {
    /// From the `"netfunnel"` section of a shared emulator document (none: the demo rooms).
    package static func make(section: JSONValue?, clock: any WaitingRoomClock) throws -> NetFUNNELEmulator {
        guard let section, section != .null else { return NetFUNNELEmulator(configuration: .demo, clock: clock) }
        return NetFUNNELEmulator(configuration: try NetFUNNELEmulatorConfiguration(json: section, path: vendorID), clock: clock)
    }

    /// Where the client is pointed: `serverUrl`; `settingUrl` has no default, so it is dropped (the
    /// client derives it from `serverUrl` and `clientId`).
    package static let clientAddressKeys: Set<String> = ["serverUrl", "settingUrl"]

    /// The client options for an emulator on `server`: its default client id (whose settings
    /// document it serves), its address, a 3 s `networkTimeout`.
    package static func clientDefaults(server: EmulatorAddress) -> JSONValue {
        .object([
            "clientId": .string(NetFUNNELEmulatorConfiguration.defaultClientId),
            "serverUrl": .string(server.baseURL),
            "networkTimeout": .number(3000)
        ])
    }

    /// Its projects and segments, the client id and the server URL.
    package func describe(server: EmulatorAddress) -> JSONValue {
        let configuration = self.configuration
        var projects: [String: JSONValue] = [:]
        for (name, project) in configuration.projects {
            var segments: [String: JSONValue] = [:]
            for (key, s) in project.segments {
                segments[key] = .object([
                    "control": .string(s.control.rawValue), "limit": .number(Double(s.limit)),
                    "active": .bool(s.active), "entryStatus": .string("\(s.entryStatus)")
                ])
            }
            projects[name] = .object(segments)
        }
        return .object([
            "clientId": .string(configuration.clientId), "serverUrl": .string(server.baseURL), "projects": .object(projects)
        ])
    }

    package func summary(server: EmulatorAddress) -> [String] {
        let configuration = self.configuration
        var lines = [
            "NetFUNNEL  clientId=\(configuration.clientId) serverUrl=\(server.baseURL)  (GET /ts.wseq, /nf-setting.json;"
                + " a client without clientId runs in bypass mode)"
        ]
        for (name, project) in configuration.projects.sorted(by: { $0.key < $1.key }) {
            for (key, s) in project.segments.sorted(by: { $0.key < $1.key }) {
                var notes = ["\(s.control.rawValue)", "limit \(s.limit)"]
                if !s.active { notes.append("inactive") }
                if "\(s.entryStatus)" != "waiting" { notes.append("entry \(s.entryStatus)") }
                lines.append("  project \(name)  segment \(key)  (\(notes.joined(separator: ", ")))")
            }
        }
        return lines
    }
}
