import Foundation
import QueueIt
import WaitingRoom

/// A configuration problem in the emulator's JSON; `field` is the dotted path of the offending key.
public struct QueueItEmulatorConfigurationError: Error, Sendable, Equatable, CustomStringConvertible {
    public let field: String
    public let message: String
    public var description: String { "emulator configuration: '\(field)': \(message)" }
}

/// The state of an emulated waiting room (the redirect type its answers carry, docs/queueit-protocol.md §2.2).
package enum QueueItRoomState: String, Sendable, Codable, CaseIterable {
    /// Visitors queue: enqueue answers with a queue page, the page admits them at `admitPerSecond`.
    case queue
    /// Safety net: enqueue answers with a `rt_safetynet` token (passed without a queue page).
    case safetynet
    /// Disabled: enqueue answers with a `rt_disabled` token.
    case disabled
    /// Idle (before the event): `rt_idle` token.
    case idle
    /// After the event: `rt_afterevent` token.
    case afterevent
}

/// The `"queueit"` part of the shared emulator document.
///
/// ```json
/// {"queueit": {"customers": {"demo": {"secretKey": "…",
///     "rooms": {"sale": {"state": "queue", "admitPerSecond": 2}}}}}}
/// ```
/// Customer keys besides `secretKey` and `rooms` (optional): `apiKey` (the integration-config
/// download's key; default `{customerId}-api-key`), `integrationConfig` (the published integration
/// configuration, a JSON object with an `Integrations` array; default: ignore `/static/`, queue
/// everything else in event `sale`), `unsecuredIntegrationConfig` (default true: the keyless
/// download route serves too).
/// Room keys (all optional but `state`): `state`, `admitPerSecond` (default 1), `capacity`
/// (max visitors waiting; beyond it enqueue answers 503), `enqueueTokenRequired`,
/// `enqueueKeyRequired` (either credential is accepted when both are set), `enqueueKeys`
/// (accepted keys; empty = any non-empty key), `tokenValiditySeconds` (default 600),
/// `cookieValidityMinutes` (`cv_`), `targetUrl` (`EventTargetUrl`; default the emulator's own
/// target page), `refreshSeconds` (queue page refresh, default 1), `layoutName`,
/// `bindTokenToIP` (adds `hip_` from `X-Forwarded-For`), `proxyPrefix` (the protected API sends
/// visitors to `/{proxyPrefix}/` on the emulator's host, the behind-proxy shape), `message` (the
/// room's message to waiting visitors, shown on the queue page), `startsAt` (a scheduled sale:
/// visitors who arrive before it wait in a pre-queue and get random places at the start, later
/// ones join first come first served; ``EmulatorScheduledStart`` forms), `shuffleAtStart`
/// (default true; false: the pre-queue keeps arrival order), `seed` (of the shuffle, default 0).
public struct QueueItEmulatorConfiguration: Sendable, Equatable {
    package struct Room: Sendable, Equatable {
        package var state: QueueItRoomState
        package var admitPerSecond: Double = 1
        package var capacity: Int?
        package var enqueueTokenRequired = false
        package var enqueueKeyRequired = false
        package var enqueueKeys: [String] = []
        package var tokenValiditySeconds = 600
        package var cookieValidityMinutes: Int?
        package var targetUrl: String?
        package var refreshSeconds = 1
        package var layoutName: String?
        package var bindTokenToIP = false
        package var proxyPrefix: String?
        /// The room's message to waiting visitors, shown on the queue page.
        package var message: String?
        /// The sale's start: visitors arriving before it are held in a pre-queue and shuffled at
        /// it (nil: no scheduled start). `QueueItEmulatorModel+Prequeue.swift`.
        package var startsAt: Date?
        /// Whether the pre-queue is shuffled at the start (else released in arrival order).
        package var shuffleAtStart = true
        /// The seed of the shuffle at the start.
        package var seed: UInt64 = 0

        package init(state: QueueItRoomState, admitPerSecond: Double = 1) {
            self.state = state
            self.admitPerSecond = admitPerSecond
        }
    }

    package struct Customer: Sendable, Equatable {
        package var secretKey: String
        package var rooms: [String: Room]
        /// The API key the secure integration-configuration download checks (`api-key` header);
        /// nil: ``QueueItEmulatorConfiguration/defaultAPIKey(customer:)`` (`{customerId}-api-key`).
        package var apiKey: String?
        /// The customer's published integration configuration (Queue-it's JSON: `Integrations`,
        /// `Version`, …); nil: ``QueueItEmulatorConfiguration/defaultIntegrationConfig(customer:publishDate:)``.
        /// A `Queue` integration with an empty or missing `QueueDomain` is served with the
        /// emulator's own base URL (`QueueItEmulator+IntegrationConfig.swift`).
        package var integrationConfig: JSONValue?
        /// Whether the unsecured download (`GET /status/integrationconfig/{customerId}`, no key)
        /// is allowed (default true; false: it answers 401, only the secure route serves).
        package var unsecuredIntegrationConfig: Bool
        package init(
            secretKey: String, rooms: [String: Room], apiKey: String? = nil, integrationConfig: JSONValue? = nil,
            unsecuredIntegrationConfig: Bool = true
        ) {
            self.secretKey = secretKey
            self.rooms = rooms
            self.apiKey = apiKey
            self.integrationConfig = integrationConfig
            self.unsecuredIntegrationConfig = unsecuredIntegrationConfig
        }
    }

    package var customers: [String: Customer]

    package init(customers: [String: Customer]) { self.customers = customers }

    /// The CLI default: customer `demo` (secret `demo-secret-key-0123456789`) with rooms `sale`
    /// (queue, 1 visitor/s, with a message), `flash` (queue, 0/s: nobody is admitted until `/_emulator/queueit/admit`),
    /// `open` (safetynet), `closed` (disabled), `early` (idle), `over` (afterevent),
    /// `members` (queue, 5/s, enqueue token or key required; key `member-key`); API key
    /// `demo-api-key` and the default integration configuration.
    public static var demo: QueueItEmulatorConfiguration {
        var members = Room(state: .queue, admitPerSecond: 5)
        members.enqueueTokenRequired = true
        members.enqueueKeyRequired = true
        members.enqueueKeys = ["member-key"]
        var sale = Room(state: .queue, admitPerSecond: 1)
        sale.message = "Thank you for waiting: visitors are let in in the order they arrived."
        return QueueItEmulatorConfiguration(customers: [
            "demo": Customer(
                secretKey: "demo-secret-key-0123456789",
                rooms: [
                    "sale": sale,
                    "flash": Room(state: .queue, admitPerSecond: 0),
                    "open": Room(state: .safetynet),
                    "closed": Room(state: .disabled),
                    "early": Room(state: .idle),
                    "over": Room(state: .afterevent),
                    "members": members
                ])
        ])
    }

    /// Decodes the `"queueit"` member of a shared emulator document (other keys are ignored).
    /// A document without `"queueit"` is an error naming `queueit`.
    package init(document: [UInt8]) throws(QueueItEmulatorConfigurationError) {
        let any: Any
        do { any = try JSONSerialization.jsonObject(with: Data(document), options: [.fragmentsAllowed]) } catch {
            throw QueueItEmulatorConfigurationError(field: "$", message: "not valid JSON")
        }
        guard let top = any as? [String: Any] else {
            throw QueueItEmulatorConfigurationError(field: "$", message: "must be a JSON object")
        }
        guard let qi = top["queueit"] else {
            throw QueueItEmulatorConfigurationError(field: "queueit", message: "is missing")
        }
        try self.init(queueItPart: qi)
    }

    /// Decodes the `"queueit"` member of a shared emulator document given as a `JSONValue`.
    public init(json document: JSONValue) throws(QueueItEmulatorConfigurationError) {
        let encoder = JSONEncoder()
        guard let data = try? encoder.encode(document) else {
            throw QueueItEmulatorConfigurationError(field: "$", message: "cannot be encoded as JSON")
        }
        try self.init(document: Array(data))
    }

    /// Decodes the value of the `"queueit"` member (as produced by `JSONSerialization`).
    package init(queueItPart qi: Any) throws(QueueItEmulatorConfigurationError) {
        typealias E = QueueItEmulatorConfigurationError
        guard let obj = qi as? [String: Any] else { throw E(field: "queueit", message: "must be an object") }
        guard let customersAny = obj["customers"] else { throw E(field: "queueit.customers", message: "is missing") }
        guard let customers = customersAny as? [String: Any] else {
            throw E(field: "queueit.customers", message: "must be an object of customer id → customer")
        }
        var out: [String: Customer] = [:]
        for (cid, cAny) in customers {
            let cPath = "queueit.customers.\(cid)"
            do { _ = try QueueItEndpoint(customerId: cid, waitingRoomId: "x") } catch {
                throw E(field: cPath, message: "customer id must be letters, digits and '-'")
            }
            guard let c = cAny as? [String: Any] else { throw E(field: cPath, message: "must be an object") }
            guard let secret = c["secretKey"] as? String, !secret.isEmpty else {
                throw E(field: "\(cPath).secretKey", message: "must be a non-empty string")
            }
            guard let roomsAny = c["rooms"] as? [String: Any] else {
                throw E(field: "\(cPath).rooms", message: "must be an object of waiting room id → room")
            }
            var rooms: [String: Room] = [:]
            for (rid, rAny) in roomsAny {
                let rPath = "\(cPath).rooms.\(rid)"
                rooms[rid] = try Self.room(rAny, path: rPath, id: rid)
            }
            var customer = Customer(secretKey: secret, rooms: rooms)
            try Self.readIntegrationSettings(c, into: &customer, path: cPath)
            out[cid] = customer
        }
        self.customers = out
    }

    static func room(_ any: Any, path: String, id: String, now: Date = Date()) throws(QueueItEmulatorConfigurationError) -> Room {
        typealias E = QueueItEmulatorConfigurationError
        if id.isEmpty || id.contains("/") || id.contains("~") || id.contains("_") {
            throw E(field: path, message: "waiting room id must be non-empty without '/', '~' or '_'")
        }
        guard let r = any as? [String: Any] else { throw E(field: path, message: "must be an object") }
        let known: Set<String> = [
            "state", "admitPerSecond", "capacity", "enqueueTokenRequired", "enqueueKeyRequired",
            "enqueueKeys", "tokenValiditySeconds", "cookieValidityMinutes", "targetUrl",
            "refreshSeconds", "layoutName", "bindTokenToIP", "proxyPrefix", "message",
            "startsAt", "shuffleAtStart", "seed"
        ]
        if let unknown = r.keys.sorted().first(where: { !known.contains($0) }) {
            throw E(field: "\(path).\(unknown)", message: "unknown key (known: \(known.sorted().joined(separator: ", ")))")
        }
        guard let s = r["state"] as? String else {
            throw E(field: "\(path).state", message: "must be one of \(QueueItRoomState.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        guard let state = QueueItRoomState(rawValue: s) else {
            throw E(
                field: "\(path).state", message: "'\(s)' is not one of \(QueueItRoomState.allCases.map(\.rawValue).joined(separator: ", "))"
            )
        }
        var room = Room(state: state)
        func num(_ k: String) throws(E) -> Double? {
            guard let v = r[k] else { return nil }
            guard let n = QueueItJSON.number(v), n.isFinite else { throw E(field: "\(path).\(k)", message: "must be a number") }
            return n
        }
        func int(_ k: String, min: Int) throws(E) -> Int? {
            guard let d = try num(k) else { return nil }
            guard d == d.rounded(), d >= Double(min), d <= 1e9 else {
                throw E(field: "\(path).\(k)", message: "must be an integer ≥ \(min)")
            }
            return Int(d)
        }
        func bool(_ k: String) throws(E) -> Bool? {
            guard let v = r[k] else { return nil }
            guard let b = QueueItJSON.bool(v) else { throw E(field: "\(path).\(k)", message: "must be true or false") }
            return b
        }
        func str(_ k: String) throws(E) -> String? {
            guard let v = r[k] else { return nil }
            guard let s = v as? String else { throw E(field: "\(path).\(k)", message: "must be a string") }
            return s
        }
        if let a = try num("admitPerSecond") {
            guard a >= 0, a <= 1_000_000 else { throw E(field: "\(path).admitPerSecond", message: "must be between 0 and 1000000") }
            room.admitPerSecond = a
        }
        room.capacity = try int("capacity", min: 0)
        room.enqueueTokenRequired = try bool("enqueueTokenRequired") ?? false
        room.enqueueKeyRequired = try bool("enqueueKeyRequired") ?? false
        if let keys = r["enqueueKeys"] {
            guard let arr = keys as? [String] else { throw E(field: "\(path).enqueueKeys", message: "must be an array of strings") }
            room.enqueueKeys = arr
        }
        room.tokenValiditySeconds = try int("tokenValiditySeconds", min: 1) ?? 600
        room.cookieValidityMinutes = try int("cookieValidityMinutes", min: 0)
        room.refreshSeconds = try int("refreshSeconds", min: 1) ?? 1
        room.targetUrl = try str("targetUrl")
        if let t = room.targetUrl, URL(string: t)?.host == nil {
            throw E(field: "\(path).targetUrl", message: "'\(t)' is not an absolute URL")
        }
        room.layoutName = try str("layoutName")
        room.bindTokenToIP = try bool("bindTokenToIP") ?? false
        room.proxyPrefix = QueueItEndpoint.sanitizePathPrefix(try str("proxyPrefix"))
        room.message = try str("message")
        try Self.readPrequeue(r, into: &room, path: path, now: now)
        return room
    }
}
