import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1

/// The default ``HTTPTransport``, on AsyncHTTPClient.
///
/// Deadlines are enforced with the SDK's own clock race on top of AsyncHTTPClient's deadline,
/// so they hold to milliseconds (not whole seconds); cancelling the calling task cancels the
/// request; bodies larger than ``maxBodyBytes`` are refused as `.invalidResponse`.
public struct AsyncHTTPTransport: HTTPTransport {
    /// The shared transport (clients that live for the whole process; no shutdown needed).
    public static let shared = AsyncHTTPTransport()

    /// The largest body read before the response is refused.
    public let maxBodyBytes: Int
    /// The deadline used when a request sets none.
    public let defaultTimeout: Duration

    /// Creates a transport over the process-wide clients.
    public init(maxBodyBytes: Int = 4 * 1024 * 1024, defaultTimeout: Duration = .seconds(30)) {
        self.maxBodyBytes = maxBodyBytes
        self.defaultTimeout = defaultTimeout
    }

    private static let direct = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration(redirects: .disallow))
    private static let following = HTTPClient(
        eventLoopGroupProvider: .singleton, configuration: configuration(redirects: .follow(max: 10, allowCycles: false)))

    /// The SDK retries by its own policies, so the client must not retry connection
    /// establishment silently until the deadline: a refused connection is reported at once.
    private static func configuration(redirects: HTTPClient.Configuration.RedirectConfiguration) -> HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(redirectConfiguration: redirects)
        configuration.connectionPool.retryConnectionEstablishment = false
        return configuration
    }

    public func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        let timeout = request.timeout ?? defaultTimeout
        var outgoing = HTTPClientRequest(url: request.url)
        outgoing.method = HTTPMethod(rawValue: request.method.uppercased())
        for field in request.headers { outgoing.headers.add(name: field.name, value: field.value) }
        if let body = request.body { outgoing.body = .bytes(ByteBuffer(bytes: body)) }
        let prepared = outgoing
        let client = request.followRedirects ? Self.following : Self.direct
        let limit = maxBodyBytes
        let url = request.url
        do {
            return try await withDeadline(timeout, clock: SystemClock(), onTimeout: {
                WaitingRoomError(.networkTimeout, message: "no complete answer from \(url) within \(timeout.milliseconds) ms")
            }, operation: {
                let response = try await client.execute(prepared, deadline: .now() + .milliseconds(timeout.milliseconds + 250))
                var body = try await response.body.collect(upTo: limit)
                let bytes = body.readBytes(length: body.readableBytes) ?? []
                let headers = HTTPHeaderList(response.headers.map { ($0.name, $0.value) })
                return HTTPResponse(status: Int(response.status.code), headers: headers, body: bytes, url: response.url?.absoluteString ?? url)
            })
        } catch let error as WaitingRoomError {
            throw error
        } catch is CancellationError {
            throw CancellationError()
        } catch {
            throw Self.classify(error, url: url, limit: limit)
        }
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
        if error is NIOTooManyBytesError {
            return WaitingRoomError(.invalidResponse, message: "\(url): response body larger than \(limit) bytes")
        }
        if error is HTTPParserError {
            return WaitingRoomError(.invalidResponse, message: "\(url): not a valid HTTP response (\(error))")
        }
        return WaitingRoomError(.networkOffline, message: "\(url): \(error)")
    }
}
