import Foundation
import Testing
import WaitingRoomTesting

@testable import QueueIt

/// The test kit's SplitMix64.
typealias SplitMix = SeededRandom

@Suite struct FuzzTests {
    static let alphabet: [UInt8] = Array("~_ehqtsrcvip0123456789abcdef-{}[]\":,.%&=/?#\u{0}\\ ".utf8) + [0xC3, 0xA9, 0xFF]

    static func mutate(_ s: [UInt8], _ rng: inout SplitMix) -> [UInt8] {
        var b = s
        let n = Int.random(in: 1...4, using: &rng)
        for _ in 0..<n {
            switch Int.random(in: 0..<5, using: &rng) {
            case 0 where !b.isEmpty: b.remove(at: Int.random(in: 0..<b.count, using: &rng))
            case 1: b.insert(alphabet.randomElement(using: &rng) ?? 0, at: Int.random(in: 0...b.count, using: &rng))
            case 2 where !b.isEmpty: b[Int.random(in: 0..<b.count, using: &rng)] = alphabet.randomElement(using: &rng) ?? 0
            case 3 where !b.isEmpty:
                let i = Int.random(in: 0..<b.count, using: &rng)
                let j = Int.random(in: i..<b.count, using: &rng)
                b.insert(contentsOf: b[i...j], at: j)  // repeat a slice (repeated fields)
            default: if b.count > 2 { b.removeLast(Int.random(in: 1...b.count / 2, using: &rng)) }
            }
        }
        return b
    }

    struct Tally: Sendable {
        var runs = 0, validMutants = 0, parsedBodies = 0
        var familyTime = [Duration](repeating: .zero, count: 5)
    }

    /// Runs inputs `range` (seeded by the chunk) through the parsers.
    static func chunk(_ range: Range<Int>, seed: UInt64) throws -> Tally {
        var rng = SplitMix(seed: seed)
        let secret = "fuzz-secret"
        let minter = QueueItTokenMinter(secretKey: secret)
        let validator = QueueItTokenValidator(secretKey: secret, eventId: "sale")
        let now = Date(timeIntervalSince1970: 1_700_000_000)
        let good = try minter.mint(
            eventId: "sale", queueId: "4f2b-11", expiresAt: 1_700_000_600, redirectType: .safetynet,
            cookieValidityMinutes: 5, clientIP: "10.1.2.3")
        let redirect = QueueItPercent.encodeComponent(
            "http://127.0.0.1:8080/queue/?c=demo&e=sale&ver=v3-swift&cver=1&man=Q&l=L&cid=en&enqueuetoken=x&t=http%3A%2F%2Fa")
        // Seed families: 0 token, 1 enqueue body, 2 enqueue answer, 3 accepted cookie, 4 redirect header.
        let seeds: [[UInt8]] = [
            Array(good.utf8),
            Array(QueueItEnqueueBody(userId: "u", userAgent: "ua", layoutName: "l", language: "en", enqueueToken: "t").encoded()),
            QueueItEnqueueResponse(
                queueId: "q", queueUrl: "http://127.0.0.1:1/q", eventTargetUrl: "http://t/", queueitToken: good,
                queueUrlTTLInMinutes: 3
            ).encoded(),
            Array(
                QueueItAcceptedCookie(
                    eventId: "sale", queueId: "q", fixedValidityMinutes: 3, redirectType: "queue",
                    issueTime: 1_700_000_000, hashedIP: nil, secretKey: secret
                ).value.utf8),
            Array(redirect.utf8)
        ]
        let nav = QueueItNavigationClassifier(queueURL: URL(string: "http://127.0.0.1/q")!, targetURL: URL(string: "http://t/x")!)
        var tally = Tally()
        let clock = ContinuousClock()
        for i in range {
            let family = i % seeds.count
            let input: [UInt8]
            if i % 10 == 0 {
                input = (0..<Int.random(in: 0...80, using: &rng)).map { _ in Self.alphabet.randomElement(using: &rng) ?? 0 }
            } else {
                input = Self.mutate(seeds[family], &rng)
            }
            let t0 = clock.now
            defer { tally.familyTime[family] += clock.now - t0 }
            let text = String(decoding: input, as: UTF8.self)
            // Every input goes through the token parser (cheap); then its family's parser.
            let t = QueueItToken(text)
            _ = t.redirectType
            _ = t.expiresAt
            _ = t.hashedText
            switch family {
            case 0:
                if (try? validator.validate(text, now: now, clientIP: "10.1.2.3")) != nil, text != good { tally.validMutants += 1 }
                if i % 20 == 0 { _ = nav.classify("http://t/x?queueittoken=" + text) }
            case 1:
                if (try? QueueItEnqueueBody.decode(input)) != nil { tally.parsedBodies += 1 }
            case 2:
                _ = QueueItEnqueueResult.classify(status: 200, body: input)
            case 3:
                if let c = QueueItAcceptedCookie.parse(text) {
                    _ = try? c.validate(secretKey: secret, eventId: "sale", now: now, cookieValidityMinutes: 20, clientIP: nil)
                }
            default:
                _ = QueueItRedirectInfo.parse(headerValue: text)
            }
            tally.runs += 1
        }
        return tally
    }

    @Test func hundredThousandTokensAndBodies() async throws {
        let count = 100_000
        let chunks = 4
        let clock = ContinuousClock()
        let start = clock.now
        let tally = try await withThrowingTaskGroup(of: Tally.self) { group in
            for k in 0..<chunks {
                // CPU-bound: each chunk runs on a thread of its own, so the cooperative pool (and
                // the deadlines and timers of the tests running in parallel) is not starved.
                group.addTask {
                    try await DedicatedThread.run(name: "queueit.fuzz.\(k)") {
                        try Self.chunk((k * count / chunks)..<((k + 1) * count / chunks), seed: 0xC0FFEE &+ UInt64(k))
                    }
                }
            }
            var total = Tally()
            for try await t in group {
                total.runs += t.runs
                total.validMutants += t.validMutants
                total.parsedBodies += t.parsedBodies
                for f in 0..<5 { total.familyTime[f] += t.familyTime[f] }
            }
            return total
        }
        let (runs, validMutants, parsedBodies, familyTime) = (tally.runs, tally.validMutants, tally.parsedBodies, tally.familyTime)
        let elapsed = clock.now - start
        print(
            "fuzz: \(runs) random/mutated inputs (tokens, enqueue bodies, enqueue answers, cookies, redirect headers) in \(elapsed); "
                + "\(parsedBodies) body mutants still decoded, \(validMutants) altered tokens validated; CPU per family (token, body, answer, cookie, redirect) \(familyTime)"
        )
        #expect(runs == count)
        #expect(validMutants == 0)
    }
}
