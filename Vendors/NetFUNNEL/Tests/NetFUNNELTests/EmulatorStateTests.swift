import Foundation
import Testing
import WaitingRoom

@testable import NetFUNNEL
@testable import NetFUNNELEmulator

@Suite("NetFUNNEL emulator state machine")
struct EmulatorStateTests {
    static func config(_ segment: NetFUNNELEmulatorConfiguration.Segment) -> NetFUNNELEmulatorConfiguration {
        NetFUNNELEmulatorConfiguration(projects: ["service_1": .init(segments: ["seg": segment])])
    }

    static func request(
        _ opcode: Int, key: String? = nil, user: String? = nil, js: Bool = true, sid: String = "service_1", aid: String = "seg"
    )
        -> NetFUNNELIncomingRequest
    {
        var p = ["opcode": String(opcode), "sid": sid, "aid": aid]
        if let key { p["key"] = key }
        if let user { p["user_data"] = user }
        if js {
            p["js"] = "yes"
            p["prefix"] = "NetFunnel.gRtype=\(opcode);"
        }
        return NetFUNNELIncomingRequest(parameters: p, host: "127.0.0.1", port: 9999)
    }

    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    @Test func queueAdmitsInArrivalOrder() throws {
        var state = NetFUNNELServerState(configuration: Self.config(.init(control: .basic, limit: 1)))
        let a = state.handle(Self.request(5101), now: t0)
        #expect(a.code == 200)
        #expect(a.requestType == 5002)
        let b = state.handle(Self.request(5101), now: t0)
        let c = state.handle(Self.request(5101), now: t0)
        // item 13: `nwait` counts the user's own place (the head of the line reads 1)
        #expect(b.code == 201 && b.nwait == 1 && b.nnext == 0)
        #expect(c.code == 201 && c.nwait == 2 && c.nnext == 0)
        // c polls first but is not at the front
        #expect(state.handle(Self.request(5002, key: c.key), now: t0 + 1).code == 201)
        // a returns its key; b is admitted on its next poll with a fresh key
        let released = state.handle(Self.request(5004, key: a.key), now: t0 + 2)
        #expect(released.code == 200 && released.key == "")
        let bPass = state.handle(Self.request(5002, key: b.key), now: t0 + 3)
        #expect(bPass.code == 200)
        #expect(bPass.key != b.key)
        #expect(state.handle(Self.request(5004, key: a.key), now: t0 + 3).code == 502)
        #expect(state.handle(Self.request(5004, key: "NOPE"), now: t0 + 3).code == 505)
        #expect(state.counters.keysTaken == 2)
        #expect(state.counters.keysHeld == 1)
        #expect(state.counters.waiting == 1)
        #expect(state.counters.keysNeverReturned == 1)
    }

    @Test func unknownProjectAndSegment() {
        var state = NetFUNNELServerState(configuration: Self.config(.init()))
        #expect(state.handle(Self.request(5101, sid: "nope"), now: t0).code == 500)
        #expect(state.handle(Self.request(5101, aid: "nope"), now: t0).code == 501)
        #expect(state.handle(Self.request(1234), now: t0).code == 500)
    }

    @Test func inactiveBlockListsAndRepeatBlock() {
        var segment = NetFUNNELEmulatorConfiguration.Segment()
        segment.whitelist = ["vip"]
        segment.blacklist = ["bad"]
        segment.repeatBlock = .init(limitPerSecond: 2, blockSeconds: 20)
        var state = NetFUNNELServerState(configuration: Self.config(segment))
        #expect(state.handle(Self.request(5101, user: "vip"), now: t0).code == 303)
        #expect(state.handle(Self.request(5101, user: "bad"), now: t0).code == 302)
        let first = state.handle(Self.request(5101, user: "bot"), now: t0)
        let second = state.handle(Self.request(5101, user: "bot"), now: t0)
        #expect(first.code == 200 && second.code == 200)
        #expect(state.handle(Self.request(5101, user: "bot"), now: t0).code == 302)
        #expect(state.handle(Self.request(5101, user: "bot"), now: t0 + 19).code == 302)
        #expect(state.handle(Self.request(5004, key: first.key), now: t0 + 19).code == 200)
        #expect(state.handle(Self.request(5004, key: second.key), now: t0 + 19).code == 200)
        segment.repeatBlock = nil
        segment.active = false
        state.setSegment(project: "service_1", segment: "seg", segment)
        let bypass = state.handle(Self.request(5101), now: t0 + 30)
        #expect(bypass.code == 300 && bypass.key == "")
        segment.active = true
        segment.entryStatus = .block
        state.setSegment(project: "service_1", segment: "seg", segment)
        #expect(state.handle(Self.request(5101), now: t0 + 31).code == 301)
        #expect(state.counters.keysNeverReturned == 0)
    }

    @Test func automaticKeyReturnAndRetention() {
        var segment = NetFUNNELEmulatorConfiguration.Segment(control: .basic, limit: 1)
        segment.timeoutSeconds = 20
        segment.retentionSeconds = 10
        var state = NetFUNNELServerState(configuration: Self.config(segment))
        let a = state.handle(Self.request(5101), now: t0)
        let b = state.handle(Self.request(5101), now: t0)
        #expect(a.code == 200 && b.code == 201)
        state.sweep(now: t0 + 11)  // b stopped polling beyond retention
        #expect(state.counters.waitersDropped == 1)
        #expect(state.handle(Self.request(5002, key: b.key), now: t0 + 11).code == 505)
        state.sweep(now: t0 + 21)  // a never returned
        #expect(state.counters.keysAutoReturned == 1)
        #expect(state.counters.keysNeverReturned == 1)
    }

    @Test func sectionAliveAndExpiry() {
        var segment = NetFUNNELEmulatorConfiguration.Segment(control: .section, limit: 1)
        segment.aliveCycleSeconds = 5
        segment.timeoutSeconds = 20
        segment.aliveExpirySeconds = 30
        var state = NetFUNNELServerState(configuration: Self.config(segment))
        let a = state.handle(Self.request(5101), now: t0)
        let alive = state.handle(Self.request(5003, key: a.key), now: t0 + 5)
        #expect(alive.code == 201 && alive.ttl == 5)
        #expect(state.handle(Self.request(5003, key: a.key), now: t0 + 24).code == 201)  // 19 s since last
        #expect(state.handle(Self.request(5003, key: a.key), now: t0 + 31).code == 505)  // expired
        #expect(state.counters.keysAutoReturned == 1)
    }

    @Test func ttlByPositionAndTPS() {
        var segment = NetFUNNELEmulatorConfiguration.Segment(control: .basic, limit: 1)
        segment.ttlMin = 1
        segment.ttlMax = 9
        segment.tpsWindowSeconds = 10
        var state = NetFUNNELServerState(configuration: Self.config(segment))
        let a = state.handle(Self.request(5101), now: t0)
        var replies: [NetFUNNELReply] = []
        for _ in 0..<5 { replies.append(state.handle(Self.request(5101), now: t0)) }
        #expect(replies.first?.ttl == 1)
        #expect(replies.last?.ttl == 9)
        #expect(a.tps == 0.1)
        _ = state.handle(Self.request(5004, key: a.key), now: t0 + 1)
        let next = state.handle(Self.request(5002, key: replies[0].key), now: t0 + 1)
        #expect(next.code == 200)
        #expect(next.tps == 0.2)
    }

    @Test func nativeDialectReply() throws {
        var state = NetFUNNELServerState(configuration: Self.config(.init()))
        let reply = state.handle(Self.request(5101, js: false), now: t0)
        #expect(reply.envelope == .native)
        let parsed = try NetFUNNELReply.parse(reply.rendered())
        #expect(parsed.code == 200 && parsed.key == reply.key && parsed.ip == "127.0.0.1" && parsed.port == 9999)
    }

    @Test func configurationDecodingNamesFields() throws {
        let doc = try JSONValue.parse(
            #"{"netfunnel": {"projects": {"service_1": {"segments": {"act_10": {"control": "basic", "limit": 1}}}}}, "queueit": {"x": 1}}"#)
        let config = try NetFUNNELEmulatorConfiguration(document: doc)
        #expect(config.projects["service_1"]?.segments["act_10"]?.limit == 1)
        let bad = try JSONValue.parse(#"{"netfunnel": {"projects": {"p": {"segments": {"s": {"limit": -1}}}}}}"#)
        #expect {
            try NetFUNNELEmulatorConfiguration(document: bad)
        } throws: { error in
            (error as? WaitingRoomError)?.field == "netfunnel.projects.p.segments.s.limit"
        }
        let typo = try JSONValue.parse(#"{"netfunnel": {"projects": {"p": {"segments": {"s": {"limt": 1}}}}}}"#)
        #expect {
            try NetFUNNELEmulatorConfiguration(document: typo)
        } throws: { error in
            (error as? WaitingRoomError)?.field == "netfunnel.projects.p.segments.s.limt"
        }
        let control = try JSONValue.parse(#"{"netfunnel": {"projects": {"p": {"segments": {"s": {"control": "fast"}}}}}}"#)
        #expect(throws: WaitingRoomError.self) { try NetFUNNELEmulatorConfiguration(document: control) }
        #expect(try NetFUNNELEmulatorConfiguration(document: .object([:])) == .demo)
    }

    @Test func fixtureFileDecodes() throws {
        let bytes = try TestSupport.fixture("emulator.json")
        let config = try NetFUNNELEmulatorConfiguration(document: try JSONValue.parse(Data(bytes)))
        #expect(config == .demo)
    }

    @Test func faultJSON() throws {
        let fault = try NetFUNNELFault(json: try JSONValue.parse(#"{"opcode": 5002, "httpStatus": 503, "count": 2}"#))
        #expect(fault == NetFUNNELFault(opcode: 5002, action: .httpStatus(503), count: 2))
        #expect(throws: WaitingRoomError.self) { try NetFUNNELFault(json: try JSONValue.parse(#"{"drop": true, "code": 500}"#)) }
    }
}
