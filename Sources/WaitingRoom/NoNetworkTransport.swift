/// A transport that sends nothing: every request fails at once with `.invalidConfiguration`.
///
/// For providers that never touch the network (the `scripted` vendor), and for hosts that want
/// to prove that nothing leaves the process. The working transport lives outside the core
/// (`AsyncHTTPTransport` in the module `WaitingRoomHTTP`), so the core builds without an HTTP
/// stack.
package struct NoNetworkTransport: HTTPTransport {
    /// Why nothing is sent (the error's message says it).
    package enum Reason: Sendable, Hashable {
        /// The environment asked for no network.
        case chosen
        /// No default transport was bootstrapped (``HTTPTransportSystem``).
        case notBootstrapped
    }

    /// Why nothing is sent.
    package let reason: Reason

    /// Creates the transport.
    package init(reason: Reason = .chosen) { self.reason = reason }

    /// Refuses `request`.
    ///
    /// - Throws: ``WaitingRoomError`` of kind `.invalidConfiguration` naming the URL.
    package func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        switch reason {
        case .chosen:
            throw WaitingRoomError.invalidConfiguration(
                field: "transport",
                "no HTTP transport is configured (this environment uses NoNetworkTransport); \(request.method) \(request.url) was not sent")
        case .notBootstrapped:
            throw WaitingRoomError.invalidConfiguration(
                field: "transport",
                "no HTTP transport: call HTTPTransportSystem.bootstrap(AsyncHTTPTransport.shared) at start-up (import WaitingRoomHTTP), "
                    + "get providers from VendorRegistry.standard (import WaitingRoomVendors), or pass ProviderEnvironment(transport:); "
                    + "\(request.method) \(request.url) was not sent")
        }
    }
}
