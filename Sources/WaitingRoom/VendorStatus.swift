/// What a vendor said, kept verbatim: its own status code and message.
///
/// Every ``WaitingRoomEvent`` carries one, so nothing the vendor reported is lost in the
/// vendor-neutral model.
public struct VendorStatus: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The vendor id (`"netfunnel"`, `"queueit"`, …).
    package var vendor: String
    /// The vendor's own status or error code (NetFUNNEL result code, Queue-it error code or HTTP status).
    public var code: Int
    /// The vendor's message, or a description of the code.
    public var message: String

    /// Creates a status.
    public init(vendor: String, code: Int, message: String) {
        self.vendor = vendor
        self.code = code
        self.message = message
    }

    public var description: String { "\(vendor) \(code) \(message)" }
}
