import Foundation
import Synchronization

/// A vendor's configuration, typed. Registering the type makes the vendor available by id to
/// Lua, the CLI and JSON configuration files.
public protocol ProviderConfiguration: Sendable {
    /// The id the vendor is registered under (`"netfunnel"`, `"queueit"`).
    static var vendorID: String { get }
    /// Reads the configuration from JSON; errors name the offending field.
    init(json: JSONValue) throws
    /// Makes a provider with this configuration.
    func makeProvider(environment: ProviderEnvironment) throws -> any WaitingRoomProvider
}

/// How the registry makes one vendor's providers.
package struct VendorDescriptor: Sendable {
    /// The vendor id.
    package var id: String
    /// One line describing the vendor, for listings.
    package var summary: String
    /// Makes a provider from a JSON configuration.
    package var make: @Sendable (JSONValue, ProviderEnvironment) throws -> any WaitingRoomProvider
    /// What the registry makes of a given configuration before ``make`` sees it (a host's
    /// defaults filled in, its pinned options set); identity by default.
    /// ``VendorRegistry/configuration(vendor:given:)`` returns it, so a flow host shows handlers
    /// the configuration their provider runs with.
    package var configure: @Sendable (JSONValue) -> JSONValue

    /// Creates a descriptor.
    package init(
        id: String, summary: String, configure: @escaping @Sendable (JSONValue) -> JSONValue = { $0 },
        make: @escaping @Sendable (JSONValue, ProviderEnvironment) throws -> any WaitingRoomProvider
    ) {
        self.id = id
        self.summary = summary
        self.configure = configure
        self.make = make
    }
}

/// Vendors by id, and providers made from typed or JSON configuration.
///
/// Adding a vendor is one `register` call; nothing in the core changes.
public final class VendorRegistry: Sendable {
    private let vendors = Mutex<[String: VendorDescriptor]>([:])

    /// Creates an empty registry.
    @usableFromInline package init() {}

    /// Registers a vendor by its configuration type.
    public func register<C: ProviderConfiguration>(_ type: C.Type, summary: String = "") {
        register(
            VendorDescriptor(id: C.vendorID, summary: summary) { json, environment in
                try C(json: json).makeProvider(environment: environment)
            })
    }

    /// Registers (or replaces) a vendor.
    package func register(_ descriptor: VendorDescriptor) {
        vendors.withLock { $0[descriptor.id] = descriptor }
    }

    /// Registered vendor ids, sorted.
    package var vendorIDs: [String] { vendors.withLock { $0.keys.sorted() } }

    /// Registered vendors, sorted by id.
    package var descriptors: [VendorDescriptor] { vendors.withLock { $0.values.sorted { $0.id < $1.id } } }

    /// Makes a provider for vendor `id` from a JSON configuration, in `environment` (by default
    /// the production one: the process's default transport, ``HTTPTransportSystem``, which
    /// `VendorRegistry.standard` bootstraps).
    ///
    /// - Throws: `.invalidConfiguration` naming `vendor` for an unknown id, or the vendor's
    ///   field-naming error for a bad configuration.
    public func makeProvider(vendor id: String, configuration: JSONValue, environment: ProviderEnvironment = ProviderEnvironment()) throws
        -> any WaitingRoomProvider
    {
        guard let descriptor = vendors.withLock({ $0[id] }) else {
            let known = vendorIDs
            throw WaitingRoomError.invalidConfiguration(
                field: "vendor",
                "no vendor is registered as \"\(id)\"; registered: \(known.isEmpty ? "(none)" : known.joined(separator: ", "))")
        }
        return try descriptor.make(descriptor.configure(configuration), environment)
    }

    /// The configuration a provider of vendor `id` made from `given` runs with
    /// (``VendorDescriptor/configure``); `given` itself for an unknown id.
    package func configuration(vendor id: String, given: JSONValue) -> JSONValue {
        guard let descriptor = vendors.withLock({ $0[id] }) else { return given }
        return descriptor.configure(given)
    }

    /// Makes a provider from a typed configuration (registered or not).
    package func makeProvider<C: ProviderConfiguration>(_ configuration: C, environment: ProviderEnvironment = ProviderEnvironment()) throws
        -> any WaitingRoomProvider
    {
        try configuration.makeProvider(environment: environment)
    }
}

extension JSONValue {
    /// Converts plain Swift values (as from a dictionary literal or `JSONSerialization`).
    /// - Throws: `.invalidConfiguration` naming the path of a value that has no JSON form.
    package init(any value: Any, path: String = "") throws {
        switch value {
        case let v as JSONValue: self = v
        case is NSNull: self = .null
        case let v as Bool: self = .bool(v)
        case let v as Int: self = .number(Double(v))
        case let v as Double: self = .number(v)
        case let v as Float: self = .number(Double(v))
        case let v as String: self = .string(v)
        case let v as [Any]:
            self = .array(try v.enumerated().map { try JSONValue(any: $0.element, path: "\(path)[\($0.offset)]") })
        case let v as [String: Any]:
            var object: [String: JSONValue] = [:]
            for (key, item) in v { object[key] = try JSONValue(any: item, path: path.isEmpty ? key : "\(path).\(key)") }
            self = .object(object)
        default:
            throw WaitingRoomError.invalidConfiguration(field: path.isEmpty ? "value" : path, "\(type(of: value)) has no JSON form")
        }
    }
}
