import WaitingRoomGate

/// The header rules of `waitingroom gate`'s forwarding: which fields never cross the proxy
/// (RFC 9110 §7.6.1's hop-by-hop fields and those a `Connection` header names), and the
/// `X-Forwarded-*` fields the upstream is told the visitor's address, scheme and host with.
enum GateProxyHeaders {
    /// Fields that describe one connection, not the message (lowercase). `Host` becomes the
    /// upstream's; `Content-Length` passes as sent (the body streams unchanged), and a chunked
    /// body is sent on chunked again.
    static let hopByHop: Set<String> = [
        "connection", "keep-alive", "proxy-authenticate", "proxy-authorization", "proxy-connection", "te", "trailer",
        "transfer-encoding", "upgrade"
    ]

    /// Fields a `Connection` header may name but the gate never drops (lowercase): the framing
    /// (which the gate writes itself from what it parsed, RFC 9112 §6), `Host`, and what a
    /// decision reads (`Cookie`, `Authorization`, the Queue-it token and AJAX headers, the client
    /// address and language). A visitor who names `Content-Length` in `Connection` would
    /// otherwise have the body re-framed into a second request the gate never checked; one who
    /// names `Cookie` would strip the app's session. The engine adds the fields its triggers read
    /// (``GateEngine/consultedHeaderNames``).
    static let neverDropped: Set<String> = [
        "content-length", "transfer-encoding", "host", "cookie", "authorization", "user-agent", "accept-language",
        "x-queueittoken", "x-queueit-ajaxpageurl", "x-forwarded-for", "x-forwarded-proto", "x-forwarded-host", "forwarded", "x-real-ip"
    ]

    /// Fields some servers and frameworks read as the request's real target (IIS and Symfony's
    /// `X-Original-URL`/`X-Rewrite-URL`, nginx's `X-Original-URI`): the app would serve another
    /// path than the one the gate decided on, so they never reach it.
    static let neverForwarded: Set<String> = ["x-original-url", "x-rewrite-url", "x-original-uri"]

    /// Whether `name` is one of ``neverForwarded`` (any case).
    static func isNeverForwarded(_ name: String) -> Bool {
        switch name.utf8.count {
        case 13, 14: return neverForwarded.contains { name.equalsIgnoringASCIICase($0) }
        default: return false
        }
    }

    /// Fields that name the client's address (lowercase): taken from a trusted proxy only; from
    /// anyone else they are dropped (`X-Forwarded-For` is then the peer alone).
    static let clientAddressFields: Set<String> = ["x-forwarded-for", "forwarded", "x-real-ip"]

    /// Whether `name` is one of ``clientAddressFields`` (any case).
    static func isClientAddressField(_ name: String) -> Bool {
        switch name.utf8.count {
        case 9, 15: return clientAddressFields.contains { name.equalsIgnoringASCIICase($0) }
        default: return false
        }
    }

    /// Whether `name` is a hop-by-hop field (any case), without allocating.
    static func isHopByHop(_ name: String) -> Bool {
        switch name.utf8.count {
        case 2, 7, 10, 16, 17, 18, 19: return hopByHop.contains { name.equalsIgnoringASCIICase($0) }
        default: return false
        }
    }

    /// The field names listed in `Connection` header values (lowercase), minus the hop-by-hop
    /// ones and `close` (dropped anyway): usually empty.
    static func connectionListed(_ connectionValues: [String]) -> Set<String> {
        var names: Set<String> = []
        for value in connectionValues {
            // the usual values name nothing to drop
            if value.equalsIgnoringASCIICase("keep-alive") || value.equalsIgnoringASCIICase("close") { continue }
            for token in value.split(separator: ",") {
                let lower = trimmed(token).lowercased()
                if !lower.isEmpty, lower != "close", !hopByHop.contains(lower) { names.insert(lower) }
            }
        }
        return names
    }

    /// Whether `text` may stand in a header field: no CR, LF or NUL (the gate's own answers carry
    /// URLs and cookies built from the request; forwarded fields were parsed, so they cannot hold these).
    static func isSafeFieldText(_ text: String) -> Bool {
        var text = text
        // on the contiguous UTF-8 in place (a pass header is checked on every forwarded answer)
        return text.withUTF8 { bytes in !bytes.contains { $0 == 0x0d || $0 == 0x0a || $0 == 0 } }
    }

    /// The `X-Forwarded-For` value to send: the incoming one (several fields joined with `,`)
    /// with the peer appended (as nginx's `$proxy_add_x_forwarded_for`), or the peer alone.
    static func forwardedFor(incoming: String?, peer: String?) -> String? {
        guard let incoming else { return peer }
        let previous = incoming.split(separator: ",").map { trimmed($0) }.filter { !$0.isEmpty }
        let hops = previous + (peer.map { [$0] } ?? [])
        return hops.isEmpty ? nil : hops.joined(separator: ", ")
    }

    /// `text` without spaces and tabs at either end.
    static func trimmed(_ text: Substring) -> String {
        var text = text
        while let first = text.first, first == " " || first == "\t" { text = text.dropFirst() }
        while let last = text.last, last == " " || last == "\t" { text = text.dropLast() }
        return String(text)
    }
}
