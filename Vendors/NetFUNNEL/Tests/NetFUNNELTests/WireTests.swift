import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@testable import NetFUNNEL
@testable import NetFUNNELEmulator

/// Issue 11, items 11–15: key replacement and node affinity, value encoding, the head of the
/// line, both dialects, the default rooms.
@Suite("NetFUNNEL wire: keys, nodes, encoding, head of line, dialects, default rooms")
struct WireTests {
    let t0 = Date(timeIntervalSince1970: 1_800_000_000)

    static func state(
        strict: Bool = true, limit: Int = 1, _ tweak: (inout NetFUNNELEmulatorConfiguration) -> Void = { _ in }
    ) -> NetFUNNELServerState {
        var configuration = NetFUNNELEmulatorConfiguration(
            projects: ["service_1": .init(segments: ["seg": .init(control: .basic, limit: limit)])], strictKeys: strict)
        tweak(&configuration)
        return NetFUNNELServerState(configuration: configuration)
    }

    static func request(_ opcode: Int, key: String? = nil, js: Bool = true, host: String = "127.0.0.1", sid: String = "service_1")
        -> NetFUNNELIncomingRequest
    {
        var request = EmulatorStateTests.request(opcode, key: key, js: js, sid: sid)
        request.host = host
        return request
    }

    // MARK: item 11 — keys are superseded, nodes are named

    @Test func everyCheckEnterReplyCarriesAFreshShorterKeyAndSupersededKeysAreRefused() throws {
        var state = Self.state()
        let a = state.handle(Self.request(5101), now: t0)
        let b0 = state.handle(Self.request(5101), now: t0)
        #expect(a.code == 200 && b0.code == 201)
        let k0 = try #require(b0.key)
        let b1 = state.handle(Self.request(5002, key: k0), now: t0 + 1)
        let k1 = try #require(b1.key)
        #expect(b1.code == 201 && k1 != k0 && k1.count < k0.count, "a fresh, shorter key")
        let b2 = state.handle(Self.request(5002, key: k1), now: t0 + 2)
        let k2 = try #require(b2.key)
        #expect(b2.code == 201 && k2 != k1 && k2 != k0)
        #expect(state.handle(Self.request(5004, key: a.key), now: t0 + 3).code == 200)
        let b3 = state.handle(Self.request(5002, key: k2), now: t0 + 3)
        let k3 = try #require(b3.key)
        #expect(b3.code == 200 && k3 != k2, "admission carries a fresh key too")
        // strict: a key older than the one presented last is refused (507), the slot stays held
        let stale = state.handle(Self.request(5004, key: k0), now: t0 + 4)
        #expect(stale.code == 507 && stale.message == "Invalid Key (superseded by a newer key)")
        #expect(state.handle(Self.request(5002, key: k1), now: t0 + 4).code == 507)
        #expect(state.handle(Self.request(5003, key: k1), now: t0 + 4).code == 507)
        #expect(state.counters.keysHeld == 1)
        #expect(state.handle(Self.request(5004, key: k3), now: t0 + 5).code == 200)
        #expect(state.handle(Self.request(5004, key: k0), now: t0 + 6).code == 502, "every key of a completed ticket")
        // counters count tickets (users), not key strings
        let c = state.counters
        #expect(c.keysIssued == 2 && c.keysTaken == 2 && c.keysReturned == 2 && c.keysNeverReturned == 0)
        #expect(c.waiting == 0 && c.waitersLeft == 0)
    }

    @Test func theKeyPresentedBeforeALostReplyStaysValid() throws {
        var state = Self.state()
        _ = state.handle(Self.request(5101), now: t0)
        let k0 = try #require(state.handle(Self.request(5101), now: t0).key)
        // the reply carrying k1 is lost: the client still knows only k0
        let k1 = try #require(state.handle(Self.request(5002, key: k0), now: t0 + 1).key)
        // it polls again with k0: answered, with another fresh key
        let retry = state.handle(Self.request(5002, key: k0), now: t0 + 2)
        let k2 = try #require(retry.key)
        #expect(retry.code == 201 && k2 != k1)
        #expect(state.handle(Self.request(5002, key: k1), now: t0 + 3).code == 507, "k1 was never seen: superseded")
        // the reply carrying k2 is lost too: leaving with k0 still works
        #expect(state.handle(Self.request(5004, key: k0), now: t0 + 3).code == 200)
        #expect(state.counters.waitersLeft == 1 && state.counters.waiting == 0)
    }

    @Test func lenientModeAcceptsEveryKeyOfATicket() throws {
        var state = Self.state(strict: false)
        let k0 = try #require(state.handle(Self.request(5101), now: t0).key)  // admitted
        var key = k0
        for _ in 0..<100 { key = try #require(state.handle(Self.request(5002, key: key), now: t0).key) }
        #expect(key != k0)
        #expect(state.handle(Self.request(5002, key: k0), now: t0 + 1).code == 200, "the 5101 key is never forgotten")
        #expect(state.handle(Self.request(5004, key: k0), now: t0 + 2).code == 200)
        #expect(state.counters.keysReturned == 1 && state.counters.keysNeverReturned == 0)
    }

    @Test func frontDoorRefusesKeysOfANamedNode() throws {
        var state = Self.state {
            $0.advertisedHost = "node7.nf.test"
            $0.advertisedPort = 443
            $0.nodeAffinity = true
        }
        let pass = state.handle(Self.request(5101, host: "front.nf.test"), now: t0)
        #expect(pass.code == 200 && pass.ip == "node7.nf.test" && pass.port == 443)
        let key = try #require(pass.key)
        let wrong = state.handle(Self.request(5004, key: key, host: "front.nf.test"), now: t0 + 1)
        #expect(
            wrong.rendered()
                == #"NetFunnel.gRtype=5004;NetFunnel.gControl.result='5004:503:msg="Wrong Server ID"';NetFunnel.gControl._showResult();"#)
        #expect(state.counters.keysHeld == 1)
        #expect(state.handle(Self.request(5004, key: key, host: "NODE7.nf.test"), now: t0 + 2).code == 200)
    }

    @Test func clientUsesTheNamedNodeAndTheNewestKey() async throws {
        try await Harness.run(emulator: {
            $0.advertisedHost = "node7.nf.test"
            $0.advertisedPort = 443
            $0.nodeAffinity = true
        }) { h in
            let transport = NodeResolvingTransport(port: h.server.port)
            let provider = try h.provider(transport: transport) { $0.serverUrl = "https://front.nf.test" }
            let (a, b) = try await h.aPassedThenB(provider)
            await h.eventually("b polled three times") { (h.emulator.counters().requests["5002"] ?? 0) >= 3 }
            #expect(try await a.complete().code == 200)
            try await b.requirePassed("b")
            #expect(try await b.complete().code == 200)
            let counters = h.emulator.counters()
            #expect(counters.replies["503"] == nil && counters.replies["507"] == nil, "\(counters.replies)")
            let hosts = transport.sentHosts.items
            #expect(
                hosts.filter { $0 == "front.nf.test" }.count == 3,
                "only the settings document and the two 5101s go to the front door: \(hosts)")
            #expect(hosts.filter { $0 == "node7.nf.test" }.count >= 5)
            // what a client that ignores `ip`/`port` gets
            let wrong = try await h.raw("opcode=5004&key=ANY&js=yes", host: "front.nf.test")
            #expect(wrong.code == 503 && wrong.message == "Wrong Server ID")
            h.expectNoLeaks()
        }
    }

    @Test func aLostCheckEnterReplyLeaksNoKey() async throws {
        try await Harness.run { h in
            let provider = try h.provider()
            let (a, b) = try await h.aPassedThenB(provider)
            await h.eventually("b waiting") { (h.emulator.counters().requests["5002"] ?? 0) >= 1 }
            // the server replaces b's key, the reply never arrives: b fails and leaves with its old key
            h.emulator.inject(NetFUNNELFault(opcode: 5002, action: .loseReply, count: 1))
            let error = try await b.requireFailed("b")
            #expect(error.vendorCode == 1001)
            await h.eventually("b left") { h.emulator.counters().waitersLeft == 1 }
            #expect(try await a.complete().code == 200)
            #expect(h.emulator.counters().replies["507"] == nil)
            h.expectNoLeaks()
        }
    }

    @Test func aRetriedCheckEnterAfterALostReplyKeepsWaiting() async throws {
        try await Harness.run { h in
            let provider = try h.provider { $0.retryCount = 1 }
            let (a, b) = try await h.aPassedThenB(provider)
            await h.eventually("b waiting") { (h.emulator.counters().requests["5002"] ?? 0) >= 1 }
            h.emulator.inject(NetFUNNELFault(opcode: 5002, action: .loseReply, count: 1))
            await h.eventually("the reply was lost") { h.emulator.counters().faultsInjected == 1 }
            #expect(try await a.complete().code == 200)
            try await b.requirePassed("b")
            #expect(try await b.complete().code == 200)
            #expect(h.emulator.counters().replies["507"] == nil)
            h.expectNoLeaks()
        }
    }

    // MARK: item 12 — encoded values, bracketed IPv6

    static let nastyText = #"Sale "today" & tomorrow: 50%=off; it's <b>\ ünïcode "#

    @Test func liveMessageAndMsgAreEncodedAndRoundTrip() throws {
        var state = Self.state { $0.projects["service_1"]?.segments["seg"]?.liveMessage = Self.nastyText }
        for js in [true, false] {
            let reply = state.handle(Self.request(5101, js: js), now: t0)
            let parsed = try NetFUNNELReply.parse(reply.rendered())
            #expect(parsed.liveMessage == Self.nastyText)
            #expect(parsed.key == reply.key && parsed.port == 9999 && parsed.ip == "127.0.0.1" && parsed.sticky == "nf4")
            let raw = try #require(parsed["live_message"])
            #expect(!raw.contains(where: { "&=;:'\"\\<>".contains($0) }), "raw \(raw)")
            _ = state.handle(Self.request(5004, key: reply.key), now: t0)
        }
        let unknown = state.handle(Self.request(5101, sid: #"x"&y='z'"#), now: t0)
        let parsed = try NetFUNNELReply.parse(unknown.rendered())
        #expect(parsed.code == 500 && parsed.message == #"unknown project x"&y='z'"#)
        #expect(parsed.parameters.map(\.name) == ["msg"])
    }

    @Test func encodedValuesRoundTripForRandomText() throws {
        var rng = SplitMix64(seed: 0x00E1_C0DE)
        let atoms = ["a", " ", "&", "=", "'", "\"", ";", ":", "%", "%41", "\\", "<", ">", "\n", "\t", "é", "🙂", "key=X", "msg=", "'';"]
        for _ in 0..<2_000 {
            let text = (0..<Int(rng.next() % 12)).map { _ in atoms[Int(rng.next() % UInt64(atoms.count))] }.joined()
            for envelope in [NetFUNNELReply.Envelope.native, .javascript(prefix: "NetFunnel.gRtype=5002;")] {
                let reply = NetFUNNELReply(
                    envelope: envelope, requestType: envelope == .native ? nil : 5002, code: 201,
                    parameters: [
                        .init("key", "K"), .init("msg", NetFUNNELReply.quotedMessage(text)),
                        .init("live_message", NetFUNNELReply.encodeValue(text)), .init("ttl", "3")
                    ])
                let parsed = try NetFUNNELReply.parse(reply.rendered())
                #expect(
                    parsed.message == text && parsed.liveMessage == text && parsed.key == "K" && parsed.ttl == 3,
                    "text \(text.debugDescription)")
            }
        }
        // text that is not valid percent-encoding is kept as sent (live replies are not encoded by us)
        #expect(try NetFUNNELReply.parse("503:msg=\"100% sure\"").message == "100% sure")
    }

    @Test func ipv6NodesAreBracketedAndFollowed() throws {
        var state = Self.state()
        let reply = state.handle(Self.request(5101, host: "::1"), now: t0)
        let parsed = try NetFUNNELReply.parse(reply.rendered())
        #expect(parsed["ip"] == "[::1]" && parsed.ipHost == "::1" && parsed.port == 9999)
        #expect(NetFUNNELReply.nodeHost("[::1]") == "[::1]" && NetFUNNELReply.nodeHost("10.0.0.7") == "10.0.0.7")

        let serverURL = try #require(URL(string: "http://[::1]:8080"))
        let client = try NetFUNNELClient(
            configuration: NetFUNNELConfiguration(clientId: "emulator-0000", serverUrl: serverURL.absoluteString),
            serverURL: serverURL, environment: ProviderEnvironment(transport: AsyncHTTPTransport.shared))
        let node = try #require(client.allowedNode(from: try NetFUNNELReply.parse("200:key=K&ip=[::1]&port=8081")))
        #expect(node == NetFUNNELNode(host: "::1", port: 8081))
        #expect(client.baseURL(for: node).absoluteString == "http://[::1]:8081")
        #expect(client.allowedNode(from: try NetFUNNELReply.parse("200:key=K&ip=[::2]&port=8081")) == nil)
    }

    // MARK: item 13 — the head of the line never reads nwait=0 before admission

    @Test func headOfTheLineReadsAtLeastOneUntilAdmitted() throws {
        var state = Self.state()
        let a = state.handle(Self.request(5101), now: t0)
        var b = state.handle(Self.request(5101), now: t0)
        let c = state.handle(Self.request(5101), now: t0)
        #expect(b.code == 201 && b.nwait == 1 && b.nnext == 0)
        #expect(c.code == 201 && c.nwait == 2 && c.nnext == 0)
        for i in 1...5 {
            b = state.handle(Self.request(5002, key: b.key), now: t0 + Double(i))
            #expect(b.code == 201 && (b.nwait ?? 0) >= 1)
        }
        _ = state.handle(Self.request(5004, key: a.key), now: t0 + 6)
        b = state.handle(Self.request(5002, key: b.key), now: t0 + 7)
        #expect(b.code == 200 && b.nwait == 0)
    }

    @Test func clientAtTheHeadSeesOneAhead() async throws {
        try await Harness.run { h in
            let provider = try h.provider { $0.useNetfunnelTemplate = false }
            let (a, b) = try await h.aPassedThenB(provider)
            let log = EventLog(b)
            await h.eventually("three progress events") { log.progress.count >= 3 }
            #expect(log.progress.allSatisfy { $0.ahead == 1 }, "\(log.progress.map(\.ahead))")
            #expect(try await a.complete().code == 200)
            try await b.requirePassed("b")
            #expect(try await b.complete().code == 200)
            h.expectNoLeaks()
        }
    }

    // MARK: item 14 — both dialects

    @Test func parsesEveryDialectForm() throws {
        let native = try NetFUNNELReply.parse("201:key=ABC&nwait=3&nnext=1&tps=0.5&ttl=2&ip=10.0.0.7&port=80")
        #expect(native.envelope == .native && native.requestType == nil && native.code == 201 && native.nwait == 3)
        let spaced = try NetFUNNELReply.parse(
            "NetFunnel.gRtype = 5101; NetFunnel.gControl.result='5002:200:key=K&nwait=0'; NetFunnel.gControl._showResult();")
        #expect(spaced.envelope == .javascript(prefix: "NetFunnel.gRtype = 5101;"))
        #expect(spaced.requestType == 5002 && spaced.code == 200 && spaced.key == "K" && spaced.parameters.count == 2)
        let trailing = try NetFUNNELReply.parse(
            "NetFunnel.gRtype=5004;NetFunnel.gControl.result='5004:200:key=&chk_enter_cnt=0';NetFunnel.gControl._showResult();\n")
        #expect(trailing.requestType == 5004 && trailing.key == "" && trailing.checkEnterCount == 0)
        let emptyJS = try NetFUNNELReply.parse(
            "NetFunnel.gRtype=5002;NetFunnel.gControl.result='5002:200:';NetFunnel.gControl._showResult();")
        #expect(emptyJS.requestType == 5002 && emptyJS.code == 200 && emptyJS.parameters.isEmpty && emptyJS.key == nil)
        let emptyTyped = try NetFUNNELReply.parse("5002:200:")
        #expect(emptyTyped.requestType == 5002 && emptyTyped.code == 200 && emptyTyped.parameters.isEmpty)
        let emptyNative = try NetFUNNELReply.parse("200:")
        #expect(emptyNative.envelope == .native && emptyNative.code == 200 && emptyNative.parameters.isEmpty)
    }

    @Test func nativeRequestsCarryNoJSParameters() throws {
        let issue = NetFUNNELRequest(
            opcode: .issueAndEnter, ttl: 4, projectKey: "service_1", segmentKey: "act_10", userData: "u", timestampMillis: 1,
            dialect: .native)
        #expect(issue.query == "opcode=5101&sid=service_1&aid=act_10&user_data=u")
        for opcode in [NetFUNNELOpcode.checkEnter, .aliveNotice, .complete] {
            let request = NetFUNNELRequest(
                opcode: opcode, key: "K1", ttl: 4, projectKey: "service_1", segmentKey: "act_10", timestampMillis: 1, dialect: .native)
            #expect(request.query == "opcode=\(opcode.rawValue)&key=K1")
        }
    }

    @Test func emulatorChoosesTheDialectFromJS() {
        let emulator = NetFUNNELEmulator(configuration: Self.state().configuration)
        let base = "opcode=5101&sid=service_1&aid=seg"
        let yes = emulator.answer(query: base + "&nfid=0&prefix=NetFunnel.gRtype%3D5101%3B&js=yes&1712345678901")
        let truthy = emulator.answer(query: base + "&nfid=0&prefix=NetFunnel.gRtype=5101;&js=true&1712345678902=")
        let native = emulator.answer(query: base)
        for answer in [yes, truthy] {
            #expect(answer.body.hasPrefix("NetFunnel.gRtype=5101;NetFunnel.gControl.result='5002:"))
            #expect(answer.body.hasSuffix("';NetFunnel.gControl._showResult();"))
            #expect(answer.contentType.hasPrefix("application/javascript"))
        }
        #expect(native.body.hasPrefix("201:key=") && !native.body.contains("NetFunnel"))
        #expect(native.contentType.hasPrefix("text/plain"))
    }

    /// One full flow (a passes, b waits, a leaves, b passes and leaves) with raw requests in `dialect`.
    static func flow(_ h: Harness, dialect: NetFUNNELRequest.Dialect, jsValue: String) async throws {
        func send(_ opcode: NetFUNNELOpcode, key: String? = nil) async throws -> NetFUNNELReply {
            let request = NetFUNNELRequest(
                opcode: opcode, key: key, projectKey: Harness.project, segmentKey: "seg",
                timestampMillis: 1_712_345_678_901, dialect: dialect)
            var query = request.query
            if jsValue == "true" {  // `js=true` and the cache-buster written as `<ms>=`
                query = query.replacingOccurrences(of: "js=yes", with: "js=true") + "="
            }
            let reply = try await h.raw(query)
            switch dialect {
            case .native: #expect(reply.envelope == .native && reply.requestType == nil)
            case .javascript:
                #expect(reply.envelope == .javascript(prefix: request.prefix))
                #expect(reply.requestType == (opcode == .issueAndEnter ? 5002 : opcode.rawValue))
            }
            return reply
        }
        let a = try await send(.issueAndEnter)
        #expect(a.code == 200)
        let b = try await send(.issueAndEnter)
        #expect(b.code == 201 && b.nwait == 1)
        var key = try #require(b.key)
        for _ in 0..<3 {
            let poll = try await send(.checkEnter, key: key)
            #expect(poll.code == 201 && poll.key != key)
            key = try #require(poll.key)
        }
        #expect(try await send(.complete, key: a.key).code == 200)
        let pass = try await send(.checkEnter, key: key)
        #expect(pass.code == 200)
        let released = try await send(.complete, key: pass.key)
        #expect(released.code == 200 && released.key == "")
    }

    @Test(arguments: ["native", "js=yes", "js=true"])
    func bothDialectsEndToEnd(form: String) async throws {
        try await Harness.run { h in
            switch form {
            case "native": try await Self.flow(h, dialect: .native, jsValue: "")
            case "js=yes": try await Self.flow(h, dialect: .javascript, jsValue: "yes")
            default: try await Self.flow(h, dialect: .javascript, jsValue: "true")
            }
            let counters = h.emulator.counters()
            #expect(counters.keysTaken == 2 && counters.keysReturned == 2)
            h.expectNoLeaks()
        }
    }

    // MARK: item 15 — the segment names real deployments use

    @Test func defaultRoomsIncludeDeployedSegmentNames() async throws {
        let segments = NetFUNNELEmulatorConfiguration.demo.projects["service_1"]?.segments ?? [:]
        #expect(Set(segments.keys).isSuperset(of: ["act_8", "act_10", "segKey_basic", "segKey_section", "segKey_block"]))
        let emulator = NetFUNNELEmulator(clock: VirtualClock(autoAdvance: true))
        let server = try await emulator.start(host: "127.0.0.1", port: 0)
        do {
            for (segment, query) in [("act_10", "js=yes"), ("act_8", "")] {
                let response = try await AsyncHTTPTransport.shared.send(
                    WaitingRoom.HTTPRequest(
                        url: server.baseURL + "/ts.wseq?opcode=5101&sid=service_1&aid=\(segment)&\(query)", timeout: .seconds(30)))
                let reply = try NetFUNNELReply.parse(response.body)
                #expect(reply.code == 200, "\(segment)")
                let done = try await AsyncHTTPTransport.shared.send(
                    WaitingRoom.HTTPRequest(
                        url: server.baseURL + "/ts.wseq?opcode=5004&key=\(reply.key ?? "")&\(query)", timeout: .seconds(30)))
                #expect(try NetFUNNELReply.parse(done.body).code == 200)
            }
            #expect(emulator.counters().keysNeverReturned == 0)
        } catch {
            await server.shutdown()
            throw error
        }
        await server.shutdown()
    }
}

extension WireTests {
    /// The client's transport path in the native dialect: bare requests, bare replies, newest key.
    @Test func clientSendsTheNativeDialect() async throws {
        try await Harness.run { h in
            let serverURL = try #require(URL(string: h.server.baseURL))
            let client = try NetFUNNELClient(
                configuration: h.configuration(), serverURL: serverURL, environment: h.environment, dialect: .native)
            let entry = h.entry()
            let a = try await client.send(.issueAndEnter, key: nil, entry: entry, node: nil)
            #expect(a.envelope == .native && a.code == 200)
            let b = try await client.send(.issueAndEnter, key: nil, entry: entry, node: nil)
            #expect(b.envelope == .native && b.code == 201 && b.nwait == 1)
            let poll = try await client.send(.checkEnter, key: b.key, entry: entry, node: client.allowedNode(from: b))
            #expect(poll.code == 201 && poll.key != b.key)
            #expect(try await client.send(.complete, key: a.key, entry: entry, node: nil).code == 200)
            #expect(try await client.send(.complete, key: poll.key, entry: entry, node: nil).code == 200)
            h.expectNoLeaks()
        }
    }
}
