/// A reply an emulator computes synchronously for one of its hot requests (a NetFUNNEL
/// `/ts.wseq` call, a Queue-it enqueue), so the server can send it from the connection's event
/// loop without handing the request to a task (see `WaitingRoomEmulators`' `EmulatorServer`).
///
/// An emulator offers one only when the answer is exactly what its route would send: no fault is
/// pending for the request (faults may delay, drop or garble, which the route does), and the
/// request is one it fully understands; otherwise it returns `nil` and the route answers.
package struct EmulatorInlineReply: Sendable, Equatable {
    /// The HTTP status code.
    package var status: Int
    /// `Content-Type`.
    package var contentType: String
    /// Further response headers, in order (name, value).
    package var headers: [Header]
    /// The body, sent as is.
    package var body: [UInt8]

    /// One response header.
    package struct Header: Sendable, Equatable {
        package var name: String
        package var value: String

        package init(name: String, value: String) {
            self.name = name
            self.value = value
        }
    }

    package init(status: Int, contentType: String, headers: [Header] = [], body: [UInt8]) {
        self.status = status
        self.contentType = contentType
        self.headers = headers
        self.body = body
    }
}
