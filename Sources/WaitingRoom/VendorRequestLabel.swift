/// What a request is to its vendor: set by the vendor backend on each ``HTTPRequest`` so the
/// environment's metrics and traces can name it (bounded: no user id, no key).
public struct VendorRequestLabel: Sendable, Hashable {
    /// The vendor id.
    package var vendor: String
    /// The vendor's name for the request: a NetFUNNEL opcode (`5101`), `enqueue`, `requests`, …
    package var kind: String
    /// 0 for the first attempt, 1, 2, … for retries.
    package var attempt: Int

    /// Creates a label.
    public init(vendor: String, kind: String, attempt: Int = 0) {
        self.vendor = vendor
        self.kind = kind
        self.attempt = attempt
    }
}
