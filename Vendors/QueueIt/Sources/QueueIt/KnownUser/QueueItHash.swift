import Crypto
import Foundation
import NIOConcurrencyHelpers

/// HMAC-SHA256 as Queue-it's KnownUser connectors compute it: key = the customer's secret key
/// (UTF-8), message = UTF-8 text, result = lower-case hex (docs/queueit-protocol.md §7.3).
package enum QueueItHash {
    /// Lower-case hex HMAC-SHA256 of `message` keyed with `secretKey`.
    package static func hmacHex(secretKey: String, message: String) -> String {
        hmacHex(secretKey: secretKey, bytes: Array(message.utf8))
    }

    /// Lower-case hex HMAC-SHA256 of `bytes` keyed with `secretKey`.
    package static func hmacHex(secretKey: String, bytes: [UInt8]) -> String {
        var mac = keyed(secretKey)
        mac.update(data: bytes)
        return hex(mac.finalize())
    }

    /// HMACs already keyed (the key's padding hashed in), by secret: a gate checks every request
    /// with the same few keys, and keying cost as much as the hash itself. At most 64 are kept.
    /// Behind NIO's lock, which ThreadSanitizer sees (it cannot see `Synchronization.Mutex` on Linux).
    private static let keyedCache = NIOLockedValueBox<[String: HMAC<SHA256>]>([:])

    /// An HMAC keyed with `secretKey`, from the cache when it is there.
    static func keyed(_ secretKey: String) -> HMAC<SHA256> {
        if let cached = keyedCache.withLockedValue({ $0[secretKey] }) { return cached }
        let mac = HMAC<SHA256>(key: SymmetricKey(data: Array(secretKey.utf8)))
        keyedCache.withLockedValue { cache in
            if cache.count >= 64 { cache.removeAll() }
            cache[secretKey] = mac
        }
        return mac
    }

    /// Compares two strings in time that depends only on their lengths (hash comparison).
    package static func constantTimeEquals(_ a: String, _ b: String) -> Bool {
        var a = a
        var b = b
        return a.withUTF8 { x in
            b.withUTF8 { y in
                guard x.count == y.count else { return false }
                var diff: UInt8 = 0
                for i in 0..<x.count { diff |= x[i] ^ y[i] }
                return diff == 0
            }
        }
    }

    /// A MAC in lower-case hex, written in place.
    static func hex(_ code: HashedAuthenticationCode<SHA256>) -> String {
        code.withUnsafeBytes { raw in
            String(unsafeUninitializedCapacity: raw.count * 2) { out in
                let digits: StaticString = "0123456789abcdef"
                let d = digits.utf8Start
                var i = 0
                for byte in raw {
                    out[i] = d[Int(byte >> 4)]
                    out[i + 1] = d[Int(byte & 0x0f)]
                    i += 2
                }
                return i
            }
        }
    }
}
