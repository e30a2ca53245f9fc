import ArgumentParser
import WaitingRoom
import WaitingRoomVendors

/// Vendor options shared by `check` and `load`: which vendor, its configuration (file, then
/// `--set` pairs) and whether to point it at the embedded emulator.
struct VendorOptions: ParsableArguments {
    @Option(help: "Vendor id (netfunnel, queueit, crowdhandler, scripted).") var vendor: String
    @Option(help: "Vendor configuration file (JSON).") var config: String?
    @Option(name: .customLong("set"), help: "A vendor setting KEY=VALUE (repeatable).") var settings: [String] = []
    @Flag(help: "Start the embedded emulator (default rooms) and point the vendor at it.") var emulator = false

    /// The vendor configuration, and the emulator started for it (stop it when done).
    func resolve() async throws -> (configuration: JSONValue, server: EmulatorServer?) {
        let (configuration, server, _) = try await resolve(suite: .demo())
        return (configuration, server)
    }

    /// The vendor configuration, and `suite` started for it with `--emulator` (stop it when done).
    func resolve(suite: EmulatorSuite) async throws -> (configuration: JSONValue, server: EmulatorServer?, suite: EmulatorSuite?) {
        let configuration = try VendorConfigurationLoader.load(vendor: vendor, file: config, settings: settings)
        guard emulator else { return (configuration, nil, nil) }
        let server = try await suite.start()
        return (VendorDefaults.merge(EmulatorSuite.clientDefaults(for: server)[vendor], under: configuration), server, suite)
    }
}
