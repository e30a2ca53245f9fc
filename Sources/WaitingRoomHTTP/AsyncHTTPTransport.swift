import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import WaitingRoom

/// The default ``HTTPTransport``, on AsyncHTTPClient.
///
/// Deadlines are AsyncHTTPClient's own, scheduled on the request's NIO event loop, so they hold
/// to milliseconds (not whole seconds) even when every thread of Swift's cooperative pool is
/// busy; cancelling the calling task cancels the request; bodies larger than ``maxBodyBytes``
/// are refused as `.invalidResponse`.
public struct AsyncHTTPTransport: HTTPTransport {
    /// The shared transport (clients that live for the whole process; no shutdown needed).
    package static let shared = AsyncHTTPTransport()

    /// The longest deadline (about 100 years): longer ones are clamped so that the event loop's
    /// deadline arithmetic cannot overflow.
    static let longestTimeout: Duration = .seconds(100 * 365 * 24 * 3600)

    /// The largest body read before the response is refused.
    package let maxBodyBytes: Int
    /// The deadline used when a request sets none.
    package let defaultTimeout: Duration

    /// Creates a transport over the process-wide clients.
    package init(maxBodyBytes: Int = 4 * 1024 * 1024, defaultTimeout: Duration = .seconds(30)) {
        self.maxBodyBytes = maxBodyBytes
        self.defaultTimeout = defaultTimeout
    }

    /// AsyncHTTPClient's event loops (NIO's process-wide group): the core's timers fire there
    /// once this transport is bootstrapped as the default.
    public var timerEventLoops: (any EventLoopGroup)? { Self.direct.eventLoopGroup }

    /// The one client. It follows no redirect itself: ``send(_:)`` does (``HTTPRedirect``), so
    /// every `Location` is checked before a request is built from it (AsyncHTTPClient's own
    /// following built one from `http://127.0.0.1:99999/` and the process trapped).
    private static let direct = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration(redirects: .disallow))

    /// Connections kept per host and port (AsyncHTTPClient's default is 8).
    ///
    /// One process often speaks for many users at once (a server, `waitingroom load`). With 8
    /// connections, a few slow answers hold every connection and the other users' requests queue
    /// inside the client until their deadlines pass; a request sent just before its deadline is
    /// still handled by the server, which then issues a NetFUNNEL key nobody receives. Found by
    /// `waitingroom load --chaos`: 10 delayed 5101s out of 300 users left 3–5 such keys per run.
    package static let connectionsPerHost = 256

    /// The SDK retries by its own policies, so the client must not retry connection
    /// establishment silently until the deadline: a refused connection is reported at once.
    private static func configuration(redirects: HTTPClient.Configuration.RedirectConfiguration) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(redirectConfiguration: redirects)
        configuration.connectionPool.retryConnectionEstablishment = false
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = connectionsPerHost
        return configuration
    }

    /// Sends `request` and returns the complete response.
    ///
    /// The deadline (``HTTPRequest/timeout``, else ``defaultTimeout``) covers the whole
    /// exchange, redirects and the full body included. It is AsyncHTTPClient's own deadline,
    /// scheduled on the request's event loop, which fails the request and closes its connection
    /// when it passes; it does not wait for a free thread of Swift's cooperative pool, so a busy
    /// pool cannot make it late (only the caller's resumption needs a cooperative thread).
    ///
    /// - Throws: ``WaitingRoomError`` (`.networkTimeout` when the deadline passed), or
    ///   `CancellationError` when the calling task was cancelled.
    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let timeout = max(.zero, min(request.timeout ?? defaultTimeout, Self.longestTimeout))
        let deadline = NIODeadline.now() + TimeAmount(timeout)
        var response = try await exchange(request, timeout: timeout, deadline: deadline)
        guard request.followRedirects else { return response }
        var redirect = HTTPRedirect(request)
        while let next = try redirect.next(after: response) {
            response = try await exchange(next, timeout: timeout, deadline: deadline)
        }
        return response
    }

    /// One request and its answer, within `deadline` (the whole exchange's, redirects included).
    private func exchange(_ request: HTTPRequest, timeout: Duration, deadline: NIODeadline) async throws -> HTTPResponse {
        // Building the request and reading the answer are functions of their own: their
        // temporaries stay on the thread's stack, not in this async frame, which lives for as
        // long as the request is in flight (thousands at once under `load`).
        let task = try start(request, deadline: deadline)
        // The answer is taken in on the event loop, so this frame holds the SDK's small answer
        // rather than the client's response, and failures stay boxed until they are classified.
        let url = request.url
        let answer = task.futureResult.map { Self.answer($0, url: url) }
        let shown = Self.shown(url)
        do {
            // Cancellation is forwarded to the request at once (on the cancelling thread);
            // `task.cancel()` only marks the request failed and hands the rest to its event loop.
            return try await withTaskCancellationHandler {
                try await answer.get()
            } onCancel: {
                task.cancel()
            }
        } catch {
            throw Self.thrown(error, url: shown, limit: maxBodyBytes, timeout: timeout, deadline: deadline)
        }
    }

    /// What ``send(_:)`` throws for a request that got no complete answer: `CancellationError`
    /// when the calling task was cancelled, else the SDK's error.
    @inline(never)
    static func thrown(_ error: any Error, url: String, limit: Int, timeout: Duration, deadline: NIODeadline) -> any Error {
        if Task.isCancelled { return CancellationError() }
        return failure(error, url: url, limit: limit, timeout: timeout, deadline: deadline)
    }

    /// Hands `request` to the client; throws a typed error for a request it cannot send.
    @inline(never)
    func start(_ request: HTTPRequest, deadline: NIODeadline) throws -> HTTPClient.Task<HTTPClient.Response> {
        let url = request.url
        let limit = maxBodyBytes
        if let problem = Self.wireProblem(request) { throw problem }
        let outgoing: HTTPClient.Request
        do {
            var headers = HTTPHeaders()
            for field in request.headers { headers.add(name: field.name, value: field.value) }
            outgoing = try HTTPClient.Request(
                url: url, method: HTTPMethod(rawValue: request.method.uppercased()), headers: headers,
                body: request.body.map { .bytes($0) })
        } catch {
            throw Self.classify(error, url: Self.shown(url), limit: limit)
        }
        try Task.checkCancellation()
        return Self.direct.execute(
            request: outgoing, delegate: ResponseAccumulator(request: outgoing, maxBodySize: limit), deadline: deadline)
    }

    /// Why `request` cannot go on the wire as it is, or nil: a port over 65535, a method that is not an HTTP token
    /// (RFC 9110 §5.6.2; AsyncHTTPClient wrote `GET\r\nX: y` as given, a second header line), a
    /// header name that is not a token, or a value holding CR, LF or NUL. The request is the
    /// caller's (a flow's `wr.http`), so it is `.invalidConfiguration`, naming the field.
    static func wireProblem(_ request: HTTPRequest) -> WaitingRoomError? {
        func isToken(_ text: String) -> Bool {
            !text.isEmpty
                && text.utf8.allSatisfy { byte in
                    switch byte {
                    case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"),
                        UInt8(ascii: "0")...UInt8(ascii: "9"):
                        return true
                    default:
                        return "!#$%&'*+-.^_`|~".utf8.contains(byte)
                    }
                }
        }
        // a port NIO cannot hold traps in AsyncHTTPClient (`SocketAddress` for an IP address)
        let shown = Self.shown(request.url)
        if let port = URLComponents(string: request.url)?.port, !(0...65535).contains(port) {
            return WaitingRoomError(.invalidConfiguration, message: "\(shown): the port \(port) is not 0…65535", field: "url")
        }
        guard isToken(request.method) else {
            return WaitingRoomError(
                .invalidConfiguration, message: "\(shown): the method \(String(reflecting: request.method)) is not an HTTP token",
                field: "method")
        }
        for field in request.headers {
            guard isToken(field.name) else {
                return WaitingRoomError(
                    .invalidConfiguration, message: "\(shown): the header name \(String(reflecting: field.name)) is not an HTTP token",
                    field: "headers")
            }
            guard !field.value.utf8.contains(where: { $0 == 13 || $0 == 10 || $0 == 0 }) else {
                return WaitingRoomError(
                    .invalidConfiguration, message: "\(shown): the value of header \(field.name) holds CR, LF or NUL", field: "headers")
            }
        }
        return nil
    }

    /// `url` as errors show it: a password in it (`http://user:secret@host/`) as `***`.
    static func shown(_ url: String) -> String {
        guard url.contains("@"), let scheme = url.range(of: "://") else { return url }
        let rest = url[scheme.upperBound...]
        let authority = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        guard let at = authority.lastIndex(of: "@") else { return url }
        let userinfo = authority[..<at]
        let user = userinfo.prefix { $0 != ":" }
        let masked = user.count < userinfo.count ? user + ":***" : user
        return String(url[..<scheme.upperBound]) + masked + String(url[at...])
    }

    /// The SDK's error for a request that got no complete answer.
    @inline(never)
    static func failure(_ error: any Error, url: String, limit: Int, timeout: Duration, deadline: NIODeadline) -> WaitingRoomError {
        let failure = classify(error, url: url, limit: limit)
        let timedOut =
            (error as? HTTPClientError) == .deadlineExceeded
            || (failure.kind == .networkOffline && NIODeadline.now() >= deadline)
        if timedOut {
            return WaitingRoomError(.networkTimeout, message: "no complete answer from \(url) within \(timeout.milliseconds) ms")
        }
        return failure
    }

    /// The SDK's view of a complete answer.
    @inline(never)
    static func answer(_ response: HTTPClient.Response, url: String) -> HTTPResponse {
        var body = response.body ?? ByteBuffer()
        let bytes = body.readBytes(length: body.readableBytes) ?? []
        let headers = HTTPHeaderList(response.headers.map { ($0.name, $0.value) })
        return HTTPResponse(status: Int(response.status.code), headers: headers, body: bytes, url: response.url?.absoluteString ?? url)
    }

    /// Maps AsyncHTTPClient and NIO failures onto the SDK's error kinds.
    static func classify(_ error: any Error, url: String, limit: Int) -> WaitingRoomError {
        if let e = error as? HTTPClientError {
            switch e {
            case .deadlineExceeded, .readTimeout, .writeTimeout, .connectTimeout, .tlsHandshakeTimeout, .getConnectionFromPoolTimeout:
                return WaitingRoomError(.networkTimeout, message: "\(url): \(e)")
            case .invalidURL, .emptyHost, .emptyScheme:
                return WaitingRoomError(.invalidConfiguration, message: "\(url) is not a usable URL (\(e))", field: "url")
            case .cancelled:
                return WaitingRoomError(.networkOffline, message: "\(url): request cancelled")
            case .redirectLimitReached, .redirectCycleDetected:
                return WaitingRoomError(.invalidResponse, message: "\(url): \(e)")
            default:
                if "\(e)".contains("unsupportedScheme") {
                    return WaitingRoomError(.invalidConfiguration, message: "\(url): unsupported URL scheme", field: "url")
                }
                return WaitingRoomError(.networkOffline, message: "\(url): \(e)")
            }
        }
        if error is NIOTooManyBytesError || error is ResponseAccumulator.ResponseTooBigError {
            return WaitingRoomError(.invalidResponse, message: "\(url): response body larger than \(limit) bytes")
        }
        if error is HTTPParserError {
            return WaitingRoomError(.invalidResponse, message: "\(url): not a valid HTTP response (\(error))")
        }
        return WaitingRoomError(.networkOffline, message: "\(url): \(error)")
    }
}
