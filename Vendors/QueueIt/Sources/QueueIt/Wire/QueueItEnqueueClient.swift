import Foundation
import Logging
import WaitingRoom

/// What one enqueue call needs: where, and the body.
package struct QueueItEnqueueCall: Sendable, Hashable {
    package var endpoint: QueueItEndpoint
    package var body: QueueItEnqueueBody

    package init(endpoint: QueueItEndpoint, body: QueueItEnqueueBody) {
        self.endpoint = endpoint
        self.body = body
    }

    /// The HTTP request: `Content-Type: application/json` and `Accept: application/json` (iOS
    /// `QueueITApiClient_NSURLConnection.m`; Android sends `application/json; charset=utf-8`),
    /// `User-Agent` = the body's `userAgent` (Android `QueueITApiClient`).
    package func httpRequest(timeout: Duration?) -> HTTPRequest {
        var headers: HTTPHeaderList = [("Content-Type", "application/json"), ("Accept", "application/json")]
        if !body.userAgent.isEmpty { headers.add("User-Agent", body.userAgent) }
        return HTTPRequest(
            method: "POST", url: endpoint.enqueueURL.absoluteString, headers: headers,
            body: body.encoded(), timeout: timeout, followRedirects: false)
    }
}

/// Runs enqueue calls with Queue-it's failure rules (docs/queueit-protocol.md §3): offline ⇒ -100 at once; 4xx ⇒
/// rejected with the HTTP status as code; anything else retried after 1, 2, 4, 8 s, then
/// unavailable (code 3). Every call starts a fresh backoff.
package struct QueueItEnqueueClient: Sendable {
    package let transport: any HTTPTransport
    package let clock: any WaitingRoomClock
    package let connectivity: any QueueItConnectivity
    package let policy: RetryPolicy
    package let logger: Logger
    /// Asked when an attempt fails on the network: no route to the host ⇒ `-100` at once.
    package let monitor: any ConnectivityMonitor

    package init(
        transport: any HTTPTransport, clock: any WaitingRoomClock, connectivity: any QueueItConnectivity = QueueItAssumeOnline(),
        policy: RetryPolicy = .queueIt, logger: Logger = Logger(label: "waitingroom.queueit"),
        monitor: any ConnectivityMonitor = AssumeOnline()
    ) {
        self.transport = transport
        self.clock = clock
        self.connectivity = connectivity
        self.monitor = monitor
        self.policy = policy
        self.logger = logger
    }

    struct OfflineAbort: Error {}

    static let vendor = QueueItConfiguration.vendorID

    static var offlineError: WaitingRoomError {
        WaitingRoomError(
            .networkOffline, vendor: vendor, vendorCode: QueueItErrorCode.networkUnavailable.rawValue,
            message: QueueItErrorCode.networkUnavailable.message)
    }

    /// Enqueues once (with retries) and returns the decoded answer. When the retries are used
    /// up the error carries exactly the vendor's message ("Error! Queue is unavailable.", code 3);
    /// the last failure is in `details["lastFailure"]` (and its HTTP status, if any, in
    /// `details["lastStatus"]`).
    package func enqueue(_ call: QueueItEnqueueCall) async throws -> QueueItEnqueueResponse {
        try await enqueue(call, onRetry: { _, _, _ in })
    }

    /// ``enqueue(_:)`` that tells `onRetry` before each retry: its number (1-based), the wait
    /// before it, and the failure; `-100` also comes when an attempt fails while ``monitor``
    /// says the device has no route to the waiting-room host.
    package func enqueue(
        _ call: QueueItEnqueueCall, onRetry: @escaping @Sendable (Int, Duration, WaitingRoomError) -> Void
    ) async throws -> QueueItEnqueueResponse {
        if connectivity.isOffline { throw Self.offlineError }
        do {
            return try await attempts(call, onRetry: onRetry)
        } catch let e as WaitingRoomError where e.kind == .unavailable && e.vendorCode == QueueItErrorCode.queueUnavailable.rawValue {
            throw Self.unavailable(from: e)
        }
    }

    /// The vendor's unavailable report for an exhausted run: the core policy's error with the
    /// message reset to the vendor's text and the failure detail moved to `details`.
    static func unavailable(from e: WaitingRoomError) -> WaitingRoomError {
        let vendorText = QueueItErrorCode.queueUnavailable.message
        var details = e.details
        var detail = e.message
        if detail.hasPrefix(vendorText) { detail = String(detail.dropFirst(vendorText.count)) }
        detail = detail.trimmingCharacters(in: .whitespaces)
        if detail.hasPrefix("("), detail.hasSuffix(")") { detail = String(detail.dropFirst().dropLast()) }
        if detail.hasPrefix("last failure: ") { detail = String(detail.dropFirst("last failure: ".count)) }
        if !detail.isEmpty { details["lastFailure"] = detail }
        return WaitingRoomError(
            .unavailable, vendor: vendor, vendorCode: QueueItErrorCode.queueUnavailable.rawValue,
            message: vendorText, details: details)
    }

    func attempts(
        _ call: QueueItEnqueueCall, onRetry: @escaping @Sendable (Int, Duration, WaitingRoomError) -> Void
    ) async throws -> QueueItEnqueueResponse {
        let transport = self.transport
        let connectivity = self.connectivity
        let monitor = self.monitor
        let logger = self.logger
        let policy = self.policy
        let host = call.endpoint.enqueueURL.host
        do {
            return try await policy.run(
                clock: clock, vendor: Self.vendor,
                onRetry: { n, error in
                    logger.debug("enqueue retry", metadata: ["retry": "\(n)", "error": "\(error)"])
                    onRetry(n, policy.delay(beforeRetry: n - 1), error)
                }
            ) { attempt, timeout in
                // Each retry re-checks connectivity; going offline mid-retry reports -100 (iOS stops silently).
                if connectivity.isOffline { throw OfflineAbort() }
                let response: HTTPResponse
                do {
                    var request = call.httpRequest(timeout: timeout)
                    request.label = VendorRequestLabel(vendor: Self.vendor, kind: "enqueue", attempt: attempt)
                    response = try await transport.send(request)
                } catch let e as WaitingRoomError where e.kind == .networkOffline || e.kind == .networkTimeout {
                    // No route to the host at all: the device is offline (-100 at once, no retry).
                    if monitor.isOffline(host: host) { throw OfflineAbort() }
                    throw e
                }
                switch QueueItEnqueueResult.classify(status: response.status, body: response.body) {
                case .success(let r):
                    return r
                case .rejected(let code, let message):
                    throw WaitingRoomError(.rejected, vendor: Self.vendor, vendorCode: code, message: message)
                case .retryable(let message):
                    throw WaitingRoomError(
                        response.status == 200 ? .invalidResponse : .server, vendor: Self.vendor,
                        vendorCode: response.status, message: message)
                }
            }
        } catch is OfflineAbort {
            throw Self.offlineError
        }
    }
}
