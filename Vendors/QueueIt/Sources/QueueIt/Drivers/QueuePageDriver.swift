import Foundation
import Logging
import WaitingRoom

/// The queue page a session waits on: where it is, where it leads, and how to read navigations.
public struct QueueItQueuePage: Sendable, Hashable {
    public var queueURL: URL
    public var targetURL: URL
    package var classifier: QueueItNavigationClassifier

    package init(queueURL: URL, targetURL: URL, pathPrefix: String? = nil) {
        self.queueURL = queueURL
        self.targetURL = targetURL
        self.classifier = QueueItNavigationClassifier(queueURL: queueURL, targetURL: targetURL, pathPrefix: pathPrefix)
    }
}

/// Things that happen on the queue page that are not an end (the SDK's delegate callbacks).
package enum QueuePageEvent: Sendable, Hashable {
    /// A navigation on the queue host (`notifyQueueUrlChanged`).
    case queueURLChanged(URL)
    /// A position read from the page.
    case progress(QueueProgress)
    /// The page body has the class `exit` (`notifyUserExited`).
    case userExited
    /// A link to elsewhere was activated; the host should open it outside the queue view.
    case externalLink(URL)
    /// A load of the page failed and is tried again (`attempt`, 1-based) after `wait`; the
    /// session reports it as a `reconnecting` connection state.
    case reconnecting(attempt: Int, wait: Duration, failure: String)
}

/// How waiting on a queue page ends.
public enum QueuePageResult: Sendable, Hashable {
    /// The target URL was reached; the token from its `queueittoken` (may be nil).
    case passed(token: String?)
    /// `queueit://close` (or the task was cancelled).
    case closed
    /// `queueit://restartSession`.
    case restartSession
    /// The page could not be followed.
    case failed(WaitingRoomError)
}

/// What a driver can use while it waits.
public struct QueuePageContext: Sendable {
    package var transport: any HTTPTransport
    package var clock: any WaitingRoomClock
    package var logger: Logger
    package var userAgent: String
    /// Reports a non-terminal page event.
    package var emit: @Sendable (QueuePageEvent) -> Void

    package init(
        transport: any HTTPTransport, clock: any WaitingRoomClock, logger: Logger, userAgent: String,
        emit: @escaping @Sendable (QueuePageEvent) -> Void
    ) {
        self.transport = transport
        self.clock = clock
        self.logger = logger
        self.userAgent = userAgent
        self.emit = emit
    }
}

/// Waits through a queue page without a web view (docs/queueit-protocol.md §4, §9). Requirements: return on
/// the first terminal navigation (passed, close, restart) or failure; on task cancellation
/// return `.closed` promptly; report queue-URL changes, progress and exits with `context.emit`.
public protocol QueuePageDriver: Sendable {
    func wait(on page: QueueItQueuePage, context: QueuePageContext) async -> QueuePageResult
}
