import Foundation
import Testing
import WaitingRoomTesting

/// Seeded fuzzing of the gate's front door: thousands of request heads and bodies built from the
/// attack classes' pieces (targets with dot segments and escapes, `Host` variants, `Connection`
/// lists, framing fields, hidden requests in bodies, `Upgrade`), then mutated byte by byte. Every
/// run uses the same seed (`GATE_FUZZ_SEED` picks another), so a failure names the requests that
/// reproduce it. The assertion is the attack tests' one: no pass, so nothing outside `/static/`
/// may reach the app; and the proxy stays alive within its memory bound.
@Suite("the gate fuzzed", .timeLimit(.minutes(6)))
struct GateFuzzTests {
    static let seed = UInt64(ProcessInfo.processInfo.environment["GATE_FUZZ_SEED"] ?? "") ?? 0x5EED_0048
    static let requests = 2000

    @Test(arguments: GateFrontKind.available + GateFrontKind.deployed)
    func mutatedRequestsNeverReachTheAppUnchecked(kind: GateFrontKind) async throws {
        var random = SeededRandom(seed: Self.seed &+ UInt64(kind.rawValue.utf8.count))
        let inputs = (0..<Self.requests).map { FuzzRequest.make(id: $0, using: &random) }
        try await GateFront.with(kind) { front in
            let idle = front.process.flatMap(ProxyProcess.residentBytes)
            let answered = try await withThrowingTaskGroup(of: Bool.self) { group in
                var next = 0
                var answered = 0
                func add() {
                    let bytes = inputs[next]
                    next += 1
                    group.addTask {
                        !(try await RawHTTP.exchange(port: front.port, bytes, readTimeout: 2, quietAfterFirstByte: 0.1)).isEmpty
                    }
                }
                for _ in 0..<min(16, inputs.count) { add() }
                while let got = try await group.next() {
                    if got { answered += 1 }
                    if next < inputs.count { add() }
                }
                return answered
            }
            let unchecked = front.log.uncheckedRequests
            let culprits = unchecked.map { "#\($0.header("x-fuzz-id").first ?? "?") \($0.method) \($0.target)" }
            #expect(unchecked.isEmpty, "\(kind), seed \(Self.seed): reached the app unchecked: \(culprits.prefix(10))")
            // (Vapor closes many malformed requests without a word; the others answer nearly all)
            #expect(answered > Self.requests / 5, "\(kind): only \(answered) of \(Self.requests) got an answer")
            if let process = front.process, let idle {
                #expect(process.isRunning, "the gate died under the fuzz (seed \(Self.seed))")
                let now = ProxyProcess.residentBytes(process) ?? 0
                #expect(now - idle < 64 * 1024 * 1024, "the gate grew by \((now - idle) / 1_048_576) MiB (seed \(Self.seed))")
            }
        }
    }
}

/// One fuzzed request's bytes.
enum FuzzRequest {
    static let segments = [
        "static", "static", "sale", "..", ".", "%2e%2e", "%2E.", ".%2e", "%2f", "%2F", "%5c", "\\", "", "%73ale", "sa%6ce", "..;",
        ";x=1", "%00", "%252e%252e", "x", "STATIC", "%73tatic", "static%2f..", "%", "%g1"
    ]
    static let connectionNames = [
        "content-length", "transfer-encoding", "host", "cookie", "close", "keep-alive", "upgrade", "x-a",
        "Content-Length", "te", "authorization"
    ]
    static let hidden = "GET /sale/fuzz-hidden HTTP/1.1\r\nHost: shop.example\r\n\r\n"

    static func make(id: Int, using random: inout SeededRandom) -> [UInt8] {
        let method = ["GET", "GET", "POST", "POST", "HEAD", "OPTIONS", "PUT", "CONNECT", "G\tET", "get"].randomElement(using: &random)!
        var target = ""
        for _ in 0..<Int.random(in: 1...5, using: &random) { target += "/" + segments.randomElement(using: &random)! }
        if Int.random(in: 0..<6, using: &random) == 0 {
            target = "http://" + ["shop.example", "evil.example"].randomElement(using: &random)! + target
        }
        if Bool.random(using: &random) {
            target += ["?x=/static/", "?queueittoken=x", "#/static/", "?a=%2e%2e"].randomElement(using: &random)!
        }
        var fields: [String] = []
        switch Int.random(in: 0..<8, using: &random) {
        case 0: break
        case 1: fields += ["Host: evil.example"]
        case 2: fields += ["Host: shop.example", "Host: evil.example"]
        case 3: fields += ["host: SHOP.example"]
        default: fields += ["Host: shop.example"]
        }
        if Bool.random(using: &random) {
            let names = (0..<Int.random(in: 1...3, using: &random)).map { _ in connectionNames.randomElement(using: &random)! }
            fields.append("Connection: " + names.joined(separator: ", "))
        }
        if Int.random(in: 0..<4, using: &random) == 0 { fields += ["Upgrade: websocket"] }
        if Int.random(in: 0..<4, using: &random) == 0 { fields += ["Cookie: a=1", "X-Forwarded-For: 10.0.0.1"] }
        var body = ""
        switch Int.random(in: 0..<6, using: &random) {
        case 0:
            body = hidden
            fields.append("Content-Length: \(body.utf8.count)")
        case 1:
            body = String(hidden.utf8.count, radix: 16) + "\r\n" + hidden + "\r\n0\r\n\r\n"
            fields.append("Transfer-Encoding: chunked")
        case 2:
            body = "0\r\n\r\n" + hidden
            fields += ["Content-Length: \(Int.random(in: 0...8, using: &random))", "Transfer-Encoding: chunked"].shuffled(using: &random)
        case 3:
            body = hidden
            fields += ["Content-Length: 0", "Content-Length: \(hidden.utf8.count)"]
        case 4:
            body = "0\r\n\r\n" + hidden
            fields.append(
                [
                    "Transfer-Encoding: xchunked", "Transfer-Encoding : chunked", "Transfer-Encoding: chunked, identity",
                    "Transfer-Encoding:\r\n chunked"
                ].randomElement(using: &random)!)
        default: break
        }
        fields.append("X-Fuzz-Id: \(id)")
        fields.shuffle(using: &random)
        var bytes = Array(
            (method + " " + target + " HTTP/1." + (Int.random(in: 0..<8, using: &random) == 0 ? "0" : "1") + "\r\n"
                + fields.map { $0 + "\r\n" }.joined() + "\r\n" + body).utf8)
        // byte mutations: flip, insert a delimiter, delete
        for _ in 0..<[0, 0, 1, 2, 3].randomElement(using: &random)! where !bytes.isEmpty {
            let at = Int.random(in: 0..<bytes.count, using: &random)
            switch Int.random(in: 0..<3, using: &random) {
            case 0: bytes[at] ^= UInt8(1 << Int.random(in: 0..<7, using: &random))
            case 1: bytes.insert([0x0d, 0x0a, 0x20, 0x09, 0x3a, 0x2f, 0x00].randomElement(using: &random)!, at: at)
            default: bytes.remove(at: at)
            }
        }
        return bytes
    }
}
