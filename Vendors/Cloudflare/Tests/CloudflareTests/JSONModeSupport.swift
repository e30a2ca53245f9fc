import Cloudflare
import CloudflareEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP

/// One visitor speaking JSON mode to the emulator over loopback, as the API reference describes
/// it: `Accept: application/json`, the cookie sent back on every request.
struct JSONModeVisitor {
    let harness: EmulatorHarness
    var cookie: String?
    var headers: [(String, String)] = []

    init(_ harness: EmulatorHarness, headers: [(String, String)] = []) {
        self.harness = harness
        self.headers = headers
    }

    /// One request to `path` under the site: the response and, when it is a waiting-room reply,
    /// the `cfWaitingRoom` object as JSON.
    mutating func get(_ path: String, accept: String = "application/json") async throws -> (HTTPResponse, [String: JSONValue]?) {
        var h = HTTPHeaderList([("Accept", accept)] + headers)
        if let cookie { h.add("Cookie", cookie) }
        let response = try await AsyncHTTPTransport.shared.send(HTTPRequest(url: harness.siteURL + path, headers: h, timeout: .seconds(15)))
        for value in response.headers.values(for: "Set-Cookie") {
            if let pair = value.split(separator: ";").first, pair.hasPrefix("__cfwaitingroom") { cookie = String(pair) }
        }
        let object = (try? JSONValue.parse(Data(response.body)))?.objectValue?["cfWaitingRoom"]?.objectValue
        return (response, object)
    }
}

/// The 23 members of `cfWaitingRoom` the API reference lists (`json_response_enabled`), by type.
enum DocumentedReply {
    static let booleans = [
        "inWaitingRoom", "waitTimeKnown", "queueIsFull", "queueAll", "isFIFOQueue", "isRandomQueue",
        "isPassthroughQueue", "isRejectQueue", "isEventActive", "isEventPrequeueing", "shuffleAtEventStart"
    ]
    static let integers = [
        "waitTime", "waitTime25Percentile", "waitTime50Percentile", "waitTime75Percentile", "refreshIntervalSeconds",
        "timeUntilEventStart", "timeUntilEventEnd"
    ]
    static let strings = [
        "waitTimeFormatted", "lastUpdated", "queueingMethod", "timeUntilEventStartFormatted", "timeUntilEventEndFormatted"
    ]

    /// Records an issue for every member missing or of the wrong type, and for any extra member.
    static func check(_ reply: [String: JSONValue]?, _ situation: String, sourceLocation: SourceLocation = #_sourceLocation) {
        guard let reply else {
            Issue.record("\(situation): no cfWaitingRoom object", sourceLocation: sourceLocation)
            return
        }
        #expect(booleans.count + integers.count + strings.count == 23)
        #expect(Set(reply.keys) == Set(booleans + integers + strings), "\(situation): members", sourceLocation: sourceLocation)
        for key in booleans {
            guard case .bool? = reply[key] else {
                Issue.record("\(situation): \(key) is not a boolean: \(String(describing: reply[key]))", sourceLocation: sourceLocation)
                continue
            }
        }
        for key in integers {
            guard case .number(let n)? = reply[key], n == n.rounded(), n >= 0 else {
                Issue.record(
                    "\(situation): \(key) is not a whole number: \(String(describing: reply[key]))", sourceLocation: sourceLocation)
                continue
            }
        }
        for key in strings {
            guard case .string? = reply[key] else {
                Issue.record("\(situation): \(key) is not a string: \(String(describing: reply[key]))", sourceLocation: sourceLocation)
                continue
            }
        }
        #expect(reply["inWaitingRoom"] == .bool(true), sourceLocation: sourceLocation)
        // the documented "unavailable" wording whenever the estimate is not known
        if reply["waitTimeKnown"] == .bool(false) {
            #expect(reply["waitTimeFormatted"] == .string("unavailable"), "\(situation)", sourceLocation: sourceLocation)
            #expect(reply["waitTime"] == .number(0), "\(situation)", sourceLocation: sourceLocation)
        }
        if reply["isEventPrequeueing"] == .bool(false) {
            #expect(reply["timeUntilEventStartFormatted"] == .string("unavailable"), "\(situation)", sourceLocation: sourceLocation)
        }
        if reply["isEventActive"] == .bool(false) {
            #expect(reply["timeUntilEventEndFormatted"] == .string("unavailable"), "\(situation)", sourceLocation: sourceLocation)
        }
        if reply["isRandomQueue"] == .bool(false) {
            for key in ["waitTime25Percentile", "waitTime50Percentile", "waitTime75Percentile"] {
                #expect(reply[key] == .number(0), "\(situation): \(key) applies to random queueing only", sourceLocation: sourceLocation)
            }
        }
    }
}
