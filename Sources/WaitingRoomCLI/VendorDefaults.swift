import Synchronization
import WaitingRoom
import WaitingRoomVendors

/// Per-vendor configuration defaults (for example the embedded emulator's address), merged
/// under whatever configuration a flow or `wr.open` gives.
final class VendorDefaults: Sendable {
    private let values = Mutex<[String: JSONValue]>([:])

    /// Replaces every default.
    func set(_ defaults: [String: JSONValue]) { values.withLock { $0 = defaults } }

    /// Lays a configuration document over the defaults: members named after a vendor go to that
    /// vendor; a plain object goes to every vendor.
    func overlay(_ document: JSONValue) {
        guard case .object(let top) = document else { return }
        values.withLock { values in
            let ids = VendorRegistry.standard.vendorIDs
            let vendorMembers = top.filter { if case .object = $0.value { return ids.contains($0.key) } else { return false } }
            let targets: [(String, [String: JSONValue])] = vendorMembers.isEmpty
                ? ids.map { ($0, top) }
                : vendorMembers.compactMap { key, value in value.objectValue.map { (key, $0) } }
            for (vendor, given) in targets {
                let base = values[vendor]?.objectValue ?? [:]
                values[vendor] = .object(base.merging(given) { _, new in new })
            }
        }
    }

    /// `configuration` with the vendor's defaults filled in where it is silent.
    func apply(vendor: String, to configuration: JSONValue) -> JSONValue {
        Self.merge(values.withLock { $0[vendor] }, under: configuration)
    }
}

extension VendorDefaults {
    /// `given` with `base`'s members filled in where it is silent.
    static func merge(_ base: JSONValue?, under given: JSONValue) -> JSONValue {
        guard case .object(let b)? = base, case .object(let g) = given else { return given }
        return .object(b.merging(g) { _, explicit in explicit })
    }
}

extension VendorRegistry {
    /// A registry with the same vendors whose providers take `defaults` under their configuration.
    func withDefaults(_ defaults: VendorDefaults) -> VendorRegistry {
        let registry = VendorRegistry()
        for descriptor in descriptors {
            let make = descriptor.make
            let id = descriptor.id
            registry.register(VendorDescriptor(id: id, summary: descriptor.summary) { json, environment in
                try make(defaults.apply(vendor: id, to: json), environment)
            })
        }
        return registry
    }
}
