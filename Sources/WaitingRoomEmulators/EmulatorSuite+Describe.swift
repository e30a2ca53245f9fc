import CrowdHandlerEmulator
import NetFUNNELEmulator
import QueueItEmulator
import WaitingRoom

extension EmulatorSuite {
    /// What a running suite serves, as JSON: base URL, NetFUNNEL projects and segments, Queue-it
    /// customers (with their secret keys: this is a local emulator) and rooms, CrowdHandler rooms.
    public func describe(server: EmulatorServer) -> [String: JSONValue] {
        var projects: [String: JSONValue] = [:]
        for (name, project) in netfunnelConfiguration.projects {
            var segments: [String: JSONValue] = [:]
            for (key, s) in project.segments {
                segments[key] = .object([
                    "control": .string(s.control.rawValue), "limit": .number(Double(s.limit)),
                    "active": .bool(s.active), "entryStatus": .string("\(s.entryStatus)"),
                ])
            }
            projects[name] = .object(segments)
        }
        var customers: [String: JSONValue] = [:]
        for (name, customer) in queueitConfiguration.customers {
            var rooms: [String: JSONValue] = [:]
            for (id, room) in customer.rooms {
                rooms[id] = .object(["state": .string(room.state.rawValue), "admitPerSecond": .number(room.admitPerSecond)])
            }
            customers[name] = .object(["secretKey": .string(customer.secretKey), "rooms": .object(rooms)])
        }
        return [
            "baseURL": .string(server.baseURL),
            "dashboard": .string(server.baseURL + "/_emulator/"),
            "netfunnel": .object([
                "clientId": .string(netfunnelConfiguration.clientId), "serverUrl": .string(server.baseURL),
                "projects": .object(projects),
            ]),
            "queueit": .object(["waitingRoomDomain": .string("\(server.host):\(server.port)"), "customers": .object(customers)]),
            "crowdhandler": .object([
                "apiURL": .string(server.baseURL), "waitURL": .string(server.baseURL), "siteURL": .string(server.baseURL + "/site"),
                "publicKey": .string(CrowdHandlerEmulatorConfiguration.demoPublicKey),
                "rooms": crowdhandler.snapshot()["rooms"] ?? .object([:]),
            ]),
        ]
    }

    /// The same as text for people.
    public func summary(server: EmulatorServer) -> String {
        var lines = [
            "Emulator on \(server.baseURL)",
            "Dashboard: \(server.baseURL)/_emulator/  (every room live; waiting pages linked from it)", "",
            "NetFUNNEL  clientId=\(netfunnelConfiguration.clientId) serverUrl=\(server.baseURL)  (GET /ts.wseq, /nf-setting.json;"
                + " a client without clientId runs in bypass mode)",
        ]
        for (name, project) in netfunnelConfiguration.projects.sorted(by: { $0.key < $1.key }) {
            for (key, s) in project.segments.sorted(by: { $0.key < $1.key }) {
                var notes = ["\(s.control.rawValue)", "limit \(s.limit)"]
                if !s.active { notes.append("inactive") }
                if "\(s.entryStatus)" != "waiting" { notes.append("entry \(s.entryStatus)") }
                lines.append("  project \(name)  segment \(key)  (\(notes.joined(separator: ", ")))")
            }
        }
        lines += ["", "Queue-it   waitingRoomDomain=\(server.host):\(server.port)  (POST /api/mobileapp/queue/{customer}/{room}/enqueue)"]
        for (name, customer) in queueitConfiguration.customers.sorted(by: { $0.key < $1.key }) {
            lines.append("  customer \(name)  secretKey \(customer.secretKey)")
            for (id, room) in customer.rooms.sorted(by: { $0.key < $1.key }) {
                let rate = room.state == .queue ? ", \(room.admitPerSecond)/s" : ""
                lines.append("    room \(id)  (\(room.state.rawValue)\(rate))")
            }
        }
        lines += ["", "CrowdHandler  apiURL=\(server.baseURL) waitURL=\(server.baseURL) siteURL=\(server.baseURL)/site"
                  + "  (POST /v1/requests, GET /v1/requests/{token}, PUT /v1/responses/{id}, GET /v1/rooms; "
                  + (crowdhandlerConfiguration.publicKeys.isEmpty ? "any x-api-key)" : "x-api-key \(crowdhandlerConfiguration.publicKeys.joined(separator: ", ")))")]
        for (slug, room) in crowdhandlerConfiguration.rooms.sorted(by: { $0.key < $1.key }) {
            var notes: [String] = []
            if room.blocked { notes.append("blocked (403)") } else if room.closed { notes.append("closed") }
            else if let capacity = room.capacity { notes.append("capacity \(capacity), \(room.rate)/min") } else { notes.append("open") }
            lines.append("  room \(slug)  guards …\(room.urlPattern ?? "/" + slug)  (\(notes.joined(separator: ", ")))")
        }
        return lines.joined(separator: "\n")
    }

    /// NetFUNNEL keys handed out and never returned, per the emulator's counters.
    public func keysNotReturned() -> Int {
        netfunnel.counters().keysNeverReturned
    }
}
