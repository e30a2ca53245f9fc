import NIOConcurrencyHelpers

/// Counts the requests that reached a protected handler (none may, when the gate refuses).
/// Behind NIO's lock, which ThreadSanitizer sees.
public final class UpstreamCounter: Sendable {
    let hits = NIOLockedValueBox<[String]>([])

    public init() {}

    /// Records that `path`'s handler ran.
    public func hit(_ path: String) { hits.withLockedValue { $0.append(path) } }
    /// How many requests reached a handler.
    public var count: Int { hits.withLockedValue { $0.count } }
    /// The paths that reached a handler, in order.
    public var paths: [String] { hits.withLockedValue { $0 } }
}
