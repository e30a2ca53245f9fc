import Foundation
import NetFUNNEL
import WaitingRoom

/// One `/ts.wseq` request as the state machine sees it (query already decoded).
package struct NetFUNNELIncomingRequest: Sendable, Equatable {
    /// Query parameters (last value wins), names as sent.
    package var parameters: [String: String]
    /// The client's address, for lists and Repeated Request Block.
    package var clientIP: String
    /// Host and port the request was sent to (for `ip`/`port` in replies).
    package var host: String
    package var port: Int

    package init(parameters: [String: String], clientIP: String = "127.0.0.1", host: String = "127.0.0.1", port: Int = 80) {
        self.parameters = parameters
        self.clientIP = clientIP
        self.host = host
        self.port = port
    }

    /// The opcode, if it is a number (spaces and tabs around it ignored).
    package var opcode: Int? {
        guard let text = parameters["opcode"] else { return nil }
        // decoded queries arrive trimmed: Foundation only for text with blanks at an end
        if let first = text.utf8.first, let last = text.utf8.last, first > 0x20, first < 0x80, last > 0x20, last < 0x80 {
            return Int(text)
        }
        return Int(text.trimmingCharacters(in: .whitespaces))
    }
    /// JS dialect when `js` is `yes` or `true` (any case).
    package var wantsJavaScript: Bool {
        guard let js = parameters["js"] else { return false }
        return Self.equalsIgnoringASCIICase(js, "yes") || Self.equalsIgnoringASCIICase(js, "true")
    }

    /// `text.lowercased() == lowercase` for an ASCII, lower-case `lowercase` (no non-ASCII
    /// character lowercases to ASCII letters other than `k`, which no caller asks for).
    static func equalsIgnoringASCIICase(_ text: String, _ lowercase: StaticString) -> Bool {
        guard text.utf8.count == lowercase.utf8CodeUnitCount else { return false }
        let expected = lowercase.utf8Start
        var i = 0
        for byte in text.utf8 {
            let folded = byte >= 0x41 && byte <= 0x5A ? byte | 0x20 : byte
            guard folded == expected[i] else { return false }
            i += 1
        }
        return true
    }
}
