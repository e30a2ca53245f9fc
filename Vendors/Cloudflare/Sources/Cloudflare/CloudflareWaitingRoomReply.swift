import Foundation
import WaitingRoom

/// The JSON-mode reply of a queued request: `{"cfWaitingRoom": {…}}`. Unknown members are kept in
/// ``extra``. A pure codec (bytes ⇄ value), fuzzed in the tests.
public struct CloudflareWaitingRoomReply: Sendable, Hashable {
    /// Whether the user is in the waiting room (always true in a reply).
    public var inWaitingRoom: Bool
    /// Whether the wait estimates are available.
    public var waitTimeKnown: Bool
    /// Estimated wait in minutes (when known; the 50th percentile under random queueing).
    public var waitTime: Int?
    /// Random queueing: estimated maximum wait of the fastest 25 %, 50 %, 75 % (minutes).
    public var waitTime25Percentile: Int?
    public var waitTime50Percentile: Int?
    public var waitTime75Percentile: Int?
    /// The wait as the room words it (`"5 minutes"`, `"unavailable"`).
    public var waitTimeFormatted: String?
    /// The queue is full (estimated wait over 24 h) and takes no new users now.
    public var queueIsFull: Bool
    /// Every user is queued (`queue_all`): no estimate.
    public var queueAll: Bool
    /// When the reply's figures were computed (ISO 8601).
    public var lastUpdated: String?
    /// Seconds until the next request (Cloudflare: 20); nil when the reply did not say.
    public var refreshIntervalSeconds: Int?
    /// Every other member, as text.
    public var extra: [String: String]

    public init(inWaitingRoom: Bool = true, waitTimeKnown: Bool = false, waitTime: Int? = nil, waitTime25Percentile: Int? = nil,
                waitTime50Percentile: Int? = nil, waitTime75Percentile: Int? = nil, waitTimeFormatted: String? = nil,
                queueIsFull: Bool = false, queueAll: Bool = false, lastUpdated: String? = nil, refreshIntervalSeconds: Int? = 20,
                extra: [String: String] = [:]) {
        self.inWaitingRoom = inWaitingRoom
        self.waitTimeKnown = waitTimeKnown
        self.waitTime = waitTime
        self.waitTime25Percentile = waitTime25Percentile
        self.waitTime50Percentile = waitTime50Percentile
        self.waitTime75Percentile = waitTime75Percentile
        self.waitTimeFormatted = waitTimeFormatted
        self.queueIsFull = queueIsFull
        self.queueAll = queueAll
        self.lastUpdated = lastUpdated
        self.refreshIntervalSeconds = refreshIntervalSeconds
        self.extra = extra
    }

    /// Largest body read as a reply.
    public static let maxBodyBytes = 256 * 1024

    /// The member that marks a waiting-room reply.
    public static let member = "cfWaitingRoom"

    static let known: Set<String> = [
        "inWaitingRoom", "waitTimeKnown", "waitTime", "waitTime25Percentile", "waitTime50Percentile", "waitTime75Percentile",
        "waitTimeFormatted", "queueIsFull", "queueAll", "lastUpdated", "refreshIntervalSeconds",
    ]

    /// Whether `body` is (or claims to be) a waiting-room reply: JSON with a top-level
    /// `cfWaitingRoom` member, or text that names it but does not parse (a truncated reply).
    public static func isReply(_ body: [UInt8]) -> Bool {
        guard body.count <= maxBodyBytes else { return false }
        if let json = try? JSONValue.parse(Data(body)) { return json.objectValue?[member] != nil }
        return String(decoding: body.prefix(4096), as: UTF8.self).contains("\"\(member)\"")
    }

    /// Decodes a reply. Anything that is not `{"cfWaitingRoom": {…}}` with boolean flags and
    /// whole-number minutes is `.invalidResponse` with vendor code ``CloudflareCode/invalidReply``;
    /// never a crash.
    public static func decode(_ body: [UInt8]) throws(WaitingRoomError) -> CloudflareWaitingRoomReply {
        func bad(_ why: String) -> WaitingRoomError {
            WaitingRoomError(.invalidResponse, vendor: CloudflareConfiguration.vendorID, vendorCode: CloudflareCode.invalidReply.rawValue,
                             message: "not a Cloudflare cfWaitingRoom reply: \(why)")
        }
        guard body.count <= maxBodyBytes else { throw bad("body of \(body.count) bytes") }
        let json: JSONValue
        do { json = try JSONValue.parse(Data(body)) } catch { throw bad("not JSON") }
        guard let room = json.objectValue?[member]?.objectValue else { throw bad("no \"\(member)\" object") }
        func flag(_ key: String, default value: Bool) throws(WaitingRoomError) -> Bool {
            switch room[key] {
            case .bool(let b)?: return b
            case .null?, nil: return value
            default: throw bad("\"\(key)\" is not true or false")
            }
        }
        func minutes(_ key: String) throws(WaitingRoomError) -> Int? {
            switch room[key] {
            case .number(let n)?:
                guard n.isFinite, n >= 0, n < 1e9 else { throw bad("\"\(key)\" is out of range") }
                return Int(n.rounded(.up))
            case .null?, nil: return nil
            default: throw bad("\"\(key)\" is not a number")
            }
        }
        func text(_ key: String) throws(WaitingRoomError) -> String? {
            switch room[key] {
            case .string(let s)?: return s
            case .null?, nil: return nil
            default: throw bad("\"\(key)\" is not a string")
            }
        }
        var extra: [String: String] = [:]
        for (k, v) in room where !known.contains(k) { extra[k] = v.stringValue ?? v.jsonText }
        return CloudflareWaitingRoomReply(
            inWaitingRoom: try flag("inWaitingRoom", default: true), waitTimeKnown: try flag("waitTimeKnown", default: false),
            waitTime: try minutes("waitTime"), waitTime25Percentile: try minutes("waitTime25Percentile"),
            waitTime50Percentile: try minutes("waitTime50Percentile"), waitTime75Percentile: try minutes("waitTime75Percentile"),
            waitTimeFormatted: try text("waitTimeFormatted"), queueIsFull: try flag("queueIsFull", default: false),
            queueAll: try flag("queueAll", default: false), lastUpdated: try text("lastUpdated"),
            refreshIntervalSeconds: try minutes("refreshIntervalSeconds"), extra: extra)
    }

    /// The JSON form (the emulator answers with it; members without a value are left out).
    public var json: JSONValue {
        var o: [String: JSONValue] = [
            "inWaitingRoom": .bool(inWaitingRoom), "waitTimeKnown": .bool(waitTimeKnown), "queueIsFull": .bool(queueIsFull),
            "queueAll": .bool(queueAll),
        ]
        func put(_ key: String, _ n: Int?) { if let n { o[key] = .number(Double(n)) } }
        put("waitTime", waitTime)
        put("waitTime25Percentile", waitTime25Percentile)
        put("waitTime50Percentile", waitTime50Percentile)
        put("waitTime75Percentile", waitTime75Percentile)
        put("refreshIntervalSeconds", refreshIntervalSeconds)
        if let waitTimeFormatted { o["waitTimeFormatted"] = .string(waitTimeFormatted) }
        if let lastUpdated { o["lastUpdated"] = .string(lastUpdated) }
        for (k, v) in extra where o[k] == nil { o[k] = .string(v) }
        return .object([Self.member: .object(o)])
    }

    /// The estimated wait as a duration (nil when not known).
    public var estimatedWait: Duration? {
        guard waitTimeKnown, !queueAll, let minutes = waitTime ?? waitTime50Percentile else { return nil }
        return .seconds(Int64(minutes) * 60)
    }
}
