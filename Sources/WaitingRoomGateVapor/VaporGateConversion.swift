#if Vapor
    import Vapor
    import WaitingRoomGate

    /// A Vapor request head as the gate reads it: the ``GateRequest``, or the 400 for a head it
    /// cannot gate.
    enum VaporGateHead {
        case request(GateRequest)
        case refusal(GateResponse)

        /// Builds the gate's view of `request` as the Hummingbird middleware builds it: the authority
        /// is the `Host`, which is not among the headers (Hummingbird's HTTP/1 codec moves it to
        /// `:authority`), and a second `Host` is refused; an absolute-form target counts by its path and query (so does
        /// Hummingbird's); the peer is the connection's remote address.
        init(_ request: Request, origin: GateOrigin) {
            guard let target = Self.target(request.url) else {
                self = .refusal(.refusal(400, "the request target is not a path Vapor could parse"))
                return
            }
            var authority: String?
            var headers: [GateHeader] = []
            headers.reserveCapacity(request.headers.count)
            for (name, value) in request.headers {
                if name.count == 4, name.lowercased() == "host" {
                    // two Host fields (RFC 9112 §3.2): which one the app reads is not the gate's to guess
                    guard authority == nil else {
                        self = .refusal(.refusal(400, "the request has more than one Host header"))
                        return
                    }
                    authority = value
                    continue
                }
                headers.append(GateHeader(name, value))
            }
            let built: GateRequest
            do {
                built = try origin.request(
                    method: request.method.rawValue, target: target, authority: authority, headers: headers,
                    peer: request.remoteAddress?.ipAddress)
            } catch {
                self = .refusal(error.response)
                return
            }
            // Vapor routed the raw path before any middleware ran: a visitor whose path is not
            // canonical is sent to the canonical one, so the app only serves what the gate decided on.
            if let canonical = built.target, canonical != target {
                self = .refusal(.canonicalRedirect(to: canonical))
                return
            }
            self = .request(built)
        }

        /// The request target in origin form (`/path?query`); nil when Vapor could not parse it (its
        /// `URI` is then empty).
        static func target(_ url: URI) -> String? {
            let string = url.string
            if string.hasPrefix("/") { return string }
            guard url.host != nil else { return nil }
            let path = url.path.isEmpty ? "/" : url.path
            return url.query.map { path + "?" + $0 } ?? path
        }
    }

    extension Response {
        /// The Vapor answer for the gate's: its status, its headers in order (`Location`,
        /// `Set-Cookie`, no-cache, the AJAX `x-queueit-redirect`) and its text body.
        convenience init(gate answer: GateResponse) {
            var headers = HTTPHeaders()
            for header in answer.headers { headers.add(name: header.name, value: header.value) }
            self.init(status: HTTPResponseStatus(statusCode: answer.status), headers: headers, body: .init(string: answer.body))
        }
    }
#endif
