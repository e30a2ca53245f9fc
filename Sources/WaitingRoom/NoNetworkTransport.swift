/// A transport that sends nothing: every request fails at once with `.invalidConfiguration`.
///
/// For providers that never touch the network (the `scripted` vendor), and for hosts that want
/// to prove that nothing leaves the process. The working transport lives outside the core
/// (`AsyncHTTPTransport` in the module `WaitingRoomHTTP`), so the core builds without an HTTP
/// stack.
public struct NoNetworkTransport: HTTPTransport {
    /// Creates the transport.
    public init() {}

    /// Refuses `request`.
    ///
    /// - Throws: ``WaitingRoomError`` of kind `.invalidConfiguration` naming the URL.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        throw WaitingRoomError.invalidConfiguration(
            field: "transport",
            "no HTTP transport is configured (this environment uses NoNetworkTransport); \(request.method) \(request.url) was not sent")
    }
}
