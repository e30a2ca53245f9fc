import WaitingRoom

extension CloudflareEmulatorConfiguration {
    /// A room's `cookie_attributes`: the `SameSite` and `Secure` attributes of the waiting-room
    /// cookie (API schema `cookie_attributes`; "Embed in an iFrame").
    package struct CookieAttributes: Sendable, Hashable {
        /// `samesite`: `auto` (default), `lax`, `none`, `strict`.
        package enum SameSite: String, Sendable, Hashable, CaseIterable {
            case auto, lax, none, strict
        }

        /// `secure`: `auto` (default), `always`, `never`.
        package enum Secure: String, Sendable, Hashable, CaseIterable {
            case auto, always, never
        }

        package var samesite: SameSite
        package var secure: Secure

        package init(samesite: SameSite = .auto, secure: Secure = .auto) {
            self.samesite = samesite
            self.secure = secure
        }

        /// The `SameSite` value sent. `auto` is Cloudflare's `lax`, or `none` with Always Use
        /// HTTPS; the emulator serves plain HTTP and has no such switch, so `auto` is `Lax`.
        package var sameSiteValue: String {
            switch samesite {
            case .auto, .lax: "Lax"
            case .none: "None"
            case .strict: "Strict"
            }
        }

        /// Whether `Secure` is sent. `auto` is Cloudflare's "never" without Always Use HTTPS, but
        /// with `samesite: none` it is set (proposal: browsers refuse `SameSite=None` without
        /// `Secure`, and Cloudflare refuses `none` with `never`).
        package var isSecure: Bool {
            switch secure {
            case .always: true
            case .never: false
            case .auto: samesite == .none
            }
        }

        /// The `Set-Cookie` value for the cookie `name=value` living `maxAge` seconds. `embedded`:
        /// the request came from an iframe (`Sec-Fetch-Dest: iframe`); a cross-site cookie
        /// (`SameSite=None; Secure`) is then `Partitioned` (CHIPS) so browsers that block
        /// third-party cookies still keep it (proposal: how the emulator detects the iframe).
        package func setCookie(name: String, value: String, maxAge: Int, embedded: Bool) -> String {
            var text = "\(name)=\(value); Path=/; Max-Age=\(maxAge); HttpOnly; SameSite=\(sameSiteValue)"
            if isSecure { text += "; Secure" }
            if embedded, samesite == .none, isSecure { text += "; Partitioned" }
            return text
        }

        /// The JSON form.
        package var json: JSONValue { .object(["samesite": .string(samesite.rawValue), "secure": .string(secure.rawValue)]) }
    }
}
