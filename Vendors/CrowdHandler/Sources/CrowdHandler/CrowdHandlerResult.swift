import Foundation
import WaitingRoom

/// The `result` of `POST /v1/requests` and `GET /v1/requests/{token}`: the answer is wrapped as
/// `{"result": {...}}`. Unknown fields are kept in ``extra``.
package struct CrowdHandlerResult: Sendable, Hashable {
    /// Whether the user may proceed (`promoted` 1).
    package var promoted: Bool
    /// The API's own `status` (6 = throttled).
    package var status: Int?
    /// The session token (`tok…`), to send on the next check.
    package var token: String?
    /// The waiting room that guards the URL (nil: no room guards it).
    package var slug: String?
    /// The user's place in line, when waiting.
    package var position: Int?
    /// Estimated wait in seconds, when the API gives one (emulator field `eta`, proposal).
    package var eta: Int?
    /// The id for `PUT /v1/responses/{responseID}`.
    package var responseID: String?
    /// The signature of the promotion (hybrid validation).
    package var hash: String?
    /// When the promotion was signed (`yyyy-MM-ddTHH:mm:ssZ`).
    package var requested: String?
    /// An error text the API sent with the result.
    package var error: String?
    /// Every other member, as text.
    package var extra: [String: String]

    package init(
        promoted: Bool, status: Int? = nil, token: String? = nil, slug: String? = nil, position: Int? = nil, eta: Int? = nil,
        responseID: String? = nil, hash: String? = nil, requested: String? = nil, error: String? = nil, extra: [String: String] = [:]
    ) {
        self.promoted = promoted
        self.status = status
        self.token = token
        self.slug = slug
        self.position = position
        self.eta = eta
        self.responseID = responseID
        self.hash = hash
        self.requested = requested
        self.error = error
        self.extra = extra
    }

    /// Largest body decoded (larger answers are an invalid response).
    package static let maxBodyBytes = 256 * 1024

    static let known: Set<String> = ["promoted", "status", "token", "slug", "position", "eta", "responseID", "hash", "requested", "error"]

    /// Decodes an answer body. Anything that is not the wrapper with a `promoted` of 0/1 (number
    /// or boolean) is `.invalidResponse` with vendor code ``CrowdHandlerCode/checkFailed``;
    /// never a crash.
    package static func decode(_ body: [UInt8]) throws(WaitingRoomError) -> CrowdHandlerResult {
        func bad(_ why: String) -> WaitingRoomError {
            WaitingRoomError(
                .invalidResponse, vendor: CrowdHandlerConfiguration.vendorID, vendorCode: CrowdHandlerCode.checkFailed.rawValue,
                message: "not a CrowdHandler answer: \(why)")
        }
        guard body.count <= maxBodyBytes else { throw bad("body of \(body.count) bytes") }
        let json: JSONValue
        do { json = try JSONValue.parse(Data(body)) } catch { throw bad("not JSON") }
        guard let result = json["result"]?.objectValue else { throw bad("no \"result\" object") }
        let promoted: Bool
        switch result["promoted"] {
        case .number(let n)?: promoted = n == 1
        case .bool(let b)?: promoted = b
        case .null?, nil:
            // an error wrapper: {"result": {"status": …, "error": …}}
            guard result["error"] != nil || result["status"] != nil else { throw bad("no \"promoted\"") }
            promoted = false
        default: throw bad("\"promoted\" is not a number")
        }
        func int(_ key: String) -> Int? {
            guard let n = result[key]?.numberValue, n.isFinite, abs(n) < 1e15 else { return nil }
            return Int(n)
        }
        func text(_ key: String) -> String? {
            switch result[key] {
            case .string(let s)?: return s
            case .number(let n)? where n.isFinite && abs(n) < 1e15: return n == n.rounded() ? String(Int(n)) : String(n)
            default: return nil
            }
        }
        var extra: [String: String] = [:]
        for (k, v) in result where !known.contains(k) { extra[k] = v.stringValue ?? v.jsonText }
        return CrowdHandlerResult(
            promoted: promoted, status: int("status"), token: text("token"), slug: text("slug"), position: int("position"),
            eta: int("eta"), responseID: text("responseID"), hash: text("hash"), requested: text("requested"),
            error: text("error"), extra: extra)
    }

    /// The JSON form (the emulator answers with it).
    package var json: JSONValue {
        var o: [String: JSONValue] = ["promoted": .number(promoted ? 1 : 0)]
        o["status"] = status.map { .number(Double($0)) } ?? .null
        o["token"] = token.map(JSONValue.string) ?? .null
        o["slug"] = slug.map(JSONValue.string) ?? .null
        o["position"] = position.map { .number(Double($0)) } ?? .null
        if let eta { o["eta"] = .number(Double(eta)) }
        o["responseID"] = responseID.map(JSONValue.string) ?? .null
        o["hash"] = hash.map(JSONValue.string) ?? .null
        o["requested"] = requested.map(JSONValue.string) ?? .null
        if let error { o["error"] = .string(error) }
        for (k, v) in extra { o[k] = .string(v) }
        return .object(["result": .object(o)])
    }
}
