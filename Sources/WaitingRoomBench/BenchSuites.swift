import CrowdHandler
import CrowdHandlerGateEngine
import Crypto
import Foundation
import NetFUNNEL
import QueueIt
import QueueItGateEngine
import WaitingRoom
import WaitingRoomBenchSupport
import WaitingRoomEmulators
import WaitingRoomGate
import WaitingRoomGateProxy
import WaitingRoomLua

/// The benchmark suites `waitingroom bench` runs. Figures that matter are ratios to a baseline
/// measured in the same run.
package enum BenchSuites {
    package typealias Figure = CoreBenchmarks.Figure
    package static let names = ["core", "lua", "netfunnel", "queueit", "crowdhandler", "emulators", "state"] + footprintNames

    /// The suites of issue 13's footprint rows: an emit and a fan-out of events, start-up next to
    /// `lua5.4`, memory per waiting user (each figure with its baseline and goal).
    static let footprintNames = ["events", "startup", "memory"]

    package static func run(_ name: String) async -> [Figure] {
        switch name {
        case "core":
            let baseline = await CoreBenchmarks.eventBaseline()
            let fanOut = await CoreBenchmarks.eventFanOut()
            let ratio = Figure(name: "fan-out to 3 / baseline", value: fanOut.value / baseline.value, unit: "×")
            return [baseline, fanOut, ratio, await CoreBenchmarks.idleSessionMemory()]
        case "lua":
            do {
                let f = try await FlowBenchmarks.measure()
                return [
                    Figure(name: "raw lua_pcall round trip", value: f.rawPcallNanoseconds, unit: "ns"),
                    Figure(
                        name: "full progress-event dispatch Swift → Lua handler → back", value: f.dispatchNanoseconds / 1000,
                        unit: "µs/event"),
                    Figure(name: "dispatch / raw pcall", value: f.ratio, unit: "×"),
                    Figure(
                        name: "same dispatch from inside the runtime's actor (no hop)", value: f.inActorDispatchNanoseconds / 1000,
                        unit: "µs/event"),
                    Figure(name: "Lua heap of one idle flow runtime", value: Double(f.idleRuntimeBytes), unit: "bytes")
                ]
            } catch {
                return [Figure(name: "lua benchmark failed: \(error)", value: .nan, unit: "")]
            }
        case "netfunnel":
            return [netFunnelParsing()]
        case "queueit":
            return queueItTokens() + queueItGateDecisions()
        case "crowdhandler":
            return crowdHandlerBench()
        case "emulators":
            return await EmulatorBenchmarks.run()
        case "events":
            return await BenchEvents.run().map(\.figure)
        case "startup":
            return await BenchStartup.run().map(\.figure)
        case "memory":
            return await BenchMemory.run().map(\.figure)
        case "state":
            return await BenchState.run().map(\.figure)
        default:
            return []
        }
    }

    /// NetFUNNEL replies parsed per second (both envelopes, a mix of codes).
    static func netFunnelParsing(rounds: Int = 400_000, chunks: Int = 40) -> Figure {
        let bodies = [
            "NetFunnel.gRtype=5101;NetFunnel.gControl.result='5002:200:key=\(String(repeating: "K", count: 64))&nwait=0&nnext=0&tps=0.000000&ttl=0&ip=127.0.0.1&port=8080';NetFunnel.gControl._showResult();",
            "NetFunnel.gRtype = 5002 ; NetFunnel.gControl.result = '5002:201:key=AB&nwait=1532&nnext=410&tps=37.5&ttl=8' ;",
            "201:key=ABCDEF&nwait=1532&nnext=410&tps=37.5&ttl=8&ip=10.0.0.7&port=80",
            "NetFunnel.gControl.result='5004:200:key=&nwait=0&chk_enter_cnt=0&vwr_html=https%3A%2F%2Fx';"
        ].map { Array($0.utf8) }
        var checksum = 0
        // the fastest of `chunks` equal slices: other processes on a shared machine only slow a run down
        let perChunk = max(1, rounds / chunks)
        var best = Duration.seconds(3600)
        for _ in 0..<chunks {
            best = min(
                best,
                ContinuousClock().measure {
                    for i in 0..<perChunk {
                        if let reply = try? NetFUNNELReply.parse(bodies[i % bodies.count]) { checksum &+= reply.code }
                    }
                })
        }
        return Figure(
            name: "NetFUNNEL replies parsed (best of \(chunks) × \(perChunk), checksum \(checksum % 1000))",
            value: Double(perChunk) / best.seconds, unit: "replies/s", goal: "value >= 2000000")
    }

    /// Queue-it tokens validated per second (hash → event → expiry → ip), next to a bare
    /// HMAC-SHA256 of the same bytes as the baseline.
    static func queueItTokens(rounds: Int = 200_000, chunks: Int = 40) -> [Figure] {
        let minter = QueueItTokenMinter(secretKey: "bench-secret-key")
        let validator = QueueItTokenValidator(secretKey: "bench-secret-key", eventId: "sale")
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let tokens = (0..<1000).compactMap { i in
            try? minter.mint(
                eventId: "sale", queueId: "9f1c2b7e-\(i)", expiresAt: 1_700_000_600, redirectType: .queue,
                cookieValidityMinutes: 20, clientIP: "10.0.\(i % 250).1")
        }
        guard !tokens.isEmpty else { return [Figure(name: "queueit token mint failed", value: .nan, unit: "")] }
        // the client addresses are made before timing, as the tokens are
        let addresses = (0..<250).map { "10.0.\($0).1" }
        let key = SymmetricKey(data: Array("bench-secret-key".utf8))
        // validations and bare hashes take turns in `chunks` slices, and each keeps its fastest
        // slice: a load that comes and goes on a shared machine hits both alike
        let perChunk = max(1, rounds / chunks)
        var ok = 0
        var sink = 0
        let fastest = fastestAlternating(
            chunks: chunks,
            [
                {
                    for i in 0..<perChunk
                    where (try? validator.validate(tokens[i % tokens.count], now: now, clientIP: addresses[i % tokens.count % 250])) != nil
                    {
                        ok += 1
                    }
                },
                { for i in 0..<perChunk { sink &+= bareHMAC(key: key, tokens[i % tokens.count]) } }
            ])
        let (elapsed, bare) = (fastest[0], fastest[1])
        let validated = Double(perChunk) / elapsed.seconds
        let hashed = Double(perChunk) / bare.seconds
        return [
            Figure(
                name: "Queue-it tokens validated (\(ok) valid; best of \(chunks) × \(perChunk), alternating) vs bare HMACs",
                value: validated, unit: "tokens/s", baseline: hashed, goal: "ratio >= 0.8"),
            Figure(name: "bare HMAC-SHA256 hex of a whole token (baseline, \(sink % 10))", value: hashed, unit: "hashes/s"),
            Figure(name: "validations / bare HMACs", value: validated / hashed, unit: "×")
        ]
    }

    /// Runs each of `work` once per chunk, in turn, `chunks` times, and gives each one's fastest
    /// run: a load that comes and goes on a shared machine hits them alike, and only slows a run
    /// down.
    static func fastestAlternating(chunks: Int, _ work: [() -> Void]) -> [Duration] {
        var fastest = [Duration](repeating: .seconds(3600), count: work.count)
        for _ in 0..<chunks {
            for (index, run) in work.enumerated() {
                fastest[index] = min(fastest[index], ContinuousClock().measure(run))
            }
        }
        return fastest
    }

    private static let hexDigits: [UInt8] = Array("0123456789abcdef".utf8)

    /// The baselines' bare HMAC-SHA256 of `text`, keyed on every call as a connector without a key
    /// cache computes it (the product caches keyed HMACs, `QueueItHash`), in lower-case hex; gives
    /// the hex's length so the work is not optimised away.
    static func bareHMAC(key: SymmetricKey, _ text: String) -> Int {
        let hexDigits = Self.hexDigits
        let code = HMAC<SHA256>.authenticationCode(for: Array(text.utf8), using: key)
        var hex: [UInt8] = []
        hex.reserveCapacity(64)
        for byte in code {
            hex.append(hexDigits[Int(byte >> 4)])
            hex.append(hexDigits[Int(byte & 0x0f)])
        }
        return String(decoding: hex, as: UTF8.self).utf8.count
    }

    /// `waitingroom gate`'s Queue-it check per second: a request with a valid session cookie
    /// (1,000 visitors, each its own cookie) decided by ``QueueItGate`` (trigger match, cookie
    /// read and checked, cookie re-issued with a new issue time, as `ExtendCookieValidity`
    /// wants), next to a bare HMAC-SHA256 of the cookie as the baseline. The check takes two
    /// HMACs (the old cookie's, the new one's), so 0.5× is its ceiling. That gate remembers no
    /// decision (`sessionMemoCapacity` 0); the same requests through the default gate, which
    /// remembers a valid cookie's decision for the rest of its second, are the third figure.
    static func queueItGateDecisions(rounds: Int = 100_000, chunks: Int = 40) -> [Figure] {
        let secret = "bench-secret-key"
        let json = EmulatorGateIntegration.queueItJSON(queueDomain: "http://127.0.0.1:9")
        guard let configuration = try? QueueItIntegrationConfig(json: json),
            let gate = try? QueueItGate(
                customerId: "demo", secretKey: secret, configuration: configuration,
                options: QueueItGate.Options(sessionMemoCapacity: 0)),
            let remembering = try? QueueItGate(customerId: "demo", secretKey: secret, configuration: configuration)
        else {
            return [Figure(name: "queueit gate set-up failed", value: .nan, unit: "")]
        }
        let now = Int64(Date().timeIntervalSince1970)
        let cookieName = QueueItAcceptedCookie.name(forEvent: EmulatorGateIntegration.queueItEvent)
        let cookies = (0..<1000).map { i in
            QueueItAcceptedCookie(
                eventId: EmulatorGateIntegration.queueItEvent, queueId: "9f1c2b7e-4c1d-4e0b-9a57-\(100_000_000_000 + i)",
                fixedValidityMinutes: nil, redirectType: "queue", issueTime: now - 60, hashedIP: nil, secretKey: secret
            ).value
        }
        let requests = cookies.map { cookie in
            GateRequest(
                url: "http://shop.example/reply.js",
                headers: [
                    GateHeader("Host", "shop.example"), GateHeader("User-Agent", "wrk"), GateHeader("Accept", "*/*"),
                    GateHeader("Cookie", "theme=dark; \(cookieName)=\(cookie); _ga=GA1.2.3")
                ], clientIP: "127.0.0.1")
        }
        let key = SymmetricKey(data: Array(secret.utf8))
        let perChunk = max(1, rounds / chunks)
        var passed = 0
        var passedRemembered = 0
        var sink = 0
        let fastest = fastestAlternating(
            chunks: chunks,
            [
                { for i in 0..<perChunk where gate.decideNow(requests[i % requests.count]).verdict == .pass { passed += 1 } },
                { for i in 0..<perChunk { sink &+= bareHMAC(key: key, cookies[i % cookies.count]) } },
                {
                    for i in 0..<perChunk where remembering.decideNow(requests[i % requests.count]).verdict == .pass {
                        passedRemembered += 1
                    }
                }
            ])
        let (deciding, bare, recalling) = (fastest[0], fastest[1], fastest[2])
        let decided = Double(perChunk) / deciding.seconds
        let hashed = Double(perChunk) / bare.seconds
        let recalled = Double(perChunk) / recalling.seconds
        return [
            Figure(
                name: "Queue-it gate decisions, valid cookie re-issued (\(passed) passed; best of \(chunks) × \(perChunk)) vs bare HMACs",
                value: decided, unit: "decisions/s", baseline: hashed, goal: "ratio >= 0.3"),
            Figure(name: "one gate decision", value: 1_000_000 / decided, unit: "µs"),
            Figure(
                name: "one gate decision, the cookie's decision remembered this second (\(passedRemembered) passed) vs checked",
                value: 1_000_000 / recalled, unit: "µs", baseline: 1_000_000 / decided),
            Figure(name: "bare HMAC-SHA256 hex of a cookie (baseline, \(sink % 10))", value: hashed, unit: "hashes/s")
        ]
    }

    /// CrowdHandler: API answers decoded per second, and hybrid signatures validated per second
    /// next to a bare SHA-256 hex of the same input as the baseline (alternating slices, each
    /// keeping its fastest, like the Queue-it suite).
    static func crowdHandlerBench(rounds: Int = 40_000, chunks: Int = 40) -> [Figure] {
        let bodies = [
            #"{"result":{"promoted":1,"status":1,"token":"tok0M7SBFAp9J8kK","slug":"sale","position":null,"responseID":"res42","hash":"ab","requested":"2026-01-01T00:00:00Z"}}"#,
            #"{"result":{"promoted":0,"status":0,"token":"tok0M7SBFAp9J8kK","slug":"sale","position":1532,"eta":900}}"#
        ].map { Array($0.utf8) }
        let signer = CrowdHandlerSignature(privateKey: "bench-private-key")
        let room = CrowdHandlerRoom(slug: "sale", queueActivatesOn: "1700000000000", timeout: 20)
        let requested = "2026-01-01T00:00:00Z"
        let now = Date(timeIntervalSince1970: 1_767_225_660)
        let tokens = (0..<1000).map { "tok\($0)ABCDEFGHJK" }
        let signatures = tokens.map { signer.sign(slug: "sale", queueActivatesOn: "1700000000000", token: $0, requested: requested) }
        let perChunk = max(1, rounds / chunks)
        var checksum = 0
        var valid = 0
        var sink = 0
        let fastest = fastestAlternating(
            chunks: chunks,
            [
                { for i in 0..<perChunk { if let r = try? CrowdHandlerResult.decode(bodies[i % 2]) { checksum &+= r.position ?? 1 } } },
                {
                    for i in 0..<perChunk
                    where signer.validate(
                        signature: signatures[i % 1000], token: tokens[i % 1000], requested: requested, room: room, now: now) == .valid
                    {
                        valid += 1
                    }
                },
                {
                    for i in 0..<perChunk {
                        sink &+=
                            CrowdHandlerSignature.sha256Hex(signer.hashedPrivateKey + "sale1700000000000" + tokens[i % 1000] + requested)
                            .utf8.count
                    }
                }
            ])
        let (decoding, validating, bare) = (fastest[0], fastest[1], fastest[2])
        let validated = Double(perChunk) / validating.seconds
        let hashed = Double(perChunk) / bare.seconds
        return [
            Figure(
                name: "CrowdHandler answers decoded (checksum \(checksum % 1000); best of \(chunks) × \(perChunk))",
                value: Double(perChunk) / decoding.seconds, unit: "answers/s"),
            Figure(
                name: "CrowdHandler signatures validated (\(valid) valid; best of \(chunks) × \(perChunk), alternating) vs bare SHA-256",
                value: validated, unit: "signatures/s", baseline: hashed, goal: "ratio >= 0.8"),
            Figure(name: "bare SHA-256 hex of the same input (baseline, \(sink % 10))", value: hashed, unit: "hashes/s"),
            Figure(name: "validations / bare hashes", value: validated / hashed, unit: "×")
        ]
    }
}
