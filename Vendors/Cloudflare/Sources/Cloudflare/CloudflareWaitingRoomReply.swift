import Foundation
import WaitingRoom

/// The JSON-mode reply of a queued request: `{"cfWaitingRoom": {…}}`, with the 23 members the API
/// reference lists under `json_response_enabled`, each typed as documented (booleans, whole
/// minutes, strings). A reply that leaves a member out (the older how-to page shows 9) decodes
/// with `false`/nil for it. Unknown members are kept in ``extra``. A pure codec (bytes ⇄ value),
/// fuzzed in the tests.
package struct CloudflareWaitingRoomReply: Sendable, Hashable {
    /// Whether the user is in the waiting room (always true in a reply).
    package var inWaitingRoom: Bool
    /// Whether the wait estimates are available.
    package var waitTimeKnown: Bool
    /// Estimated wait in minutes (valid when known; the 50th percentile under random queueing).
    package var waitTime: Int?
    /// Random queueing: the estimated longest wait of the fastest 25 % of users (minutes).
    package var waitTime25Percentile: Int?
    /// Random queueing: the estimated longest wait of the fastest 50 % of users (minutes).
    package var waitTime50Percentile: Int?
    /// Random queueing: the estimated longest wait of the fastest 75 % of users (minutes).
    package var waitTime75Percentile: Int?
    /// The wait as the room words it (`"5 minutes"`, `"5 minutes to 15 minutes"`, `"unavailable"`).
    package var waitTimeFormatted: String?
    /// The queue is full and takes no new users now.
    package var queueIsFull: Bool
    /// Every user is queued (`queue_all`): nobody is let in, no estimate.
    package var queueAll: Bool
    /// The user's last counted attempt to leave the room (ISO 8601); a request sooner than
    /// ``refreshIntervalSeconds`` after it is ignored and leaves it unchanged.
    package var lastUpdated: String?
    /// Seconds until the next attempt counts (0 for the `reject` method); nil when the reply did not say.
    package var refreshIntervalSeconds: Int?
    /// `fifo`, `random`, `passthrough` or `reject` (nil when the reply did not say).
    package var queueingMethod: String?
    /// The room queues first in, first out.
    package var isFIFOQueue: Bool
    /// The room lets users out at random.
    package var isRandomQueue: Bool
    /// The room lets everyone through (a reply comes only under `queueAll` or a pre-queue).
    package var isPassthroughQueue: Bool
    /// The room rejects every user (the reply does not refresh).
    package var isRejectQueue: Bool
    /// An event is active (between its start and end, or pre-queueing).
    package var isEventActive: Bool
    /// An event is pre-queueing: nobody is let in before its start.
    package var isEventPrequeueing: Bool
    /// Minutes until the event starts (valid while pre-queueing).
    package var timeUntilEventStart: Int?
    /// The same in words; `"unavailable"` when no event is pre-queueing.
    package var timeUntilEventStartFormatted: String?
    /// Minutes until the event ends (valid while an event is active).
    package var timeUntilEventEnd: Int?
    /// The same in words; `"unavailable"` when no event is active.
    package var timeUntilEventEndFormatted: String?
    /// The pre-queue is shuffled at the event's start.
    package var shuffleAtEventStart: Bool
    /// Every other member, as text.
    package var extra: [String: String]

    package init(
        inWaitingRoom: Bool = true, waitTimeKnown: Bool = false, waitTime: Int? = nil, waitTime25Percentile: Int? = nil,
        waitTime50Percentile: Int? = nil, waitTime75Percentile: Int? = nil, waitTimeFormatted: String? = nil,
        queueIsFull: Bool = false, queueAll: Bool = false, lastUpdated: String? = nil, refreshIntervalSeconds: Int? = 20,
        queueingMethod: String? = nil, isFIFOQueue: Bool = false, isRandomQueue: Bool = false, isPassthroughQueue: Bool = false,
        isRejectQueue: Bool = false, isEventActive: Bool = false, isEventPrequeueing: Bool = false,
        timeUntilEventStart: Int? = nil, timeUntilEventStartFormatted: String? = nil, timeUntilEventEnd: Int? = nil,
        timeUntilEventEndFormatted: String? = nil, shuffleAtEventStart: Bool = false, extra: [String: String] = [:]
    ) {
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
        self.queueingMethod = queueingMethod
        self.isFIFOQueue = isFIFOQueue
        self.isRandomQueue = isRandomQueue
        self.isPassthroughQueue = isPassthroughQueue
        self.isRejectQueue = isRejectQueue
        self.isEventActive = isEventActive
        self.isEventPrequeueing = isEventPrequeueing
        self.timeUntilEventStart = timeUntilEventStart
        self.timeUntilEventStartFormatted = timeUntilEventStartFormatted
        self.timeUntilEventEnd = timeUntilEventEnd
        self.timeUntilEventEndFormatted = timeUntilEventEndFormatted
        self.shuffleAtEventStart = shuffleAtEventStart
        self.extra = extra
    }

    /// Largest body read as a reply.
    package static let maxBodyBytes = 256 * 1024

    /// The member that marks a waiting-room reply.
    package static let member = "cfWaitingRoom"

    /// The 23 members the API reference lists, in its order.
    package static let documentedMembers = [
        "inWaitingRoom", "waitTimeKnown", "waitTime", "waitTime25Percentile", "waitTime50Percentile", "waitTime75Percentile",
        "waitTimeFormatted", "queueIsFull", "queueAll", "lastUpdated", "refreshIntervalSeconds", "queueingMethod", "isFIFOQueue",
        "isRandomQueue", "isPassthroughQueue", "isRejectQueue", "isEventActive", "isEventPrequeueing", "timeUntilEventStart",
        "timeUntilEventStartFormatted", "timeUntilEventEnd", "timeUntilEventEndFormatted", "shuffleAtEventStart"
    ]

    static let known = Set(documentedMembers)

    /// Whether `body` is (or claims to be) a waiting-room reply: JSON with a top-level
    /// `cfWaitingRoom` member, or text that names it but does not parse (a truncated reply).
    package static func isReply(_ body: [UInt8]) -> Bool {
        guard body.count <= maxBodyBytes else { return false }
        if let json = try? JSONValue.parse(Data(body)) { return json.objectValue?[member] != nil }
        return String(decoding: body.prefix(4096), as: UTF8.self).contains("\"\(member)\"")
    }

    /// Decodes a reply. Anything that is not `{"cfWaitingRoom": {…}}` with boolean flags and
    /// whole-number minutes is `.invalidResponse` with vendor code ``CloudflareCode/invalidReply``;
    /// never a crash.
    package static func decode(_ body: [UInt8]) throws(WaitingRoomError) -> CloudflareWaitingRoomReply {
        func bad(_ why: String) -> WaitingRoomError {
            WaitingRoomError(
                .invalidResponse, vendor: CloudflareConfiguration.vendorID, vendorCode: CloudflareCode.invalidReply.rawValue,
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
            refreshIntervalSeconds: try minutes("refreshIntervalSeconds"), queueingMethod: try text("queueingMethod"),
            isFIFOQueue: try flag("isFIFOQueue", default: false), isRandomQueue: try flag("isRandomQueue", default: false),
            isPassthroughQueue: try flag("isPassthroughQueue", default: false), isRejectQueue: try flag("isRejectQueue", default: false),
            isEventActive: try flag("isEventActive", default: false), isEventPrequeueing: try flag("isEventPrequeueing", default: false),
            timeUntilEventStart: try minutes("timeUntilEventStart"), timeUntilEventStartFormatted: try text("timeUntilEventStartFormatted"),
            timeUntilEventEnd: try minutes("timeUntilEventEnd"), timeUntilEventEndFormatted: try text("timeUntilEventEndFormatted"),
            shuffleAtEventStart: try flag("shuffleAtEventStart", default: false), extra: extra)
    }

    /// The JSON form (the emulator answers with it, every member set; members without a value are left out).
    package var json: JSONValue {
        var o: [String: JSONValue] = [
            "inWaitingRoom": .bool(inWaitingRoom), "waitTimeKnown": .bool(waitTimeKnown), "queueIsFull": .bool(queueIsFull),
            "queueAll": .bool(queueAll), "isFIFOQueue": .bool(isFIFOQueue), "isRandomQueue": .bool(isRandomQueue),
            "isPassthroughQueue": .bool(isPassthroughQueue), "isRejectQueue": .bool(isRejectQueue), "isEventActive": .bool(isEventActive),
            "isEventPrequeueing": .bool(isEventPrequeueing), "shuffleAtEventStart": .bool(shuffleAtEventStart)
        ]
        func put(_ key: String, _ n: Int?) { if let n { o[key] = .number(Double(n)) } }
        put("waitTime", waitTime)
        put("waitTime25Percentile", waitTime25Percentile)
        put("waitTime50Percentile", waitTime50Percentile)
        put("waitTime75Percentile", waitTime75Percentile)
        put("refreshIntervalSeconds", refreshIntervalSeconds)
        put("timeUntilEventStart", timeUntilEventStart)
        put("timeUntilEventEnd", timeUntilEventEnd)
        func putText(_ key: String, _ text: String?) { if let text { o[key] = .string(text) } }
        putText("waitTimeFormatted", waitTimeFormatted)
        putText("lastUpdated", lastUpdated)
        putText("queueingMethod", queueingMethod)
        putText("timeUntilEventStartFormatted", timeUntilEventStartFormatted)
        putText("timeUntilEventEndFormatted", timeUntilEventEndFormatted)
        for (k, v) in extra where o[k] == nil { o[k] = .string(v) }
        return .object([Self.member: .object(o)])
    }

    /// Whether the room rejects the user: `isRejectQueue` (or `queueingMethod` `reject`) as the API
    /// reference documents, else, for a reply without those members, `refreshIntervalSeconds` 0
    /// while `queueAll` is false; never while `queueAll` or a pre-queue holds users (they refresh).
    package var rejects: Bool {
        if queueAll || isEventPrequeueing { return false }
        if isRejectQueue || queueingMethod == "reject" { return true }
        return queueingMethod == nil && refreshIntervalSeconds == 0
    }

    /// Time until the event starts while pre-queueing (nil otherwise).
    package var eventStartsIn: Duration? {
        guard isEventPrequeueing, let minutes = timeUntilEventStart else { return nil }
        return .seconds(Int64(minutes) * 60)
    }

    /// The estimated wait as a duration (nil when not known).
    package var estimatedWait: Duration? {
        guard waitTimeKnown, !queueAll, let minutes = waitTime ?? waitTime50Percentile else { return nil }
        return .seconds(Int64(minutes) * 60)
    }
}
