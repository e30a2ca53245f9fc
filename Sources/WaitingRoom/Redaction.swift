/// Hides keys and tokens in log output unless revealing them was asked for.
package enum Redaction {
    /// `secret` itself when `reveal` is true; otherwise its first four characters and its length
    /// (`"abcd…(512 chars)"`), enough to tell two secrets apart in a log without leaking them.
    package static func redact(_ secret: String, reveal: Bool) -> String {
        if reveal { return secret }
        if secret.isEmpty { return "(empty)" }
        return "\(secret.prefix(4))…(\(secret.count) chars)"
    }
}
