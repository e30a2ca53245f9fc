import Crypto
import Foundation
import WaitingRoom

/// Where a gate gets Queue-it's integration configuration while it runs, as Queue-it documents
/// it (Documentation repo, `serverside-connectors/integration-config/README.md`):
/// - **download**: `GET https://{customerId}.queue-it.net/status/integrationconfig/secure/{customerId}`
///   with the customer's API key in the `api-key` header; only a 200 with a JSON configuration is
///   taken. Queue-it asks connectors to cache it 5–10 minutes and never to download it while
///   handling a request: `waitingroom gate --config-url` pulls it in the background (every 5
///   minutes by default, as KU-.NET's and KU-Java's providers do) with a 4 s timeout (theirs);
/// - **push**: Queue-it's platform sends `PUT` to a "publish web endpoint" with the JSON body
///   `{"integrationInfo": <the configuration's UTF-8 bytes, hex>, "hash": <HMAC-SHA256 of that
///   hex text, keyed with the secret key, lower-case hex>}` (the Documentation's example; KU
///   Cloudflare worker `integrationConfigProvider.ts`).
package struct QueueItIntegrationConfigSource: Sendable {
    /// The Queue-it customer id.
    package let customerId: String
    /// The URL downloaded.
    package let url: String
    /// The customer's API key (`api-key`), when the secure form is used.
    package let apiKey: String?
    /// How downloads are sent.
    package let transport: any HTTPTransport
    /// The longest one download may take.
    package let timeout: Duration

    package init(customerId: String, url: String? = nil, apiKey: String?, transport: any HTTPTransport, timeout: Duration = .seconds(4)) {
        self.customerId = customerId
        self.url = url ?? Self.defaultURL(customerId: customerId)
        self.apiKey = apiKey
        self.transport = transport
        self.timeout = timeout
    }

    /// `https://{customerId}.queue-it.net/status/integrationconfig/secure/{customerId}`.
    package static func defaultURL(customerId: String) -> String {
        "https://\(customerId).queue-it.net/status/integrationconfig/secure/\(customerId)"
    }

    /// Why a configuration was not taken.
    package enum Failure: Error, Sendable, Hashable, CustomStringConvertible {
        /// The download did not complete (refused, timed out).
        case unreachable(String)
        /// The server answered, but not 200.
        case status(Int)
        /// The document is not an integration configuration.
        case notAConfiguration(String)
        /// A push's body is not `{"integrationInfo": hex, "hash": hex}`.
        case malformedPush(String)
        /// A push's hash is not the HMAC-SHA256 of its `integrationInfo` with the secret key.
        case wrongHash

        package var description: String {
            switch self {
            case .unreachable(let why): "the configuration could not be downloaded: \(why)"
            case .status(let status): "the configuration download answered \(status)"
            case .notAConfiguration(let why): "not a Queue-it integration configuration: \(why)"
            case .malformedPush(let why): "not a configuration push: \(why)"
            case .wrongHash: "the push's hash is not the configuration's HMAC-SHA256 with the secret key"
            }
        }
    }

    /// Downloads the configuration.
    package func download() async throws(Failure) -> QueueItIntegrationConfig {
        var headers: [(String, String)] = [("Accept", "application/json"), ("User-Agent", "queueit-connector-swift")]
        if let apiKey { headers.append(("api-key", apiKey)) }
        let response: HTTPResponse
        do {
            response = try await transport.send(HTTPRequest(method: "GET", url: url, headers: HTTPHeaderList(headers), timeout: timeout))
        } catch {
            throw .unreachable("\(error)")
        }
        guard response.status == 200 else { throw .status(response.status) }
        do {
            return try QueueItIntegrationConfig(json: response.body)
        } catch {
            throw .notAConfiguration("\(error)")
        }
    }

    /// The configuration a push carries, when its hash is right.
    package static func pushed(_ body: [UInt8], secretKey: String) throws(Failure) -> QueueItIntegrationConfig {
        let object: [String: Any]
        do {
            guard let parsed = try JSONSerialization.jsonObject(with: Data(body)) as? [String: Any] else {
                throw Failure.malformedPush("the body is not a JSON object")
            }
            object = parsed
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .malformedPush("the body is not JSON")
        }
        guard let hex = object["integrationInfo"] as? String, !hex.isEmpty else { throw .malformedPush("no integrationInfo") }
        guard let hash = object["hash"] as? String, !hash.isEmpty else { throw .malformedPush("no hash") }
        let expected = HMAC<SHA256>.authenticationCode(for: Array(hex.utf8), using: SymmetricKey(data: Array(secretKey.utf8)))
            .map { String(format: "%02x", $0) }.joined()
        // compared without an early exit
        guard expected.utf8.count == hash.utf8.count,
            zip(expected.utf8, hash.utf8).reduce(UInt8(0), { $0 | ($1.0 ^ $1.1) }) == 0
        else { throw .wrongHash }
        guard let bytes = Self.bytes(fromHex: hex) else { throw .malformedPush("integrationInfo is not hex") }
        do {
            return try QueueItIntegrationConfig(json: bytes)
        } catch {
            throw .notAConfiguration("\(error)")
        }
    }

    /// A push's body for `json` signed with `secretKey` (what Queue-it's platform sends; tests
    /// and `waitingroom` tools use it).
    package static func pushBody(json: [UInt8], secretKey: String) -> [UInt8] {
        let hex = json.map { String(format: "%02x", $0) }.joined()
        let hash = HMAC<SHA256>.authenticationCode(for: Array(hex.utf8), using: SymmetricKey(data: Array(secretKey.utf8)))
            .map { String(format: "%02x", $0) }.joined()
        return Array(#"{"integrationInfo":"\#(hex)","hash":"\#(hash)"}"#.utf8)
    }

    static func bytes(fromHex hex: String) -> [UInt8]? {
        let digits = Array(hex.utf8)
        guard digits.count % 2 == 0 else { return nil }
        var out: [UInt8] = []
        out.reserveCapacity(digits.count / 2)
        var i = 0
        while i < digits.count {
            guard let high = hexValue(digits[i]), let low = hexValue(digits[i + 1]) else { return nil }
            out.append(high << 4 | low)
            i += 2
        }
        return out
    }

    static func hexValue(_ c: UInt8) -> UInt8? {
        switch c {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): c - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): c - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): c - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
