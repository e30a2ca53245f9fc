import WaitingRoom

/// What one request to a protected URL came back with, classified.
package enum CloudflareAnswer: Sendable, Hashable {
    /// In the waiting room: the JSON-mode reply and the HTTP status it came with (the room's
    /// `queueing_status_code`: 200, 202 or 429).
    case queued(CloudflareWaitingRoomReply, httpStatus: Int)
    /// The origin's own response: the request went through (2xx or 3xx, no `cfWaitingRoom`
    /// body). `cookieSet` says whether a waiting-room cookie was set or held (false: the room is
    /// suspended or absent); `revoked` whether the origin sent `Cf-Waiting-Room-Command: revoke`.
    case origin(OriginResponse)

    /// The origin's response as the client saw it.
    package struct OriginResponse: Sendable, Hashable {
        /// The HTTP status.
        package var status: Int
        /// The response's headers.
        package var headers: HTTPHeaderList
        /// The response's body.
        package var body: [UInt8]
        /// Whether the visitor holds a waiting-room cookie after this response.
        package var cookieHeld: Bool
        /// Whether the origin revoked the visitor's session (`Cf-Waiting-Room-Command: revoke`).
        package var revoked: Bool

        package init(status: Int, headers: HTTPHeaderList = [], body: [UInt8] = [], cookieHeld: Bool, revoked: Bool = false) {
            self.status = status
            self.headers = headers
            self.body = body
            self.cookieHeld = cookieHeld
            self.revoked = revoked
        }
    }
}
