import Foundation
import WaitingRoom

/// The variables a custom page preview (`POST …/waiting_rooms/preview`, then the preview URL) is
/// rendered with. Cloudflare documents the preview URL's query parameters `force_queue`,
/// `queue_is_full`, `queueing_method` (fifo, random, passthrough, reject), `event` (none,
/// prequeueing, started), `shuffle_at_event_start` and `waitTime` (minutes, default 10); the
/// variables are the `cfWaitingRoom` fields plus `waitTimeHours` and `waitTimeHourMinutes`.
/// The event's remaining times (`timeUntilEventStart`, `timeUntilEventEnd`) are 10 minutes here
/// (proposal: Cloudflare names no parameter for them).
enum CloudflarePagePreview {
    static func values(query: [String: String], now: Date) -> [String: JSONValue] {
        func flag(_ key: String) -> Bool { ["true", "1"].contains(query[key]?.lowercased() ?? "") }
        let method = CloudflareEmulatorConfiguration.QueueingMethod(rawValue: query["queueing_method"] ?? "") ?? .fifo
        let event = ["prequeueing", "started"].contains(query["event"] ?? "") ? query["event"] ?? "none" : "none"
        let queueAll = flag("force_queue")
        let prequeueing = event == "prequeueing"
        let known = !queueAll && !prequeueing && method != .reject
        let wait = max(1, min(Int(query["waitTime"] ?? "") ?? 10, 1_000_000))
        func minutes(_ n: Int) -> String { n == 1 ? "1 minute" : "\(n) minutes" }
        var v: [String: JSONValue] = [
            "inWaitingRoom": .bool(true), "waitTimeKnown": .bool(known), "waitTime": .number(Double(known ? wait : 0)),
            "waitTime25Percentile": .number(0), "waitTime50Percentile": .number(0), "waitTime75Percentile": .number(0),
            "waitTimeFormatted": .string(known ? minutes(wait) : "unavailable"), "waitTimeHours": .number(Double(wait / 60)),
            "waitTimeHourMinutes": .number(Double(wait % 60)), "queueIsFull": .bool(flag("queue_is_full")), "queueAll": .bool(queueAll),
            "lastUpdated": .string(CloudflareEmulatorConfiguration.Event.format(now)),
            "refreshIntervalSeconds": .number(method == .reject && !queueAll && !prequeueing ? 0 : 20),
            "queueingMethod": .string(method.rawValue), "isFIFOQueue": .bool(method == .fifo), "isRandomQueue": .bool(method == .random),
            "isPassthroughQueue": .bool(method == .passthrough), "isRejectQueue": .bool(method == .reject),
            "isEventActive": .bool(event != "none"), "isEventPrequeueing": .bool(prequeueing),
            "timeUntilEventStart": .number(prequeueing ? 10 : 0),
            "timeUntilEventStartFormatted": .string(prequeueing ? "10 minutes" : "unavailable"),
            "timeUntilEventEnd": .number(event != "none" ? 10 : 0),
            "timeUntilEventEndFormatted": .string(event != "none" ? "10 minutes" : "unavailable"),
            "shuffleAtEventStart": .bool(event != "none" && flag("shuffle_at_event_start"))
        ]
        if known, method == .random {
            v["waitTime25Percentile"] = .number(Double(max(1, wait / 2)))
            v["waitTime50Percentile"] = .number(Double(wait))
            v["waitTime75Percentile"] = .number(Double(wait + wait / 2))
        }
        return v
    }
}
