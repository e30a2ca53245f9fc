import Foundation
import WaitingRoom

/// The vendor-shaped facade, after the SDKs' gatekeeper: ``validateRequest(url:token:)`` checks
/// one request (API, or the signature in hybrid mode), ``redirectIfNotPromoted()`` gives the
/// waiting-room URL, ``recordPerformance(statusCode:sample:elapsed:)`` records the page's
/// performance. One gatekeeper serves one visitor's requests in turn (it keeps their token).
public actor CrowdHandlerGatekeeper {
    /// How requests are validated.
    public enum Mode: String, Sendable, Hashable {
        /// Every request is checked with the API.
        case full
        /// A promotion signature (`ch-id-signature`, `ch-requested`) within the room's timeout
        /// is accepted without an API call; anything else is checked with the API.
        case hybrid
    }

    /// What ``validateRequest(url:token:)`` found, shaped like the SDK's result.
    public struct Result: Sendable, Hashable {
        /// true: serve the page; false: send the user to the waiting room (``redirectIfNotPromoted()``).
        public var promoted: Bool
        /// The room (or the safety-net room after a failure, or nil).
        package var slug: String?
        /// The session token (store it, e.g. as the SDK's cookie).
        public var token: String?
        /// For ``recordPerformance(statusCode:sample:elapsed:)``.
        package var responseID: String?
        /// The signature and its time, when the API sent them.
        package var hash: String?
        package var requested: String?
        /// Position in line, when waiting.
        package var position: Int?
        /// The failure, when the API failed or refused (the vendor's code kept).
        package var error: WaitingRoomError?
        /// The code of this answer (``CrowdHandlerCode``): 200 when the API answered, 7
        /// (`signatureValid`) when a promotion signature was accepted locally without an API
        /// call, else the failure's code (the HTTP status, 2, 6).
        package var code: Int = CrowdHandlerCode.ok.rawValue
    }

    package let configuration: CrowdHandlerConfiguration
    package let mode: Mode
    let client: CrowdHandlerClient
    let clock: any WaitingRoomClock
    let signature: CrowdHandlerSignature?
    let rooms: [CrowdHandlerRoom]
    /// The visitor's token (the `ch-id`).
    package private(set) var token: String?
    /// The last result.
    package private(set) var lastResult: Result?
    private var targetURL: String?
    private var checkedAt: Date?

    /// - Parameters:
    ///   - mode: `.hybrid` needs `configuration.privateKey` and the rooms (``CrowdHandlerClient/rooms()``).
    ///   - rooms: the room feed, for hybrid validation (their `slug`, `queueActivatesOn`, `timeout`).
    public init(
        configuration: CrowdHandlerConfiguration, transport: any HTTPTransport, clock: any WaitingRoomClock = SystemClock(),
        mode: Mode = .full, rooms: [CrowdHandlerRoom] = [], token: String? = nil
    ) throws(WaitingRoomError) {
        if mode == .hybrid, (configuration.privateKey ?? "").isEmpty {
            throw .invalidConfiguration(
                field: "privateKey", "hybrid mode needs the private key", vendor: CrowdHandlerConfiguration.vendorID)
        }
        self.configuration = configuration
        self.mode = mode
        self.client = CrowdHandlerClient(configuration: configuration, transport: transport)
        self.clock = clock
        self.signature = configuration.privateKey.map(CrowdHandlerSignature.init(privateKey:))
        self.rooms = rooms
        self.token = token
    }

    /// Validates a request for `url`. `token`, `signature` and `requested` are the `ch-id`,
    /// `ch-id-signature` and `ch-requested` the waiting room appended on promotion (if any).
    public func validateRequest(
        url: String, token: String? = nil, signature sig: String? = nil, requested: String? = nil,
        slug: String? = nil
    ) async -> Result {
        if let token, !token.isEmpty { self.token = token }
        targetURL = url
        checkedAt = clock.now()
        if mode == .hybrid, let signature, let sig, let requested, let t = self.token,
            let room = rooms.first(where: { $0.slug == slug }) ?? (rooms.count == 1 ? rooms.first : nil),
            signature.validate(signature: sig, token: t, requested: requested, room: room, now: clock.now()) == .valid
        {
            let r = Result(
                promoted: true, slug: room.slug, token: t, hash: sig, requested: requested,
                code: CrowdHandlerCode.signatureValid.rawValue)
            lastResult = r
            return r
        }
        let check = CrowdHandlerClient.Check(url: url, ip: configuration.ip, agent: configuration.agent, lang: configuration.lang)
        var r: Result
        do {
            let answer = try await client.check(check, token: self.token)
            if let t = answer.token { self.token = t }
            if answer.status == CrowdHandlerCode.throttled.rawValue
                || (!answer.promoted && answer.status == CrowdHandlerCode.checkFailed.rawValue)
            {
                let code = answer.status ?? CrowdHandlerCode.checkFailed.rawValue
                r = failure(
                    WaitingRoomError(
                        .server, vendor: CrowdHandlerConfiguration.vendorID, vendorCode: code,
                        message: answer.error ?? "abnormal API answer (status \(code))"))
            } else {
                r = Result(
                    promoted: answer.promoted, slug: answer.slug, token: answer.token ?? self.token,
                    responseID: answer.promoted ? answer.responseID : nil, hash: answer.hash, requested: answer.requested,
                    position: answer.position)
            }
        } catch {
            r = failure(error)
        }
        lastResult = r
        return r
    }

    /// 4xx (not 429) never promotes; anything else follows `trustOnFail`; the safety-net room is
    /// named whenever the user is not promoted after a failure.
    private func failure(_ error: WaitingRoomError) -> Result {
        let refused = error.kind == .rejected
        let promoted = refused ? false : configuration.trustOnFail
        return Result(
            promoted: promoted, slug: promoted ? nil : configuration.safetyNetSlug, token: token, error: error,
            code: error.vendorCode ?? CrowdHandlerCode.checkFailed.rawValue)
    }

    /// The waiting-room URL for a user who is not promoted (nil when promoted or no room is known).
    public func redirectIfNotPromoted() -> String? {
        guard let r = lastResult, !r.promoted, let slug = r.slug, let url = targetURL else { return nil }
        return configuration.waitingRoomURL(slug: slug, targetURL: url, token: token)
    }

    /// Records the page's performance for a sampled share of requests (`sample` 0…1, SDK default
    /// 0.2): `PUT /v1/responses/{responseID}`. Returns nil when not sampled or nothing to record.
    @discardableResult
    public func recordPerformance(statusCode: Int = 200, sample: Double = 0.2, elapsed: Duration? = nil) async throws(WaitingRoomError)
        -> VendorStatus?
    {
        guard let id = lastResult?.responseID, !id.isEmpty, sample > 0, Double.random(in: 0..<1) < sample else { return nil }
        let time = elapsed ?? checkedAt.map { .milliseconds(Int64(max(0, clock.now().timeIntervalSince($0)) * 1000)) } ?? .zero
        return try await client.recordResponse(
            responseID: id, code: statusCode, time: time, sampleRate: max(1, Int((1 / sample).rounded())))
    }
}
