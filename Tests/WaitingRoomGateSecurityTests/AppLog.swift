import NIOConcurrencyHelpers

/// What reached the protected app behind a gate: each request's target and headers, as the app's
/// framework handed them to its handler. Behind NIO's lock (ThreadSanitizer sees it).
final class AppLog: Sendable {
    struct Reached: Sendable {
        /// The request method.
        var method: String
        /// The request target as the framework gives it (path and query).
        var target: String
        /// Header fields, names lower-cased, in order.
        var headers: [(String, String)]
        /// How many body bytes the app read.
        var bodyBytes: Int

        func header(_ name: String) -> [String] { headers.filter { $0.0 == name }.map(\.1) }
    }

    private let reached = NIOLockedValueBox<[Reached]>([])

    func record(_ method: String, _ target: String, headers: [(String, String)], bodyBytes: Int) {
        reached.withLockedValue { $0.append(Reached(method: method, target: target, headers: headers, bodyBytes: bodyBytes)) }
    }

    var all: [Reached] { reached.withLockedValue { $0 } }
    var count: Int { reached.withLockedValue { $0.count } }
    func clear() { reached.withLockedValue { $0.removeAll() } }

    /// The requests whose path, read the way a lenient app reads it, is not an open one (it holds
    /// no `/static/`, the Ignore trigger's text): with no pass in the attacker's hands, every one
    /// of them got past the gate. `OPTIONS` is not gated (CORS preflights carry no cookie; KU-JS's
    /// sample and Queue-it's edge connectors let them through), so it is not counted.
    var unchecked: [String] { uncheckedRequests.map(\.target) }

    var uncheckedRequests: [Reached] { all.filter { $0.method != "OPTIONS" && !AppPathReading.isOpen($0.target) } }

    /// The form posts that reached the app: none may have held `queue-me` (the body trigger).
    var formPosts: [Reached] { all.filter { AppPathReading.lenient($0.target) == "/static/form" } }
}

/// How a lenient app could read a path, written for these tests apart from the gate's code: the
/// query cut, every percent-escape decoded (repeatedly, as some stacks decode twice), `\` read as
/// `/`, dot segments removed, repeated slashes merged. A gate is safe when no path it let
/// through without a pass reads, this way, as a protected one.
enum AppPathReading {
    /// Whether the app, reading `target` leniently, serves an open path.
    static func isOpen(_ target: String) -> Bool { lenient(target).contains(AttackConfiguration.openPrefix) }

    static func lenient(_ target: String) -> String {
        var path = String(target.prefix { $0 != "?" && $0 != "#" })
        for _ in 0..<3 {
            let decoded = path.removingPercentEncoding ?? path
            if decoded == path { break }
            path = decoded
        }
        path = path.replacingOccurrences(of: "\\", with: "/")
        var segments: [Substring] = []
        for segment in path.split(separator: "/", omittingEmptySubsequences: true) {
            if segment == "." { continue }
            if segment == ".." {
                if !segments.isEmpty { segments.removeLast() }
                continue
            }
            segments.append(segment)
        }
        let joined = "/" + segments.joined(separator: "/")
        // a trailing slash of the original keeps `/static/` recognisable
        return path.hasSuffix("/") && !segments.isEmpty ? joined + "/" : joined
    }
}
