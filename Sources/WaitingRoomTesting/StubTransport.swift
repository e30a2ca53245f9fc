import Synchronization
import WaitingRoom

/// A transport that answers from a closure (or throws what it throws) and records the requests:
/// for answers no emulator gives (abnormal statuses, timeouts everywhere). No network. (The one
/// copy every test target uses.)
package final class StubTransport: HTTPTransport, Sendable {
    private let answer: @Sendable (HTTPRequest) throws -> HTTPResponse
    private let log = Mutex<[HTTPRequest]>([])

    package init(_ answer: @escaping @Sendable (HTTPRequest) throws -> HTTPResponse) { self.answer = answer }

    /// Answers every request with `body` (status 200).
    package convenience init(body: String, status: Int = 200) {
        self.init { request in HTTPResponse(status: status, body: Array(body.utf8), url: request.url) }
    }

    package func send(_ request: HTTPRequest) async throws -> HTTPResponse {
        log.withLock { $0.append(request) }
        return try answer(request)
    }

    /// The requests sent so far, in order.
    package var requests: [HTTPRequest] { log.withLock { $0 } }
}
