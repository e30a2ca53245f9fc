import Foundation
import Testing
@testable import NetFUNNEL

@Suite("NetFUNNEL reply fuzz")
struct FuzzTests {
    static let seeds: [String] = [
        "NetFunnel.gRtype=5101;NetFunnel.gControl.result='5002:200:key=ABCD&nwait=0&nnext=0&tps=0.000000&ttl=0&ip=n.example.test&port=443';NetFunnel.gControl._showResult();",
        "NetFunnel.gRtype = 5002 ; NetFunnel.gControl.result = '5002:201:key=AB&nwait=1532&nnext=410&tps=37.5&ttl=8' ;",
        "5004:503:msg=\"Wrong Server ID\"",
        "201:key=ABCDEF&nwait=1532&nnext=410&tps=37.5&ttl=8&ip=10.0.0.7&port=80",
        "NetFunnel.gControl.result='5004:200:key=&nwait=0&chk_enter_cnt=0&vwr_html=https%3A%2F%2Fx';",
        "<html><body>502</body></html>",
        "505",
    ]

    static let alphabet = Array("0123456789:&=;'\" \t\nresultNetFunnel.gControlkeynwaitttltps<>%-".utf8)

    /// Runs ≥100,000 random and mutated bodies through the parser; every outcome must be a value
    /// or a typed error, and every accepted reply must have a three-digit code and re-parse.
    @Test func hundredThousandRandomAndMutatedReplies() {
        var rng = SplitMix64(seed: 0x5EED_F00D)
        let seedBytes = Self.seeds.map { Array($0.utf8) }
        let iterations = 120_000
        var accepted = 0
        var rejected = 0
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for i in 0..<iterations {
                var body: [UInt8]
                if i % 3 == 0 {
                    let length = Int.random(in: 0..<200, using: &rng)
                    body = (0..<length).map { _ in
                        Bool.random(using: &rng) ? Self.alphabet.randomElement(using: &rng)! : UInt8.random(in: 0...255, using: &rng)
                    }
                } else {
                    body = seedBytes.randomElement(using: &rng)!
                    let mutations = Int.random(in: 1...8, using: &rng)
                    for _ in 0..<mutations { Self.mutate(&body, using: &rng) }
                }
                do {
                    let reply = try NetFUNNELReply.parse(body)
                    accepted += 1
                    if !(100...999).contains(reply.code) { Issue.record("code out of range: \(reply.code)") }
                    _ = (reply.key, reply.nwait, reply.nnext, reply.tps, reply.ttl, reply.port, reply.message, reply.vwrPageURL)
                    _ = reply.clampedTTL
                    _ = reply.rendered()
                } catch {
                    rejected += 1
                    _ = error.description
                }
            }
        }
        #expect(accepted + rejected == iterations)
        #expect(accepted > 1000)
        print("NetFUNNEL fuzz: \(iterations) bodies (\(accepted) accepted, \(rejected) typed errors) in \(elapsed)")
    }

    static func mutate(_ body: inout [UInt8], using rng: inout SplitMix64) {
        switch Int.random(in: 0..<7, using: &rng) {
        case 0 where !body.isEmpty:  // flip a byte
            body[Int.random(in: 0..<body.count, using: &rng)] = UInt8.random(in: 0...255, using: &rng)
        case 1 where !body.isEmpty:  // delete a range
            let start = Int.random(in: 0..<body.count, using: &rng)
            let end = min(body.count, start + Int.random(in: 1...10, using: &rng))
            body.removeSubrange(start..<end)
        case 2:  // insert grammar characters
            let at = Int.random(in: 0...body.count, using: &rng)
            body.insert(alphabet.randomElement(using: &rng)!, at: at)
        case 3 where !body.isEmpty:  // duplicate a slice
            let start = Int.random(in: 0..<body.count, using: &rng)
            let end = min(body.count, start + Int.random(in: 1...40, using: &rng))
            body.insert(contentsOf: body[start..<end], at: Int.random(in: 0...body.count, using: &rng))
        case 4:  // a huge key or number
            let filler = [UInt8](repeating: UInt8(ascii: "9"), count: Int.random(in: 20...2000, using: &rng))
            body.insert(contentsOf: filler, at: Int.random(in: 0...body.count, using: &rng))
        case 5 where !body.isEmpty:  // truncate
            body.removeLast(Int.random(in: 0...body.count, using: &rng))
        default:  // whitespace
            body.insert(UInt8(ascii: " "), at: Int.random(in: 0...body.count, using: &rng))
        }
    }

    /// Replies parsed per second; run with `WR_BENCH=1 swift test -c release --filter benchmarkReplyParsing`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["WR_BENCH"] == "1"))
    func benchmarkReplyParsing() throws {
        let bodies = Self.seeds.prefix(5).map { Array($0.utf8) }
        let rounds = 400_000
        var checksum = 0
        let clock = ContinuousClock()
        let elapsed = clock.measure {
            for i in 0..<rounds {
                if let reply = try? NetFUNNELReply.parse(bodies[i % bodies.count]) { checksum &+= reply.code }
            }
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print("NetFUNNEL benchmark: \(rounds) replies parsed in \(elapsed) = \(Int(Double(rounds) / seconds)) replies/s (checksum \(checksum))")
        #expect(checksum > 0)
    }
}
