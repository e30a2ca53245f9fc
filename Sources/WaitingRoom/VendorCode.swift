/// A vendor's table of status codes: one case per code the vendor sends or its client reports,
/// the raw value the number carried in ``VendorStatus/code``. Each vendor keeps its own table
/// (its cases and their messages); the lookups every table needs are here.
package protocol VendorCode: RawRepresentable, CaseIterable, Sendable where RawValue == Int {
    /// The vendor id the codes are reported under (``VendorStatus/vendor``).
    static var vendorID: String { get }
    /// A short description of the code.
    var message: String { get }
}

extension VendorCode {
    /// The status reporting this code, with `message` when the vendor gave one and the code's
    /// own description otherwise.
    package func status(_ message: String? = nil) -> VendorStatus {
        VendorStatus(vendor: Self.vendorID, code: rawValue, message: message ?? self.message)
    }

    /// The description of any integer code: the table's message for a code in it, `unknown`'s
    /// text for one that is not.
    package static func message(for code: Int, unknown: (Int) -> String) -> String {
        Self(rawValue: code)?.message ?? unknown(code)
    }
}
