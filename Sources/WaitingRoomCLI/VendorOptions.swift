import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomVendors

/// Vendor options shared by `check` and `load`: which vendor, its configuration (file, then
/// `--set` pairs) and whether to point it at the embedded emulator.
struct VendorOptions: CLIArguments {
    var vendor = ""
    var config: String?
    var settings: [String] = []
    var emulator = false

    static var arguments: [CLIArgument<Self>] {
        [
            .option("vendor", \.vendor, help: "Vendor id (netfunnel, queueit, crowdhandler, cloudflare, scripted).", isRequired: true),
            .option("config", \.config, help: "Vendor configuration file (JSON).", completion: .files),
            .repeating("set", \.settings, help: "A vendor setting KEY=VALUE (repeatable)."),
            .flag("emulator", \.emulator, help: "Start the embedded emulator (default rooms) and point the vendor at it.")
        ]
    }

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
