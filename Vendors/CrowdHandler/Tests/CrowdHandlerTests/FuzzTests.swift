import CrowdHandler
import Foundation
import Testing
import WaitingRoom
import WaitingRoomTesting

/// The answer decoder never crashes: random and garbled bytes give a result or a typed error.
@Suite("CrowdHandler decoder fuzz")
struct FuzzTests {
    static let samples = [
        #"{"result":{"promoted":1,"status":1,"token":"tok0M7SBFAp9J8kK","slug":"sale","responseID":"res1","hash":"ab","requested":"2026-01-01T00:00:00Z"}}"#,
        #"{"result":{"promoted":0,"status":0,"token":"tokA","slug":"sale","position":12,"eta":60}}"#,
        #"{"result":{"status":403,"error":"nope"}}"#,
        #"{"result":[{"slug":"sale","timeout":20}]}"#
    ]

    @Test func randomAndGarbledBytesGiveTypedErrors() {
        var rng = SeededRandom(seed: 12)
        var decoded = 0
        var rejected = 0
        for round in 0..<20_000 {
            var bytes: [UInt8]
            if round % 2 == 0 {
                bytes = (0..<Int.random(in: 0...200, using: &rng)).map { _ in UInt8.random(in: 0...255, using: &rng) }
            } else {
                bytes = Array(Self.samples[round % Self.samples.count].utf8)
                for _ in 0..<Int.random(in: 1...6, using: &rng) where !bytes.isEmpty {
                    let i = Int.random(in: 0..<bytes.count, using: &rng)
                    switch Int.random(in: 0...3, using: &rng) {
                    case 0: bytes[i] = UInt8.random(in: 0...255, using: &rng)
                    case 1: bytes.remove(at: i)
                    case 2: bytes.insert(Array("{}[]\":,1e999-".utf8).randomElement(using: &rng) ?? 0, at: i)
                    default: bytes = Array(bytes.prefix(i))
                    }
                }
            }
            do {
                _ = try CrowdHandlerResult.decode(bytes)
                decoded += 1
            } catch {
                #expect(error.kind == .invalidResponse)
                #expect(error.vendor == "crowdhandler")
                rejected += 1
            }
            _ = try? CrowdHandlerRoom.decodeList(bytes)
        }
        #expect(decoded + rejected == 20_000)
        #expect(rejected > 10_000)
        #expect(decoded > 0)
    }

    @Test func extremeNumbersAreNotACrash() throws {
        let r = try CrowdHandlerResult.decode(
            Array(#"{"result":{"promoted":0,"slug":"s","position":1e300,"eta":-1e300,"status":1e308}}"#.utf8))
        #expect(r.position == nil && r.eta == nil && r.status == nil)
        #expect(throws: WaitingRoomError.self) {
            try CrowdHandlerResult.decode(Array(repeating: 0x20, count: CrowdHandlerResult.maxBodyBytes + 1))
        }
        let rooms = try CrowdHandlerRoom.decodeList(
            Array(#"{"result":[{"slug":"a","timeout":1e300,"queueActivatesOn":1e300},{"nope":1}]}"#.utf8))
        #expect(rooms.count == 1 && rooms.first?.timeout == nil)
    }
}
