#if Vapor
    import Foundation
    import WaitingRoom
    import WaitingRoomGateTestSupport

    /// What a visitor sees of one gated answer, with the parts that differ between two correct runs
    /// (a token's or cookie's fresh value, a timestamp) blanked, so the Hummingbird and Vapor
    /// adapters' answers to the same request can be compared for equality.
    struct GateObservation: Equatable, CustomStringConvertible {
        var status: Int
        /// Whether the protected handler answered (its body is `upstream <path>`).
        var reachedHandler: Bool
        var location: String?
        var ajaxRedirect: String?
        /// Each `Set-Cookie`: its name, whether its value is empty, and its attribute names.
        var cookies: [String]
        var cacheControl: String?
        var pragma: String?
        var exposeHeaders: String?
        /// The gate's own text (a refusal's reason); nil when the handler answered.
        var gateText: String?

        init(_ r: WaitingRoom.HTTPResponse) {
            status = r.status
            let text = String(decoding: r.body, as: UTF8.self)
            reachedHandler = text.hasPrefix("upstream ")
            location = r.headers.value(for: "Location").map(Self.blankVolatile)
            ajaxRedirect = r.headers.value(for: "x-queueit-redirect").map(Self.blankVolatile)
            cookies = r.headers.values(for: "Set-Cookie").map(Self.cookieShape).sorted()
            cacheControl = r.headers.value(for: "Cache-Control")
            pragma = r.headers.value(for: "Pragma")
            exposeHeaders = r.headers.value(for: "Access-Control-Expose-Headers")
            gateText = reachedHandler ? nil : text
        }

        /// `ts=`, CrowdHandler's `ch-id=` and the `crowdhandler` token in a URL blanked (raw or
        /// percent-encoded).
        static func blankVolatile(_ url: String) -> String {
            var s = url
            for pattern in ["(ts(=|%3D))[0-9]+", "(ch-id(=|%3D))[^&%]+", "(st(:|%3A))[0-9]+"] {
                s = s.replacingOccurrences(of: pattern, with: "$1_", options: .regularExpression)
            }
            return s
        }

        /// `name=(empty|value); attr; attr` of one `Set-Cookie`, attribute values dropped (an expiry
        /// date moves with the clock).
        static func cookieShape(_ header: String) -> String {
            let parts = header.split(separator: ";", omittingEmptySubsequences: false).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let first = parts.first else { return "" }
            let name = first.prefix { $0 != "=" }
            let empty = first.dropFirst(name.count + 1).isEmpty
            let attributes = parts.dropFirst().map { $0.prefix { $0 != "=" }.lowercased() }
            return ([name + (empty ? "=(empty)" : "=(value)")] + attributes).joined(separator: "; ")
        }

        var description: String {
            "\(status) handler=\(reachedHandler) location=\(location ?? "-") ajax=\(ajaxRedirect ?? "-") cookies=\(cookies) "
                + "cache=\(cacheControl ?? "-") pragma=\(pragma ?? "-") expose=\(exposeHeaders ?? "-") text=\(gateText.map { "\"\($0)\"" } ?? "-")"
        }
    }
#endif
