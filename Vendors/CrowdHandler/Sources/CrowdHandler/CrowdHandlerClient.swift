import Foundation
import WaitingRoom

/// The public API client: `POST /v1/requests`, `GET /v1/requests/{token}`,
/// `PUT /v1/responses/{responseID}`, `GET /v1/rooms`, each with `x-api-key` and one attempt
/// within the configured deadline (the SDKs do not retry a check; proposal: neither do we).
public struct CrowdHandlerClient: Sendable {
    package let configuration: CrowdHandlerConfiguration
    package let transport: any HTTPTransport

    public init(configuration: CrowdHandlerConfiguration, transport: any HTTPTransport) {
        self.configuration = configuration
        self.transport = transport
    }

    /// What a check sends: `url`, `ip`, `agent`, `lang`.
    package struct Check: Sendable, Hashable {
        package var url: String
        package var ip: String?
        package var agent: String
        package var lang: String
        package init(url: String, ip: String? = nil, agent: String, lang: String) {
            self.url = url
            self.ip = ip
            self.agent = agent
            self.lang = lang
        }

        var fields: [(String, String)] {
            var f = [("url", url), ("agent", agent), ("lang", lang)]
            if let ip { f.append(("ip", ip)) }
            return f
        }
    }

    var vendor: String { CrowdHandlerConfiguration.vendorID }

    func headers(json: Bool) -> HTTPHeaderList {
        var h: HTTPHeaderList = [("x-api-key", configuration.publicKey), ("Accept", "application/json")]
        if json { h.add("Content-Type", "application/json") }
        return h
    }

    static func encode(_ s: String) -> String {
        var allowed = CharacterSet.urlQueryAllowed
        allowed.remove(charactersIn: "&=+?#/:")
        return s.addingPercentEncoding(withAllowedCharacters: allowed) ?? s
    }

    /// `POST /v1/requests` (no session yet) or `GET /v1/requests/{token}` (with one).
    package func check(_ check: Check, token: String?) async throws(WaitingRoomError) -> CrowdHandlerResult {
        let request: HTTPRequest
        if let token, !token.isEmpty {
            let query = check.fields.map { "\($0.0)=\(Self.encode($0.1))" }.joined(separator: "&")
            request = HTTPRequest(
                method: "GET", url: "\(configuration.apiURL)/v1/requests/\(Self.encode(token))?\(query)",
                headers: headers(json: false), timeout: configuration.timeout)
        } else {
            var body: [String: JSONValue] = [:]
            for (k, v) in check.fields { body[k] = .string(v) }
            request = HTTPRequest(
                method: "POST", url: "\(configuration.apiURL)/v1/requests", headers: headers(json: true),
                body: Array(JSONValue.object(body).jsonText.utf8), timeout: configuration.timeout)
        }
        let response = try await send(request)
        return try CrowdHandlerResult.decode(response.body)
    }

    /// `PUT /v1/responses/{responseID}` with `{code, time}` (PHP SDK), plus `httpCode` and
    /// `sampleRate` (JavaScript and .NET SDKs): records the page's performance.
    package func recordResponse(responseID: String, code: Int, time: Duration, sampleRate: Int = 1) async throws(WaitingRoomError)
        -> VendorStatus
    {
        let body: JSONValue = .object([
            "code": .number(Double(code)), "httpCode": .number(Double(code)),
            "time": .number(Double(time.milliseconds)), "sampleRate": .number(Double(max(1, sampleRate)))
        ])
        let response = try await send(
            HTTPRequest(
                method: "PUT", url: "\(configuration.apiURL)/v1/responses/\(Self.encode(responseID))", headers: headers(json: true),
                body: Array(body.jsonText.utf8), timeout: configuration.responseTimeout))
        return VendorStatus(vendor: vendor, code: response.status, message: "response recorded")
    }

    /// `GET /v1/rooms`: the rooms with their URL patterns.
    public func rooms() async throws(WaitingRoomError) -> [CrowdHandlerRoom] {
        let response = try await send(
            HTTPRequest(
                method: "GET", url: "\(configuration.apiURL)/v1/rooms", headers: headers(json: false),
                timeout: configuration.timeout))
        return try CrowdHandlerRoom.decodeList(response.body)
    }

    /// The API route of `url` for metrics and traces: the path's first segment after `/v1/`
    /// (`requests`, `responses`, `rooms`), never an id.
    static func requestKind(_ url: String) -> String {
        guard let path = url.range(of: "/v1/").map({ url[$0.upperBound...] }) else { return "api" }
        let first = path.split(separator: "/").first.map(String.init) ?? "api"
        return first.split(separator: "?").first.map(String.init) ?? "api"
    }

    /// Sends one request; a non-2xx answer is an error with the HTTP status as vendor code
    /// (4xx except 429 `.rejected`, 429 and 5xx `.server`), a transport failure keeps its kind.
    func send(_ request: HTTPRequest) async throws(WaitingRoomError) -> HTTPResponse {
        var request = request
        request.label = VendorRequestLabel(vendor: vendor, kind: Self.requestKind(request.url))
        let response = try await transport.send(
            request, vendor: vendor,
            failureCode: CrowdHandlerCode.checkFailed.rawValue, cancelledCode: CrowdHandlerCode.cancelled.rawValue)
        guard (200..<300).contains(response.status) else {
            let text = String(decoding: response.body.prefix(300), as: UTF8.self)
            let apiMessage = (try? JSONValue.parse(Data(response.body))).flatMap {
                $0["error"]?.stringValue ?? $0["result"]?["error"]?.stringValue ?? $0["message"]?.stringValue
            }
            let kind: WaitingRoomError.Kind = (400..<500).contains(response.status) && response.status != 429 ? .rejected : .server
            throw WaitingRoomError(
                kind, vendor: vendor, vendorCode: response.status,
                message: "HTTP \(response.status): \(apiMessage ?? text)", details: ["httpStatus": String(response.status)])
        }
        return response
    }
}

/// One room of `GET /v1/rooms`: `slug`, `domain`, `urlPattern`, `patternType`, `queueActivatesOn`, `timeout` (minutes).
public struct CrowdHandlerRoom: Sendable, Hashable {
    package var slug: String
    package var domain: String?
    package var urlPattern: String?
    package var patternType: String?
    package var queueActivatesOn: String?
    /// Minutes a promotion stays valid.
    package var timeout: Int?

    package init(
        slug: String, domain: String? = nil, urlPattern: String? = nil, patternType: String? = nil, queueActivatesOn: String? = nil,
        timeout: Int? = nil
    ) {
        self.slug = slug
        self.domain = domain
        self.urlPattern = urlPattern
        self.patternType = patternType
        self.queueActivatesOn = queueActivatesOn
        self.timeout = timeout
    }

    /// Decodes `{"result": [ {...}, … ]}`.
    package static func decodeList(_ body: [UInt8]) throws(WaitingRoomError) -> [CrowdHandlerRoom] {
        let v = CrowdHandlerConfiguration.vendorID
        guard let json = try? JSONValue.parse(Data(body)), let items = json["result"]?.arrayValue else {
            throw WaitingRoomError(
                .invalidResponse, vendor: v, vendorCode: CrowdHandlerCode.checkFailed.rawValue, message: "not a room list")
        }
        return items.compactMap { item in
            guard let slug = item["slug"]?.stringValue else { return nil }
            let qa: String? =
                item["queueActivatesOn"]?.stringValue
                ?? item["queueActivatesOn"]?.numberValue.flatMap { $0.isFinite && abs($0) < 1e15 ? String(Int($0)) : nil }
            return CrowdHandlerRoom(
                slug: slug, domain: item["domain"]?.stringValue, urlPattern: item["urlPattern"]?.stringValue,
                patternType: item["patternType"]?.stringValue, queueActivatesOn: qa,
                timeout: item["timeout"]?.numberValue.flatMap { $0.isFinite && abs($0) < 1e9 ? Int($0) : nil })
        }
    }

    /// The JSON form (the emulator's room feed).
    package var json: JSONValue {
        .object([
            "slug": .string(slug), "domain": domain.map(JSONValue.string) ?? .null, "urlPattern": urlPattern.map(JSONValue.string) ?? .null,
            "patternType": patternType.map(JSONValue.string) ?? .null, "queueActivatesOn": queueActivatesOn.map(JSONValue.string) ?? .null,
            "timeout": timeout.map { .number(Double($0)) } ?? .null
        ])
    }
}
