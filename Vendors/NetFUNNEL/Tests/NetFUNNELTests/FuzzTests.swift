import Foundation
import Testing
import WaitingRoomTesting

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
        // item 12: encoded free text as the emulator writes it, and the unencoded forms that broke parsers
        "NetFunnel.gRtype=5002;NetFunnel.gControl.result='5002:201:key=AB&nwait=1&live_message=Sale %22today%22 %26 50%25%3Doff%3B it%27s&ip=[::1]&port=8080';NetFunnel.gControl._showResult();",
        "5004:507:msg=\"Invalid Key (superseded by a newer key)\"",
        "500:msg=\"unknown project x%22%26y%3D%27z%27\"",
        "NetFunnel.gControl.result='5002:201:key=AB&live_message=it's \"a=b\" & c&nnext=2';",
        "201:key=AB&msg=\"a&b=c\"&ip=::1&port=80",
        "NetFunnel.gRtype = 5101; NetFunnel.gControl.result='5002:200:'; NetFunnel.gControl._showResult();"
    ]

    static let alphabet = Array("0123456789:&=;'\" \t\nresultNetFunnel.gControlkeynwaitttltps<>%-".utf8)

    /// Runs ≥100,000 random and mutated bodies through the parser (on a background thread of its own); every
    /// outcome must be a value or a typed error, and every accepted reply a three-digit code.
    @Test func hundredThousandRandomAndMutatedReplies() async {
        let shards = 1
        let perShard = 100_000
        let clock = ContinuousClock()
        let start = clock.now
        let results = await withTaskGroup(of: (Int, Int, Int).self) { group in
            for shard in 0..<shards {
                group.addTask {
                    // CPU-bound: run on a thread of its own so the cooperative pool (and the other
                    // tests running in parallel) is not starved.
                    await DedicatedThread.run(name: "netfunnel.fuzz.\(shard)") {
                        Self.fuzz(seed: 0x5EED_F00D &+ UInt64(shard), iterations: perShard)
                    }
                }
            }
            var total = (0, 0, 0)
            for await r in group { total = (total.0 + r.0, total.1 + r.1, total.2 + r.2) }
            return total
        }
        let elapsed = clock.now - start
        let (accepted, rejected, badCodes) = results
        #expect(accepted + rejected == shards * perShard)
        #expect(accepted > 1000)
        #expect(badCodes == 0)
        print("NetFUNNEL fuzz: \(shards * perShard) bodies (\(accepted) accepted, \(rejected) typed errors) in \(elapsed)")
    }

    static let filler = [UInt8](repeating: UInt8(ascii: "9"), count: 700)

    /// One shard: (accepted, rejected, accepted with a code outside 100…999).
    static func fuzz(seed: UInt64, iterations: Int) -> (Int, Int, Int) {
        var rng = SplitMix64(seed: seed)
        let seedBytes = Self.seeds.map { Array($0.utf8) }
        let alphabet = Self.alphabet
        var accepted = 0
        var rejected = 0
        var badCodes = 0
        var body: [UInt8] = []
        body.reserveCapacity(4096)
        for i in 0..<iterations {
            body.removeAll(keepingCapacity: true)
            if i % 3 == 0 {
                let length = Int(rng.next() % 160)
                for _ in 0..<length {
                    let r = rng.next()
                    body.append(r & 1 == 0 ? alphabet[Int((r >> 8) % UInt64(alphabet.count))] : UInt8(truncatingIfNeeded: r >> 16))
                }
            } else {
                body.append(contentsOf: seedBytes[Int(rng.next() % UInt64(seedBytes.count))])
                let mutations = 1 + Int(rng.next() % 6)
                for _ in 0..<mutations { Self.mutate(&body, &rng) }
            }
            do throws(NetFUNNELReplyError) {
                let reply = try NetFUNNELReply.parse(body)
                accepted += 1
                if !(100...999).contains(reply.code) { badCodes += 1 }
                if accepted % 8 == 0 {
                    _ = (reply.key, reply.nwait, reply.nnext, reply.tps, reply.ttl, reply.port, reply.message)
                    _ = reply.clampedTTL
                    _ = reply.rendered()
                }
            } catch {
                rejected += 1
            }
        }
        return (accepted, rejected, badCodes)
    }

    static func mutate(_ body: inout [UInt8], _ rng: inout SplitMix64) {
        let r = rng.next()
        let count = body.count
        let at = count == 0 ? 0 : Int((r >> 8) % UInt64(count))
        switch r % 7 {
        case 0 where count > 0:  // flip a byte
            body[at] = UInt8(truncatingIfNeeded: r >> 32)
        case 1 where count > 0:  // delete a range
            body.removeSubrange(at..<min(count, at + 1 + Int((r >> 40) % 10)))
        case 2:  // insert a grammar character
            body.insert(alphabet[Int((r >> 32) % UInt64(alphabet.count))], at: count == 0 ? 0 : at)
        case 3 where count > 0:  // duplicate a slice
            let slice = Array(body[at..<min(count, at + 1 + Int((r >> 40) % 40))])
            body.insert(contentsOf: slice, at: Int((r >> 20) % UInt64(count + 1)))
        case 4:  // a long key or number
            body.insert(contentsOf: filler[0..<(20 + Int((r >> 32) % 600))], at: count == 0 ? 0 : at)
        case 5 where count > 0:  // truncate
            body.removeLast(Int((r >> 32) % UInt64(count + 1)))
        default:  // whitespace
            body.insert(UInt8(ascii: " "), at: count == 0 ? 0 : at)
        }
    }

    /// Replies parsed per second; run with `WR_BENCH=1 swift test -c release --filter benchmarkReplyParsing`.
    @Test(.enabled(if: ProcessInfo.processInfo.environment["WR_BENCH"] == "1"))
    func benchmarkReplyParsing() async throws {
        let bodies = Self.seeds.prefix(5).map { Array($0.utf8) }
        let rounds = 400_000
        // CPU-bound: measured on a thread of its own, off the cooperative pool.
        let (elapsed, checksum) = await DedicatedThread.run(name: "netfunnel.bench") { () -> (Duration, Int) in
            var checksum = 0
            let elapsed = ContinuousClock().measure {
                for i in 0..<rounds {
                    if let reply = try? NetFUNNELReply.parse(bodies[i % bodies.count]) { checksum &+= reply.code }
                }
            }
            return (elapsed, checksum)
        }
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        print(
            "NetFUNNEL benchmark: \(rounds) replies parsed in \(elapsed) = \(Int(Double(rounds) / seconds)) replies/s (checksum \(checksum))"
        )
        #expect(checksum > 0)
    }
}
