/// A reply an emulator computes synchronously for one of its hot requests (a NetFUNNEL
/// `/ts.wseq` call, a Queue-it enqueue), so the server can send it from the connection's event
/// loop without handing the request to a task (see `WaitingRoomEmulators`' `EmulatorServer`).
///
/// An emulator offers one only when the answer is exactly what its route would send: no fault is
/// pending for the request (faults may delay, drop or garble, which the route does), and the
/// request is one it fully understands; otherwise it returns `nil` and the route answers.
public struct EmulatorInlineReply: Sendable, Equatable {
    /// The HTTP status code.
    public var status: Int
    /// `Content-Type`.
    public var contentType: String
    /// Further response headers, in order (name, value).
    public var headers: [Header]
    /// The body, sent as is.
    public var body: [UInt8]

    /// One response header.
    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String

        public init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    public init(status: Int, contentType: String, headers: [Header] = [], body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }
}
