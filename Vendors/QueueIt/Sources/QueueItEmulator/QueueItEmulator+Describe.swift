import QueueIt
import WaitingRoom
import WaitingRoomEmulatorKit

extension QueueItEmulator {
    /// From the `"queueit"` section of a shared emulator document (none: the demo rooms).
    package static func make(section: JSONValue?, clock: any WaitingRoomClock) throws -> QueueItEmulator {
        guard let section, section != .null else { return QueueItEmulator(configuration: .demo, now: { clock.now() }) }
        do {
            let configuration = try QueueItEmulatorConfiguration(document: Array(JSONValue.object([vendorID: section]).jsonText.utf8))
            return QueueItEmulator(configuration: configuration, now: { clock.now() })
        } catch {
            let field = error.field.hasPrefix(vendorID) ? error.field : "\(vendorID).\(error.field)"
            throw WaitingRoomError.invalidConfiguration(field: field, error.message, vendor: vendorID)
        }
    }

    /// The Queue-it customer of the demo rooms.
    package static let demoCustomer = "demo"

    /// The customers and rooms now (admin changes included).
    package var configuration: QueueItEmulatorConfiguration { model.state.withLockedValue { $0.configuration } }

    /// Where the client is pointed: the options ``clientDefaults(server:)`` gives an address.
    package static let clientAddressKeys: Set<String> = ["waitingRoomDomain"]

    /// The client options for an emulator on `server`: the demo customer, the emulator as the
    /// waiting-room domain, and the queue page followed over HTTP (the emulator's pages can be).
    package static func clientDefaults(server: EmulatorAddress) -> JSONValue {
        .object([
            "customerId": .string(demoCustomer),
            "waitingRoomDomain": .string(server.authority),
            "queuePage": .string("follow")
        ])
    }

    /// Its customers (with their secret and API keys: this is a local emulator) and rooms.
    package func describe(server: EmulatorAddress) -> JSONValue {
        var customers: [String: JSONValue] = [:]
        for (name, customer) in configuration.customers {
            var rooms: [String: JSONValue] = [:]
            for (id, room) in customer.rooms {
                rooms[id] = .object(["state": .string(room.state.rawValue), "admitPerSecond": .number(room.admitPerSecond)])
            }
            customers[name] = .object([
                "secretKey": .string(customer.secretKey), "rooms": .object(rooms),
                "apiKey": .string(customer.apiKey ?? QueueItEmulatorConfiguration.defaultAPIKey(customer: name))
            ])
        }
        return .object(["waitingRoomDomain": .string(server.authority), "customers": .object(customers)])
    }

    package func summary(server: EmulatorAddress) -> [String] {
        var lines = ["Queue-it   waitingRoomDomain=\(server.authority)  (POST /api/mobileapp/queue/{customer}/{room}/enqueue)"]
        for (name, customer) in configuration.customers.sorted(by: { $0.key < $1.key }) {
            lines.append(
                "  customer \(name)  secretKey \(customer.secretKey)  apiKey \(customer.apiKey ?? QueueItEmulatorConfiguration.defaultAPIKey(customer: name))"
            )
            for (id, room) in customer.rooms.sorted(by: { $0.key < $1.key }) {
                let rate = room.state == .queue ? ", \(room.admitPerSecond)/s" : ""
                lines.append("    room \(id)  (\(room.state.rawValue)\(rate))")
            }
        }
        return lines
    }
}
