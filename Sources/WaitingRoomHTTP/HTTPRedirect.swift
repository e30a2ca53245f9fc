import Foundation
import WaitingRoom

/// Following the redirects of one request (``HTTPRequest/followRedirects``), as
/// AsyncHTTPClient's `.follow(max: 10, allowCycles: false)` did, with every `Location` checked
/// before a request is made from it:
///
/// - 301, 302, 303, 307 and 308 with a `Location` are followed; another status, or a 3xx
///   without one, is the answer;
/// - the location is resolved against the URL it answered, and must be `http` or `https` (another
///   scheme: the 3xx is the answer);
/// - a location whose port is over 65535 is `.invalidResponse` (the server's fault);
/// - more than ``limit`` redirects, or one to a URL already visited, is `.invalidResponse`;
/// - 303 turns every method but HEAD into GET, and 301 and 302 turn POST into GET, without the
///   body, `Content-Length` and `Content-Type`;
/// - to another origin (scheme, host or port), `Cookie`, `Authorization`, `Proxy-Authorization`
///   and `Origin` are dropped.
struct HTTPRedirect {
    /// The most redirects one request follows.
    static let limit = 10

    private var current: HTTPRequest
    private var visited: [String]

    init(_ request: HTTPRequest) {
        current = request
        visited = [request.url]
    }

    /// The request that follows `response` (the answer to the last request), or nil when it is
    /// the final answer.
    /// - Throws: `.invalidResponse` for too many redirects, a cycle, or a location no request can
    ///   be made for.
    mutating func next(after response: HTTPResponse) throws -> HTTPRequest? {
        guard [301, 302, 303, 307, 308].contains(response.status), let location = response.headers.value(for: "location"),
            let base = URL(string: current.url), let resolved = URL(string: location, relativeTo: base)?.absoluteURL,
            let scheme = resolved.scheme?.lowercased(), scheme == "http" || scheme == "https", resolved.host != nil
        else {
            return nil
        }
        if let port = resolved.port, !(0...65535).contains(port) {
            throw WaitingRoomError(
                .invalidResponse,
                message:
                    "\(AsyncHTTPTransport.shown(current.url)): redirected to \(AsyncHTTPTransport.shown(location)), whose port \(port) is not 0…65535"
            )
        }
        let target = resolved.absoluteString
        guard visited.count <= Self.limit else {
            throw WaitingRoomError(.invalidResponse, message: "\(AsyncHTTPTransport.shown(visited[0])): more than \(Self.limit) redirects")
        }
        guard !visited.contains(target) else {
            throw WaitingRoomError(
                .invalidResponse,
                message: "\(AsyncHTTPTransport.shown(visited[0])): a redirect cycle back to \(AsyncHTTPTransport.shown(target))")
        }
        visited.append(target)

        var next = current
        next.url = target
        let method = current.method.uppercased()
        if (response.status == 303 && method != "HEAD") || ([301, 302].contains(response.status) && method == "POST") {
            next.method = "GET"
            next.body = nil
            next.headers.fields.removeAll { Self.named($0.name, in: ["content-length", "content-type"]) }
        }
        if !Self.sameOrigin(base, resolved) {
            next.headers.fields.removeAll { Self.named($0.name, in: ["cookie", "authorization", "proxy-authorization", "origin"]) }
        }
        current = next
        return next
    }

    private static func named(_ name: String, in names: Set<String>) -> Bool { names.contains(name.lowercased()) }

    private static func sameOrigin(_ a: URL, _ b: URL) -> Bool {
        func port(_ url: URL) -> Int? { url.port ?? (url.scheme?.lowercased() == "https" ? 443 : 80) }
        return a.scheme?.lowercased() == b.scheme?.lowercased() && a.host?.lowercased() == b.host?.lowercased() && port(a) == port(b)
    }
}
