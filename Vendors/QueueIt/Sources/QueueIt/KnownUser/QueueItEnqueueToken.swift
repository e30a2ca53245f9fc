import Crypto
import Foundation
import _CryptoExtras

// Queue-it *enqueue tokens* (not the `queueittoken`): what an integrator's server hands a visitor
// so that the visitor may enter an invite-only waiting room (`runWithEnqueueToken`). Queue-it
// publishes generators for .NET, Java, JavaScript, PHP and Ruby (`queueit/QueueToken.V1.*`) but
// none for Swift; these types fill that gap for Swift servers and let the emulator check tokens.
//
// Format (facts from `queueit/QueueToken.V1.JavaScript` `src/Token.ts`, `src/model/HeaderDto.ts`,
// `src/model/PayloadDto.ts`, `src/QueueITHelpers.ts` @ 60f0134, and `queueit/QueueToken.V1.JAVA`
// `queuetoken/src/main/java/com/queue_it/queuetoken/EnqueueToken.java`,
// `models/PayloadDto.java`, `security/AesEncryption.java` @ 29e2dff):
//
//   base64url(header JSON) "." base64url(AES-256-CBC(payload JSON)) "." base64url(SHA-256(first two parts joined with "." + secretKey))
//
// * header keys, in this order: `typ` ("QT1"), `enc` ("AES256"), `iss` (issue time, epoch ms),
//   optional `exp` (expiry, epoch ms), `ti` (token identifier), `c` (customer id), optional `e`
//   (event id), optional `ip`, optional `xff`;
// * the payload is optional (an empty middle part); its JSON keys are `r` (relative quality,
//   a number), `k` (key), `cd` (custom data, an object of strings), each only when set;
// * AES key = SHA-256(secretKey as UTF-8), IV = MD5(token identifier as UTF-8), PKCS#7 padding;
// * the signature is a **plain** SHA-256 (not an HMAC) of the text before the last "." followed
//   by the secret key; base64url is unpadded, with `-` and `_`.

/// The header of an enqueue token.
package struct QueueItEnqueueTokenHeader: Sendable, Hashable {
    /// `typ`: the token version ("QT1").
    package var version: String
    /// `enc`: the payload encryption ("AES256").
    package var encryption: String
    /// `iss`: issue time, epoch milliseconds.
    package var issuedMillis: Int64
    /// `exp`: expiry, epoch milliseconds (nil: never expires).
    package var expiresMillis: Int64?
    /// `ti`: the token identifier (also the AES IV's source).
    package var tokenIdentifier: String
    /// `c`: the customer id.
    package var customerId: String
    /// `e`: the waiting room (event) id, when the token is for one room only.
    package var eventId: String?
    /// `ip`: the visitor's IP address, when bound.
    package var ipAddress: String?
    /// `xff`: the visitor's `X-Forwarded-For`, when bound.
    package var xForwardedFor: String?

    package init(
        issuedMillis: Int64, expiresMillis: Int64? = nil, tokenIdentifier: String, customerId: String,
        eventId: String? = nil, ipAddress: String? = nil, xForwardedFor: String? = nil,
        version: String = "QT1", encryption: String = "AES256"
    ) {
        self.version = version
        self.encryption = encryption
        self.issuedMillis = issuedMillis
        self.expiresMillis = expiresMillis
        self.tokenIdentifier = tokenIdentifier
        self.customerId = customerId
        self.eventId = eventId
        self.ipAddress = ipAddress
        self.xForwardedFor = xForwardedFor
    }

    /// The JSON text, keys in the generators' order.
    package var json: String {
        var s = "{\"typ\":\(QueueItJSONText.string(version)),\"enc\":\(QueueItJSONText.string(encryption)),\"iss\":\(issuedMillis)"
        if let exp = expiresMillis { s += ",\"exp\":\(exp)" }
        s += ",\"ti\":\(QueueItJSONText.string(tokenIdentifier)),\"c\":\(QueueItJSONText.string(customerId))"
        if let e = eventId, !e.isEmpty { s += ",\"e\":\(QueueItJSONText.string(e))" }
        if let ip = ipAddress, !ip.isEmpty { s += ",\"ip\":\(QueueItJSONText.string(ip))" }
        if let x = xForwardedFor, !x.isEmpty { s += ",\"xff\":\(QueueItJSONText.string(x))" }
        return s + "}"
    }
}

/// The (encrypted) payload of an enqueue token.
package struct QueueItEnqueueTokenPayload: Sendable, Hashable {
    /// `k`: a key, e.g. the visitor's id in the integrator's system.
    package var key: String?
    /// `r`: relative quality.
    package var relativeQuality: Double?
    /// `cd`: custom data.
    package var customData: [String: String]

    package init(key: String? = nil, relativeQuality: Double? = nil, customData: [String: String] = [:]) {
        self.key = key
        self.relativeQuality = relativeQuality
        self.customData = customData
    }

    /// The JSON text (`r`, `k`, `cd`, each only when set; custom data keys sorted).
    package var json: String {
        var parts: [String] = []
        if let r = relativeQuality, r.isFinite {
            parts.append("\"r\":" + (r == r.rounded() && abs(r) < 1e15 ? String(Int64(r)) : String(r)))
        }
        if let k = key { parts.append("\"k\":" + QueueItJSONText.string(k)) }
        if !customData.isEmpty {
            let cd = customData.keys.sorted().map { QueueItJSONText.string($0) + ":" + QueueItJSONText.string(customData[$0] ?? "") }
            parts.append("\"cd\":{" + cd.joined(separator: ",") + "}")
        }
        return "{" + parts.joined(separator: ",") + "}"
    }
}

/// A parsed, verified enqueue token.
package struct QueueItEnqueueToken: Sendable, Hashable {
    /// The token text.
    package var raw: String
    package var header: QueueItEnqueueTokenHeader
    /// The decrypted payload, when the token has one.
    package var payload: QueueItEnqueueTokenPayload?
}

/// Why an enqueue token was refused.
package enum QueueItEnqueueTokenError: String, Error, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// Not three dot-separated parts, an empty header or signature, or undecodable base64url.
    case malformed
    /// The signature does not match (tampered token or another secret key).
    case signature
    /// The header is not the expected JSON (`typ` QT1, `enc` AES256, `iss`, `ti`, `c`).
    case header
    /// The payload cannot be decrypted or is not a JSON object.
    case payload
    /// The token is for another customer.
    case customer
    /// The token names another waiting room (`e`).
    case event
    /// The token expired (`exp` before now).
    case expired

    package var description: String {
        switch self {
        case .malformed: return "the enqueue token is not three base64url parts separated by '.'"
        case .signature: return "the enqueue token's signature does not match"
        case .header: return "the enqueue token's header is not a QT1/AES256 header"
        case .payload: return "the enqueue token's payload cannot be decrypted"
        case .customer: return "the enqueue token is for another customer"
        case .event: return "the enqueue token is for another waiting room"
        case .expired: return "the enqueue token has expired"
        }
    }
}

/// Mints enqueue tokens the way Queue-it's `QueueToken.V1` generators do (see the file header).
package struct QueueItEnqueueTokenMinter: Sendable {
    /// The customer's secret key.
    package let secretKey: String

    package init(secretKey: String) { self.secretKey = secretKey }

    /// Mints a token.
    /// - Parameters:
    ///   - issuedAt: `iss`; `expiresAt`: `exp` (nil: the token never expires).
    ///   - tokenIdentifier: `ti`; a random UUID by default (the generators' default).
    ///   - payload: encrypted with AES-256-CBC; nil leaves the middle part empty.
    package func mint(
        customerId: String, eventId: String? = nil, issuedAt: Date, expiresAt: Date? = nil,
        tokenIdentifier: String = UUID().uuidString.lowercased(), ipAddress: String? = nil,
        xForwardedFor: String? = nil, payload: QueueItEnqueueTokenPayload? = nil
    ) -> String {
        let header = QueueItEnqueueTokenHeader(
            issuedMillis: Self.millis(issuedAt), expiresMillis: expiresAt.map(Self.millis), tokenIdentifier: tokenIdentifier,
            customerId: customerId, eventId: eventId, ipAddress: ipAddress, xForwardedFor: xForwardedFor)
        return mint(header: header, payload: payload)
    }

    /// Mints a token from a header (as given, including `typ`/`enc`) and an optional payload.
    package func mint(header: QueueItEnqueueTokenHeader, payload: QueueItEnqueueTokenPayload? = nil) -> String {
        var unsigned = QueueItBase64URL.encode(Array(header.json.utf8)) + "."
        if let payload {
            let sealed = (try? Self.encrypt(Array(payload.json.utf8), secretKey: secretKey, tokenIdentifier: header.tokenIdentifier)) ?? []
            unsigned += QueueItBase64URL.encode(sealed)
        }
        return unsigned + "." + Self.signature(unsigned, secretKey: secretKey)
    }

    static func millis(_ d: Date) -> Int64 { Int64((d.timeIntervalSince1970 * 1000).rounded(.down)) }

    /// base64url(SHA-256(text + secretKey)).
    static func signature(_ text: String, secretKey: String) -> String {
        QueueItBase64URL.encode(Array(SHA256.hash(data: Array((text + secretKey).utf8))))
    }

    static func aesKey(_ secretKey: String) -> SymmetricKey {
        SymmetricKey(data: Array(SHA256.hash(data: Array(secretKey.utf8))))
    }

    static func iv(_ tokenIdentifier: String) throws -> AES._CBC.IV {
        try AES._CBC.IV(ivBytes: Array(Insecure.MD5.hash(data: Array(tokenIdentifier.utf8))))
    }

    static func encrypt(_ plain: [UInt8], secretKey: String, tokenIdentifier: String) throws -> [UInt8] {
        Array(try AES._CBC.encrypt(plain, using: aesKey(secretKey), iv: iv(tokenIdentifier)))
    }

    static func decrypt(_ sealed: [UInt8], secretKey: String, tokenIdentifier: String) throws -> [UInt8] {
        Array(try AES._CBC.decrypt(sealed, using: aesKey(secretKey), iv: iv(tokenIdentifier)))
    }
}

/// Verifies enqueue tokens: format, signature, header, payload, customer, waiting room, expiry
/// (in that order). What Queue-it's server checks beyond the signature is not public; the order
/// and the event/expiry rules here are this project's (proposal, `Vendors/QueueIt/README.md`).
package struct QueueItEnqueueTokenValidator: Sendable {
    package let secretKey: String
    package let customerId: String
    /// The waiting room the token is presented to.
    package let eventId: String

    /// Tokens longer than this are refused unread.
    package static let maxTokenBytes = 8192

    package init(secretKey: String, customerId: String, eventId: String) {
        self.secretKey = secretKey
        self.customerId = customerId
        self.eventId = eventId
    }

    /// Verifies `token` at `now`. A token without `e` is accepted for every room of the customer;
    /// a token without `exp` never expires (both as the generators allow).
    @discardableResult
    package func validate(_ token: String, now: Date) throws(QueueItEnqueueTokenError) -> QueueItEnqueueToken {
        guard token.utf8.count <= Self.maxTokenBytes else { throw .malformed }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, !parts[0].isEmpty, !parts[2].isEmpty else { throw .malformed }
        let unsigned = parts[0] + "." + parts[1]
        let expected = QueueItEnqueueTokenMinter.signature(String(unsigned), secretKey: secretKey)
        guard QueueItHash.constantTimeEquals(expected, String(parts[2])) else { throw .signature }
        guard let headerBytes = QueueItBase64URL.decode(parts[0]) else { throw .malformed }
        let header = try Self.parseHeader(headerBytes)
        var payload: QueueItEnqueueTokenPayload?
        if !parts[1].isEmpty {
            guard let sealed = QueueItBase64URL.decode(parts[1]) else { throw .malformed }
            let plain: [UInt8]
            do {
                plain = try QueueItEnqueueTokenMinter.decrypt(sealed, secretKey: secretKey, tokenIdentifier: header.tokenIdentifier)
            } catch {
                throw .payload
            }
            payload = try Self.parsePayload(plain)
        }
        guard header.customerId == customerId else { throw .customer }
        if let e = header.eventId, e != eventId { throw .event }
        if let exp = header.expiresMillis, exp < QueueItEnqueueTokenMinter.millis(now) { throw .expired }
        return QueueItEnqueueToken(raw: token, header: header, payload: payload)
    }

    static func parseHeader(_ bytes: [UInt8]) throws(QueueItEnqueueTokenError) -> QueueItEnqueueTokenHeader {
        guard let obj = (try? JSONSerialization.jsonObject(with: Data(bytes), options: [])) as? [String: Any],
            let typ = obj["typ"] as? String, typ == "QT1", let enc = obj["enc"] as? String, enc == "AES256",
            let iss = QueueItJSON.int(obj["iss"]).map(Int64.init), let ti = obj["ti"] as? String, !ti.isEmpty,
            let c = obj["c"] as? String
        else { throw .header }
        var exp: Int64?
        if let raw = obj["exp"], !(raw is NSNull) {
            guard let v = QueueItJSON.int(raw).map(Int64.init) else { throw .header }
            exp = v
        }
        return QueueItEnqueueTokenHeader(
            issuedMillis: iss, expiresMillis: exp, tokenIdentifier: ti, customerId: c,
            eventId: obj["e"] as? String, ipAddress: obj["ip"] as? String,
            xForwardedFor: obj["xff"] as? String, version: typ, encryption: enc)
    }

    static func parsePayload(_ bytes: [UInt8]) throws(QueueItEnqueueTokenError) -> QueueItEnqueueTokenPayload {
        guard let obj = (try? JSONSerialization.jsonObject(with: Data(bytes), options: [])) as? [String: Any] else { throw .payload }
        var cd: [String: String] = [:]
        if let raw = obj["cd"] as? [String: Any] {
            for (k, v) in raw { cd[k] = (v as? String) ?? "\(v)" }
        }
        return QueueItEnqueueTokenPayload(key: obj["k"] as? String, relativeQuality: (obj["r"] as? NSNumber)?.doubleValue, customData: cd)
    }
}

/// Unpadded base64url (`-`, `_`), as the enqueue-token generators write it.
package enum QueueItBase64URL {
    package static func encode(_ bytes: [UInt8]) -> String {
        var s = Data(bytes).base64EncodedString()
        while s.hasSuffix("=") { s.removeLast() }
        return s.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
    }

    /// Decodes base64url with or without padding; nil on any other character.
    package static func decode<S: StringProtocol>(_ text: S) -> [UInt8]? {
        var s = String(text).replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
        guard !s.contains("=") || s.hasSuffix("=") else { return nil }
        while s.count % 4 != 0 { s += "=" }
        return Data(base64Encoded: s).map { Array($0) }
    }
}

/// JSON text helpers for hand-ordered objects.
enum QueueItJSONText {
    /// A JSON string literal.
    static func string(_ s: String) -> String {
        var out = "\""
        for u in s.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 { out += String(format: "\\u%04x", u.value) } else { out.unicodeScalars.append(u) }
            }
        }
        return out + "\""
    }
}
