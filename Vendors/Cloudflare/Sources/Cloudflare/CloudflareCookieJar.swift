import Foundation
import WaitingRoom

/// The waiting-room cookies of one visitor, and nothing else: `__cfwaitingroom` (and the room's
/// custom-suffix form) as the edge set them with `Set-Cookie`, sent back as `Cookie` on every
/// request — Cloudflare treats a request without it as a new visitor at the back of the line.
/// Other cookies (the origin's session, analytics) are not kept: they are the app's business.
package struct CloudflareCookieJar: Sendable, Hashable {
    /// Cookie names kept, by prefix: `__cfwaitingroom` and `__cf_waitingroom` (the suffixed form
    /// some schema texts name).
    package static let namePrefixes = ["__cfwaitingroom", "__cf_waitingroom"]

    /// The cookies kept, by name.
    package private(set) var cookies: [String: String]

    /// An empty jar (a new visitor), or one holding `cookies`.
    package init(cookies: [String: String] = [:]) { self.cookies = cookies }

    /// A jar from a `Cookie` header value (`name=value; name2=value2`), keeping only waiting-room cookies.
    package init(cookieHeader: String) {
        var kept: [String: String] = [:]
        for part in cookieHeader.split(separator: ";") {
            let pair = part.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            if pair.count == 2, Self.isWaitingRoomCookie(pair[0]) { kept[pair[0]] = pair[1] }
        }
        cookies = kept
    }

    /// Whether `name` is a waiting-room cookie this jar keeps.
    package static func isWaitingRoomCookie(_ name: String) -> Bool { namePrefixes.contains { name.hasPrefix($0) } }

    /// Nothing held: the next request is a new visitor's.
    package var isEmpty: Bool { cookies.isEmpty }

    /// The `Cookie` header value to send (nil when empty), names in order.
    package var header: String? {
        guard !cookies.isEmpty else { return nil }
        return cookies.keys.sorted().map { "\($0)=\(cookies[$0] ?? "")" }.joined(separator: "; ")
    }

    /// Takes in the waiting-room cookies of a response's `Set-Cookie` fields; a cookie with
    /// `Max-Age=0` (or negative) or an empty value is removed. Returns whether any was set.
    @discardableResult
    package mutating func store(_ headers: HTTPHeaderList) -> Bool {
        var touched = false
        for line in headers.values(for: "Set-Cookie") {
            let parts = line.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = parts.first else { continue }
            let pair = first.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false).map(String.init)
            guard pair.count == 2, Self.isWaitingRoomCookie(pair[0]) else { continue }
            touched = true
            let expired = parts.dropFirst().contains { attribute in
                let kv = attribute.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
                guard kv.count == 2, kv[0].caseInsensitiveCompare("Max-Age") == .orderedSame, let n = Int(kv[1]) else { return false }
                return n <= 0
            }
            if expired || pair[1].isEmpty { cookies[pair[0]] = nil } else { cookies[pair[0]] = pair[1] }
        }
        return touched
    }

    /// Forgets every cookie (a new visitor).
    package mutating func clear() { cookies = [:] }
}
