import Foundation

/// The checks and tidying a vendor's configuration applies to the URLs it is given.
package enum VendorURL {
    /// `text` as an absolute `http` or `https` URL with a host, or nil when it is not one.
    package static func http(_ text: String) -> URL? {
        guard let url = URL(string: text), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
            return nil
        }
        return url
    }

    /// `text` as an http(s) URL, or the configuration error naming `field` of `vendor`.
    package static func require(_ text: String, field: String, vendor: String) throws(WaitingRoomError) -> URL {
        guard let url = http(text) else {
            throw .invalidConfiguration(field: field, "expected an http(s) URL, got \"\(text)\"", vendor: vendor)
        }
        return url
    }

    /// `text` without one trailing `/` (paths are appended to a base URL with their own `/`).
    package static func base(_ text: String) -> String {
        text.hasSuffix("/") ? String(text.dropLast()) : text
    }
}
