import Hummingbird

/// A request context that knows the visitor's address, for IP binding (Queue-it's `hip`) and
/// CrowdHandler's `ip`. Use it as the router's context, or conform your own context to
/// ``GateClientAddressContext`` (Hummingbird's `RemoteAddressRequestContext` is read too).
public struct GateRequestContext: RequestContext, GateClientAddressContext {
    public var coreContext: CoreRequestContextStorage
    /// The peer's IP address (the connection's remote address).
    public let clientAddress: String?

    public init(source: ApplicationRequestContextSource) {
        self.coreContext = .init(source: source)
        self.clientAddress = source.channel.remoteAddress?.ipAddress
    }
}

/// A request context that can name the peer's IP address.
public protocol GateClientAddressContext: RequestContext {
    /// The IP address of the connection's peer, or nil.
    var clientAddress: String? { get }
}
