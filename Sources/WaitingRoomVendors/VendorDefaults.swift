import Logging
import Synchronization
import WaitingRoom

/// Per-vendor configuration defaults (for example the embedded emulator's address), merged
/// under whatever configuration a flow or `wr.open` gives; pinned options (`run --emulator`'s
/// addresses) are laid over it instead.
package final class VendorDefaults: Sendable {
    private let values = Mutex<[String: JSONValue]>([:])
    /// Per vendor, the options whose default wins over the given configuration (and that are
    /// dropped from it when there is no default).
    private let pinned = Mutex<[String: Set<String>]>([:])

    /// No defaults yet.
    package init() {}

    /// Replaces every default; `pinning` names, per vendor, the options whose default wins over
    /// the configuration a flow gives (none: every default only fills in).
    package func set(_ defaults: [String: JSONValue], pinning: [String: Set<String>] = [:]) {
        values.withLock { $0 = defaults }
        pinned.withLock { $0 = pinning }
    }

    /// Lays a configuration document over the defaults: members named after a vendor go to that
    /// vendor; a plain object goes to every vendor.
    package func overlay(_ document: JSONValue) {
        guard case .object(let top) = document else { return }
        values.withLock { values in
            let ids = VendorRegistry.standard.vendorIDs
            let vendorMembers = top.filter { if case .object = $0.value { return ids.contains($0.key) } else { return false } }
            let targets: [(String, [String: JSONValue])] =
                vendorMembers.isEmpty
                ? ids.map { ($0, top) }
                : vendorMembers.compactMap { key, value in value.objectValue.map { (key, $0) } }
            for (vendor, given) in targets {
                let base = values[vendor]?.objectValue ?? [:]
                values[vendor] = .object(base.merging(given) { _, new in new })
            }
        }
    }

    /// `configuration` with the vendor's defaults filled in where it is silent, and its pinned
    /// options set to their defaults (or dropped, without one) whatever it says.
    package func apply(vendor: String, to configuration: JSONValue) -> JSONValue {
        let base = values.withLock { $0[vendor] }
        let merged = Self.merge(base, under: configuration)
        guard let keys = pinned.withLock({ $0[vendor] }), !keys.isEmpty, case .object(var members) = merged else { return merged }
        let defaults = base?.objectValue ?? [:]
        for key in keys { members[key] = defaults[key] }
        return .object(members)
    }
}

extension VendorDefaults {
    /// `given` with `base`'s members filled in where it is silent.
    package static func merge(_ base: JSONValue?, under given: JSONValue) -> JSONValue {
        guard case .object(let b)? = base, case .object(let g) = given else { return given }
        return .object(b.merging(g) { _, explicit in explicit })
    }
}

extension VendorDefaults {
    /// Lays `document` over the defaults (``overlay(_:)``); returns the vendors of `registry` it
    /// has a member for.
    package func overlay(_ document: JSONValue, naming registry: VendorRegistry) -> Set<String> {
        overlay(document)
        return Set(registry.vendorIDs.filter { document[$0] != nil })
    }

    /// Makes a provider of each of `vendors` from the defaults alone, to find a bad setting before
    /// anything runs (it throws, naming the field). That is only part of a configuration (a flow's
    /// own `config` fills in the rest), so the providers send nothing (no settings fetch, no key
    /// recovery) and say nothing (a missing clientId is not bypass mode here).
    package func check(_ vendors: Set<String>, in registry: VendorRegistry) throws {
        let checking = ProviderEnvironment(
            transport: NoNetworkTransport(), logger: Logger(label: "waitingroom.run", factory: { _ in SwiftLogNoOpLogHandler() }),
            connectivity: AssumeOnline(), recoversHeldKeysOnStart: false, metrics: nil, tracer: nil)
        for vendor in vendors.sorted() {
            _ = try registry.makeProvider(vendor: vendor, configuration: apply(vendor: vendor, to: .object([:])), environment: checking)
        }
    }
}

extension VendorRegistry {
    /// A registry with the same vendors whose providers take `defaults` under their configuration
    /// (and its pinned options over it); a flow's `wr.config` shows the result.
    package func withDefaults(_ defaults: VendorDefaults) -> VendorRegistry {
        let registry = VendorRegistry()
        for descriptor in descriptors {
            let configure = descriptor.configure
            let id = descriptor.id
            registry.register(
                VendorDescriptor(
                    id: id, summary: descriptor.summary,
                    configure: { defaults.apply(vendor: id, to: configure($0)) },
                    make: descriptor.make))
        }
        return registry
    }
}
