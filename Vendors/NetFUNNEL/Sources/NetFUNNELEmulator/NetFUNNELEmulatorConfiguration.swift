import Foundation
import WaitingRoom

/// The emulator's rooms: projects (`sid`) holding segments (`aid`), read from the `"netfunnel"`
/// part of a shared emulator document:
///
/// ```json
/// {"netfunnel": {"projects": {"service_1": {"segments": {"act_10": {"control": "basic", "limit": 1}}}}},
///  "queueit": {…}}
/// ```
///
/// Every field but `projects` is optional; errors name the offending field as a path
/// (`netfunnel.projects.service_1.segments.act_10.limit`).
public struct NetFUNNELEmulatorConfiguration: Sendable, Equatable {
    /// Projects by project key (`sid`).
    package var projects: [String: Project]
    /// Host name put in `ip` of replies; `nil` = the host the request was sent to.
    package var advertisedHost: String?
    /// Port put in `port` of replies; `nil` = the port the request was sent to.
    package var advertisedPort: Int?
    /// The tenant id reported by `nf-setting.json` (its settings document is served only for it).
    public var clientId: String
    /// The client id of an emulator whose document names none.
    package static let defaultClientId = "emulator-0000"
    /// Strict keys: only a ticket's newest key (and the key the client presented when that one
    /// was handed out, in case the reply was lost) is honoured; an older, superseded key is
    /// refused with 507. Off by default (the live service was seen releasing a 5101 key after
    /// 5002s); the tests turn it on.
    package var strictKeys: Bool
    /// Node affinity: with `advertisedHost` set, 5002/5003/5004 sent to any other host (the
    /// front door) are refused with `503:msg="Wrong Server ID"`, as observed live.
    package var nodeAffinity: Bool

    /// One project.
    package struct Project: Sendable, Equatable {
        /// Segments by segment key (`aid`).
        package var segments: [String: Segment]
        package init(segments: [String: Segment]) { self.segments = segments }
    }

    /// Entry status of an active segment.
    package enum EntryStatus: String, Sendable, Equatable, CaseIterable {
        /// Queue normally.
        case waiting
        /// Refuse everyone with 301.
        case block
    }

    /// Repeated Request Block: more than `limitPerSecond` requests of one user (or IP) within a
    /// second blocks it for `blockSeconds`, every request answered 302.
    package struct RepeatBlock: Sendable, Equatable {
        package var limitPerSecond: Int
        package var blockSeconds: Double
        package init(limitPerSecond: Int, blockSeconds: Double = 20) {
            self.limitPerSecond = limitPerSecond
            self.blockSeconds = blockSeconds
        }
    }

    /// One segment's settings. Defaults follow the docs/netfunnel-protocol.md (§5, §10.2).
    package struct Segment: Sendable, Equatable {
        /// Basic or section control.
        package var control: ControlMode = .basic
        /// Users admitted at once (limited inflow).
        package var limit: Int = 10
        /// Inactive segments answer 300 (bypass, empty key).
        package var active: Bool = true
        /// `block` answers 301.
        package var entryStatus: EntryStatus = .waiting
        /// `user_data` values or client IPs that always get 303 (keyless).
        package var whitelist: [String] = []
        /// `user_data` values or client IPs that always get 302.
        package var blacklist: [String] = []
        /// Repeated Request Block, off when nil.
        package var repeatBlock: RepeatBlock?
        /// Basic: key returned automatically this long after admission. Section: dropped when no
        /// alive notice arrives within it. Seconds.
        package var timeoutSeconds: Double = 20
        /// `ttl` of 201 replies to 5003 (alive cycle), seconds.
        package var aliveCycleSeconds: Int = 5
        /// Longest a section key may be held with alive notices, seconds.
        package var aliveExpirySeconds: Double = 300
        /// A waiting key that stops polling keeps its place this long, seconds.
        package var retentionSeconds: Double = 20
        /// `ttl` at the front of the line.
        package var ttlMin: Int = 1
        /// `ttl` at the back of the line.
        package var ttlMax: Int = 10
        /// Window over which `tps` is computed, seconds.
        package var tpsWindowSeconds: Double = 10
        /// `vwr_html` sent in replies; nil = the emulator's own page.
        package var vwrPageURL: String?
        /// `live_message` sent in replies.
        package var liveMessage: String = ""
        /// The scheduled start (nil: none): 5101s before it are held in a pre-queue and placed in
        /// line at it (``NetFUNNELServerState``'s schedule, README "Scheduled start").
        package var startsAt: Date?
        /// Whether the pre-queue is shuffled at the start (else kept in arrival order).
        package var shuffleAtStart: Bool = true
        /// The seed of that shuffle.
        package var seed: UInt64 = 0

        package init(control: ControlMode = .basic, limit: Int = 10) {
            self.control = control
            self.limit = limit
        }
    }

    package init(
        projects: [String: Project], advertisedHost: String? = nil, advertisedPort: Int? = nil,
        clientId: String = NetFUNNELEmulatorConfiguration.defaultClientId, strictKeys: Bool = false, nodeAffinity: Bool = false
    ) {
        self.projects = projects
        self.advertisedHost = advertisedHost
        self.advertisedPort = advertisedPort
        self.clientId = clientId
        self.strictKeys = strictKeys
        self.nodeAffinity = nodeAffinity
    }

    /// The CLI's default rooms, project `service_1`:
    /// - `segKey_basic`: basic control, limit 1, ttl 1–3 s (a queue forms with two users);
    /// - `segKey_section`: section control, limit 2, alive cycle 5 s;
    /// - `segKey_block`: entry status block (every user gets 301);
    /// - `act_8`, `act_10`: the segment names real deployments use (basic control, limit 10,
    ///   ttl 1–3 s), so a third-party client works against `waitingroom emulate` unchanged.
    public static var demo: NetFUNNELEmulatorConfiguration {
        var basic = Segment(control: .basic, limit: 1)
        basic.ttlMin = 1
        basic.ttlMax = 3
        var section = Segment(control: .section, limit: 2)
        section.aliveCycleSeconds = 5
        var block = Segment(control: .basic, limit: 10)
        block.entryStatus = .block
        var deployed = Segment(control: .basic, limit: 10)
        deployed.ttlMin = 1
        deployed.ttlMax = 3
        return NetFUNNELEmulatorConfiguration(projects: [
            "service_1": Project(segments: [
                "segKey_basic": basic, "segKey_section": section, "segKey_block": block,
                "act_8": deployed, "act_10": deployed
            ])
        ])
    }

    // MARK: decoding

    /// Reads the `"netfunnel"` member of a shared emulator document (other members ignored).
    /// A document without it yields ``demo``.
    public init(document: JSONValue) throws {
        guard case .object(let members) = document else {
            throw WaitingRoomError.invalidConfiguration(
                field: "emulator", "expected a JSON object with a \"netfunnel\" member", vendor: "netfunnel")
        }
        guard let part = members["netfunnel"], part != .null else {
            self = .demo
            return
        }
        try self.init(json: part, path: "netfunnel")
    }

    /// Reads the NetFUNNEL part itself (`{"projects": {…}}`).
    package init(json: JSONValue, path: String = "netfunnel") throws {
        let reader = try ConfigurationReader(json, path: path, vendor: "netfunnel")
        try reader.rejectUnknownKeys(["projects", "advertisedHost", "advertisedPort", "clientId", "strictKeys", "nodeAffinity"])
        guard let projectsReader = try reader.object("projects") else {
            throw WaitingRoomError.invalidConfiguration(
                field: reader.fieldName("projects"), "is required (an object of project keys)", vendor: "netfunnel")
        }
        var projects: [String: Project] = [:]
        for (projectKey, projectValue) in projectsReader.object {
            let projectReader = try ConfigurationReader(
                projectValue, path: projectsReader.fieldName(projectKey), vendor: "netfunnel")
            try projectReader.rejectUnknownKeys(["segments"])
            guard let segmentsReader = try projectReader.object("segments") else {
                throw WaitingRoomError.invalidConfiguration(
                    field: projectReader.fieldName("segments"), "is required (an object of segment keys)", vendor: "netfunnel")
            }
            var segments: [String: Segment] = [:]
            for (segmentKey, segmentValue) in segmentsReader.object {
                let segmentReader = try ConfigurationReader(
                    segmentValue, path: segmentsReader.fieldName(segmentKey), vendor: "netfunnel")
                segments[segmentKey] = try Segment(reader: segmentReader, base: Segment())
            }
            projects[projectKey] = Project(segments: segments)
        }
        self.init(
            projects: projects,
            advertisedHost: try reader.string("advertisedHost"),
            advertisedPort: try reader.int("advertisedPort", range: 1...65535),
            clientId: try reader.string("clientId") ?? Self.defaultClientId,
            strictKeys: try reader.bool("strictKeys") ?? false,
            nodeAffinity: try reader.bool("nodeAffinity") ?? false)
    }
}

extension NetFUNNELEmulatorConfiguration.Segment {
    /// Every settable field name.
    static let fieldNames: Set<String> = [
        "control", "limit", "active", "entryStatus", "whitelist", "blacklist", "repeatBlock", "timeoutSec",
        "aliveCycleSec", "aliveExpirySec", "retentionSec", "ttlMin", "ttlMax", "tpsWindowSec", "vwrPageUrl",
        "liveMessage", "startsAt", "shuffleAtStart", "seed"
    ]

    /// Reads a segment (or a partial update applied to `base`); a `"+SECONDS"` start counts from `now`.
    init(reader: ConfigurationReader, base: Self, now: Date = Date()) throws {
        try reader.rejectUnknownKeys(Self.fieldNames)
        self = base
        if let control = try reader.string("control") {
            guard let mode = ControlMode(rawValue: control) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: reader.fieldName("control"), "expected \"basic\" or \"section\", got \"\(control)\"",
                    vendor: "netfunnel")
            }
            self.control = mode
        }
        if let limit = try reader.int("limit", range: 0...1_000_000) { self.limit = limit }
        if let active = try reader.bool("active") { self.active = active }
        if let status = try reader.string("entryStatus") {
            guard let value = NetFUNNELEmulatorConfiguration.EntryStatus(rawValue: status) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: reader.fieldName("entryStatus"), "expected \"waiting\" or \"block\", got \"\(status)\"",
                    vendor: "netfunnel")
            }
            entryStatus = value
        }
        if let list = try reader.strings("whitelist") { whitelist = list }
        if let list = try reader.strings("blacklist") { blacklist = list }
        if let repeatReader = try reader.object("repeatBlock") {
            try repeatReader.rejectUnknownKeys(["limitPerSecond", "blockSec"])
            guard let limit = try repeatReader.int("limitPerSecond", range: 1...100_000) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: repeatReader.fieldName("limitPerSecond"), "is required (1…100000)", vendor: "netfunnel")
            }
            repeatBlock = .init(limitPerSecond: limit, blockSeconds: try repeatReader.double("blockSec", range: 0...86_400) ?? 20)
        } else if reader.object["repeatBlock"] == .null {
            repeatBlock = nil
        }
        if let value = try reader.double("timeoutSec", range: 0.001...86_400) { timeoutSeconds = value }
        if let value = try reader.int("aliveCycleSec", range: 1...30) { aliveCycleSeconds = value }
        if let value = try reader.double("aliveExpirySec", range: 0.001...86_400) { aliveExpirySeconds = value }
        if let value = try reader.double("retentionSec", range: 0...86_400) { retentionSeconds = value }
        if let value = try reader.int("ttlMin", range: 0...30) { ttlMin = value }
        if let value = try reader.int("ttlMax", range: 0...30) { ttlMax = value }
        if let value = try reader.double("tpsWindowSec", range: 0.001...3_600) { tpsWindowSeconds = value }
        if let value = try reader.string("vwrPageUrl") { vwrPageURL = value }
        if let value = try reader.string("liveMessage") { liveMessage = value }
        try readSchedule(reader, now: now)
        guard ttlMin <= ttlMax else {
            throw WaitingRoomError.invalidConfiguration(
                field: reader.fieldName("ttlMin"), "ttlMin \(ttlMin) is larger than ttlMax \(ttlMax)", vendor: "netfunnel")
        }
    }

    /// The segment as JSON (the admin endpoint's view and `nf-setting.json`).
    var json: JSONValue {
        var object: [String: JSONValue] = [
            "control": .string(control.rawValue), "limit": .number(Double(limit)), "active": .bool(active),
            "entryStatus": .string(entryStatus.rawValue), "whitelist": .array(whitelist.map(JSONValue.string)),
            "blacklist": .array(blacklist.map(JSONValue.string)), "timeoutSec": .number(timeoutSeconds),
            "aliveCycleSec": .number(Double(aliveCycleSeconds)), "aliveExpirySec": .number(aliveExpirySeconds),
            "retentionSec": .number(retentionSeconds), "ttlMin": .number(Double(ttlMin)),
            "ttlMax": .number(Double(ttlMax)), "tpsWindowSec": .number(tpsWindowSeconds),
            "liveMessage": .string(liveMessage)
        ]
        if let repeatBlock {
            object["repeatBlock"] = .object([
                "limitPerSecond": .number(Double(repeatBlock.limitPerSecond)), "blockSec": .number(repeatBlock.blockSeconds)
            ])
        }
        if let vwrPageURL { object["vwrPageUrl"] = .string(vwrPageURL) }
        object.merge(scheduleJSON) { _, new in new }
        return .object(object)
    }
}
