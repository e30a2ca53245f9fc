/// One metric family an emulator reports on the combined emulator's `GET /metrics` (the
/// Prometheus text format): its name, its HELP text and whether it is a counter or a gauge.
/// The kit's own families are ``EmulatorMetric/usersWaiting`` and its siblings; a vendor may
/// report further ones of its own (named with ``prefix``).
package struct EmulatorMetric: Sendable, Hashable {
    /// Counter (only grows; starts again from 0 when the emulator is reset) or gauge (any value).
    package enum Kind: String, Sendable, Hashable {
        /// A value that only grows (Prometheus `counter`; its name ends in `_total`).
        case counter
        /// A value that goes up and down (Prometheus `gauge`).
        case gauge
    }

    /// What every emulator metric's name starts with.
    package static let prefix = "waitingroom_emulator_"

    /// The full metric name (`waitingroom_emulator_users_waiting`): ASCII letters, digits and `_`.
    package var name: String
    /// The HELP text: what the figure is, in one line.
    package var help: String
    /// Counter or gauge.
    package var kind: Kind

    /// A metric family named `name` (give the full name, ``prefix`` included).
    package init(name: String, help: String, kind: Kind) {
        self.name = name
        self.help = help
        self.kind = kind
    }
}
