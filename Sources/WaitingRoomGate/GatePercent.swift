/// Percent-encoding as the gate's routes and query parameters use it (RFC 3986 §2.1).
package enum GatePercent {
    /// `text` with each `%XX` escape decoded (and `+` as a space when `plusAsSpace`, the form
    /// encoding of a query); a `%` not followed by two hex digits is kept as it is.
    package static func decode(_ text: String, plusAsSpace: Bool = false) -> String {
        let bytes = Array(text.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(bytes.count)
        var i = 0
        while i < bytes.count {
            let b = bytes[i]
            if b == UInt8(ascii: "%"), i + 2 < bytes.count, let h = hexValue(bytes[i + 1]), let l = hexValue(bytes[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(b == UInt8(ascii: "+") && plusAsSpace ? UInt8(ascii: " ") : b)
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// `text` with every byte but the unreserved ones (`A-Z a-z 0-9 - . _ ~`) escaped: safe as a
    /// query parameter's value.
    package static func encodeComponent(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        let digits = Array("0123456789ABCDEF".utf8)
        for b in text.utf8 {
            switch b {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(b))
            default:
                out.unicodeScalars.append("%")
                out.unicodeScalars.append(Unicode.Scalar(digits[Int(b >> 4)]))
                out.unicodeScalars.append(Unicode.Scalar(digits[Int(b & 0xF)]))
            }
        }
        return out
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        default: nil
        }
    }
}
