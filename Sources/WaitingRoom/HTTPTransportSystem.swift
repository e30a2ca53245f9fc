import NIOCore
import Synchronization

/// The process's default HTTP transport, set once at start-up like swift-log's
/// `LoggingSystem.bootstrap`: vendor modules name no HTTP stack, and a
/// ``ProviderEnvironment`` made without a transport uses this one.
///
/// ```swift
/// import WaitingRoomHTTP
/// HTTPTransportSystem.bootstrap(AsyncHTTPTransport.shared)   // or your own HTTPTransport
/// ```
///
/// `VendorRegistry.standard` (module `WaitingRoomVendors`) bootstraps `AsyncHTTPTransport.shared`
/// when nothing was bootstrapped before, so an app that gets its providers from the registry
/// needs no call. Until a transport is bootstrapped, the default is `NoNetworkTransport`: a
/// request fails at once with `.invalidConfiguration` (field `transport`) saying how to set one,
/// never silently and never by waiting.
///
/// Unlike swift-log, a second `bootstrap` is allowed (tests, a host that swaps its stack): it
/// applies to environments made afterwards; environments keep the transport they were made with.
/// Thread safety: the transport is held behind a `Mutex`; every call may come from any thread.
public enum HTTPTransportSystem {
    private static let current = Mutex<(any HTTPTransport)?>(nil)

    /// Sets the default transport.
    public static func bootstrap(_ transport: any HTTPTransport) {
        current.withLock { $0 = transport }
    }

    /// Sets the default transport unless one was bootstrapped; returns the one in use.
    @discardableResult
    package static func bootstrapIfUnset(_ make: () -> any HTTPTransport) -> any HTTPTransport {
        current.withLock { value in
            if let value { return value }
            let made = make()
            value = made
            return made
        }
    }

    /// True when a transport was bootstrapped.
    package static var isBootstrapped: Bool { current.withLock { $0 != nil } }

    /// The event loops of the bootstrapped transport, where the core's timers fire (nil: none
    /// bootstrapped, or a transport without event loops; the core's timer queue is used then).
    package static var timerEventLoops: (any EventLoopGroup)? { current.withLock { $0?.timerEventLoops } }

    /// The default transport: the bootstrapped one, else ``NoNetworkTransport``.
    package static var transport: any HTTPTransport {
        current.withLock { $0 } ?? NoNetworkTransport(reason: .notBootstrapped)
    }
}
