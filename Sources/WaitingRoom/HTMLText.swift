/// Text for HTML: the one escape the project's pages use (the emulators' pages through the
/// emulator kit, NetFUNNEL's template page for hosts).
package enum HTMLText {
    /// `text` escaped for HTML text and attribute values (`&`, `<`, `>`, `"`, `'`).
    package static func escape(_ text: String) -> String {
        var out = ""
        out.reserveCapacity(text.utf8.count)
        for scalar in text.unicodeScalars {
            switch scalar {
            case "&": out += "&amp;"
            case "<": out += "&lt;"
            case ">": out += "&gt;"
            case "\"": out += "&quot;"
            case "'": out += "&#39;"
            default: out.unicodeScalars.append(scalar)
            }
        }
        return out
    }
}
