import Foundation

/// The header rules of `waitingroom gate`'s forwarding: which fields never cross the proxy
/// (RFC 9110 §7.6.1's hop-by-hop fields and those a `Connection` header names), and the
/// `X-Forwarded-*` fields the upstream is told the visitor's address, scheme and host with.
enum GateProxyHeaders {
    /// Fields that describe one connection, not the message (lowercase). `Host` and
    /// `Content-Length` are set by the outbound client from the upstream URL and the body.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
        "transfer-encoding", "upgrade",
    ]

    /// Whether field `name` is forwarded, given the names a `Connection` header listed (lowercase).
    static func isForwarded(_ name: String, connectionListed: Set<String>) -> Bool {
        let lower = name.lowercased()
        return !hopByHop.contains(lower) && !connectionListed.contains(lower)
    }

    /// The field names listed in `Connection` header values (lowercase).
    static func connectionListed(_ connectionValues: [String]) -> Set<String> {
        var names: Set<String> = []
        for value in connectionValues {
            for token in value.split(separator: ",") {
                let name = token.trimmingCharacters(in: .whitespaces).lowercased()
                if !name.isEmpty { names.insert(name) }
            }
        }
        return names
    }

    /// The `X-Forwarded-For` value to send: the incoming one with the peer appended (as nginx's
    /// `$proxy_add_x_forwarded_for`), or the peer alone.
    static func forwardedFor(incoming: [String], peer: String?) -> String? {
        let previous = incoming.map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        let hops = previous + (peer.map { [$0] } ?? [])
        return hops.isEmpty ? nil : hops.joined(separator: ", ")
    }
}
