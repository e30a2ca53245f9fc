import WaitingRoom
import WaitingRoomEmulatorKit

extension EmulatorSuite {
    /// What a running suite serves, as JSON: base URL, dashboard, and each vendor's section
    /// (``EmulatedVendor/describe(server:)``) under its id.
    package func describe(server: EmulatorServer) -> [String: JSONValue] {
        let address = EmulatorAddress(host: server.host, port: server.port)
        var out: [String: JSONValue] = [
            "baseURL": .string(server.baseURL),
            "dashboard": .string(server.baseURL + "/_emulator/")
        ]
        for vendor in vendors { out[vendor.vendorID] = vendor.describe(server: address) }
        return out
    }

    /// The same as text for people.
    package func summary(server: EmulatorServer) -> String {
        let address = EmulatorAddress(host: server.host, port: server.port)
        var lines = [
            "Emulator on \(server.baseURL)",
            "Dashboard: \(server.baseURL)/_emulator/  (every room live; waiting pages linked from it)"
        ]
        for vendor in vendors { lines += [""] + vendor.summary(server: address) }
        return lines.joined(separator: "\n")
    }

    /// NetFUNNEL keys handed out and never returned, per the emulator's counters.
    package func keysNotReturned() -> Int {
        netfunnel.counters().keysNeverReturned
    }
}
