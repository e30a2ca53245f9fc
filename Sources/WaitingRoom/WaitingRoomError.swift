/// The one error type of the SDK: a small closed set of kinds, plus what the vendor said.
///
/// `kind` is what a program switches on; `vendorCode` and `message` keep the vendor's own
/// report (NetFUNNEL `1001`, Queue-it `-100`, an HTTP status, …); `field` names the offending
/// configuration field when there is one.
public struct WaitingRoomError: Error, Hashable, Sendable, Codable, CustomStringConvertible {
    /// What went wrong, vendor-neutral.
    public enum Kind: String, Hashable, Sendable, Codable, CaseIterable {
        /// The network is unreachable: connection refused or reset, host not found, offline.
        case networkOffline
        /// No complete answer arrived before the deadline.
        case networkTimeout
        /// The vendor answered with a server-side error code.
        case server
        /// The vendor is unavailable after every retry the policy allows.
        case unavailable
        /// The vendor rejected the request (HTTP 4xx or equivalent); not retried.
        case rejected
        /// The SDK was configured wrongly; `field` names the setting.
        case invalidConfiguration
        /// The vendor's answer could not be understood.
        case invalidResponse
        /// The API was used in a way its contract does not allow (a finished session reused,
        /// a duplicate enqueue refused, …).
        case invalidUse
    }

    /// What went wrong.
    public var kind: Kind
    /// The vendor id, when a vendor was involved.
    package var vendor: String?
    /// The vendor's own code for this failure, when it has one.
    public var vendorCode: Int?
    /// A message a person can act on.
    public var message: String
    /// The configuration field at fault, for `.invalidConfiguration`.
    package var field: String?
    /// Vendor details kept for diagnosis, for example the server's own result code when the
    /// vendor's SDK reports a different one (NetFUNNEL reports every server error as 500 and
    /// keeps the server's code as `serverCode`).
    package var details: [String: String]

    /// Creates an error.
    public init(
        _ kind: Kind, vendor: String? = nil, vendorCode: Int? = nil, message: String, field: String? = nil,
        details: [String: String] = [:]
    ) {
        self.kind = kind
        self.vendor = vendor
        self.vendorCode = vendorCode
        self.message = message
        self.field = field
        self.details = details
    }

    private enum CodingKeys: String, CodingKey { case kind, vendor, vendorCode, message, field, details }

    /// Decodes an error; `details` may be missing (errors stored before it existed).
    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        kind = try c.decode(Kind.self, forKey: .kind)
        vendor = try c.decodeIfPresent(String.self, forKey: .vendor)
        vendorCode = try c.decodeIfPresent(Int.self, forKey: .vendorCode)
        message = try c.decode(String.self, forKey: .message)
        field = try c.decodeIfPresent(String.self, forKey: .field)
        details = try c.decodeIfPresent([String: String].self, forKey: .details) ?? [:]
    }

    /// Encodes the error (`details` only when there are any).
    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(kind, forKey: .kind)
        try c.encodeIfPresent(vendor, forKey: .vendor)
        try c.encodeIfPresent(vendorCode, forKey: .vendorCode)
        try c.encode(message, forKey: .message)
        try c.encodeIfPresent(field, forKey: .field)
        if !details.isEmpty { try c.encode(details, forKey: .details) }
    }

    /// A configuration error naming `field`.
    package static func invalidConfiguration(field: String, _ message: String, vendor: String? = nil) -> WaitingRoomError {
        WaitingRoomError(.invalidConfiguration, vendor: vendor, message: "\(field): \(message)", field: field)
    }

    /// A setting outside its documented range.
    package static func outOfRange<T: Comparable & CustomStringConvertible>(
        field: String, value: T, range: ClosedRange<T>, unit: String = "", vendor: String? = nil
    ) -> WaitingRoomError {
        let suffix = unit.isEmpty ? "" : " \(unit)"
        return .invalidConfiguration(
            field: field,
            "\(value)\(suffix) is out of range; allowed \(range.lowerBound)…\(range.upperBound)\(suffix)",
            vendor: vendor
        )
    }

    /// True for failures worth another attempt under a retry policy: everything but
    /// rejections, configuration errors and misuse.
    package var isRetryable: Bool {
        switch kind {
        case .rejected, .invalidConfiguration, .invalidUse: return false
        case .networkOffline, .networkTimeout, .server, .unavailable, .invalidResponse: return true
        }
    }

    /// The vendor status this error stands for (code 0 when the vendor gave none).
    package var status: VendorStatus {
        VendorStatus(vendor: vendor ?? "", code: vendorCode ?? 0, message: message)
    }

    public var description: String {
        var text = "\(kind.rawValue)"
        if let vendor {
            text += " [\(vendor)" + (vendorCode.map { " \($0)" } ?? "") + "]"
        } else if let vendorCode {
            text += " [\(vendorCode)]"
        }
        return text + ": " + message
    }
}
