import Foundation
import NIOConcurrencyHelpers
import Testing
import WaitingRoomTesting

#if canImport(Glibc)
    import Glibc
#endif

/// One visitor streams 256 MiB after a request head; the gate's resident set (the real binary's
/// `VmRSS`) must stay within 64 MiB of what it was idle, whatever the head was.
@Suite("the gate's memory under one streaming visitor", .timeLimit(.minutes(5)))
struct GateMemoryBoundTests {
    static let streamed = 256 * 1024 * 1024
    static let bound = 64 * 1024 * 1024

    static let heads: [(String, String)] = [
        ("an Upgrade head", GateAttackTests.head("GET", "/static/ws", ["Connection: Upgrade", "Upgrade: websocket"])),
        ("a queued POST", GateAttackTests.head("POST", "/sale/upload", ["Content-Length: \(streamed)"])),
        ("an open POST over the body bound", GateAttackTests.head("POST", "/static/upload", ["Content-Length: \(streamed)"])),
        ("a forwarded chunked POST", GateAttackTests.head("POST", "/static/upload", ["Transfer-Encoding: chunked"])),
        ("half a head", "GET /static/x HTTP/1.1\r\nHost: \(AttackConfiguration.host)\r\nX-Long: ")
    ]

    @Test func streamingAfterAnyHeadKeepsTheGateSmall() async throws {
        try await GateFront.with(.proxy) { front in
            let process = try #require(front.process)
            _ = try await front.send(GateAttackTests.head("GET", "/static/warm", ["Connection: close"]))
            let idle = try #require(ProxyProcess.residentBytes(process))
            for (name, head) in Self.heads {
                let peak = NIOLockedValueBox(idle)
                let chunked = head.contains("chunked")
                let finished = NIOLockedValueBox(false)
                let sending = Task {
                    defer { finished.withLockedValue { $0 = true } }
                    return try await DedicatedThread.run(name: "stream") { () -> Int in
                        let fd = try RawHTTP.connect(port: front.port)
                        defer { close(fd) }
                        RawHTTP.send(fd, Array(head.utf8))
                        var piece = [UInt8](repeating: UInt8(ascii: "a"), count: 64 * 1024)
                        if chunked { piece = Array("10000\r\n".utf8) + piece + Array("\r\n".utf8) }
                        var total = 0
                        while total < Self.streamed {
                            let n = RawHTTP.send(fd, piece)
                            if n < piece.count { break }
                            total += 64 * 1024
                        }
                        return total
                    }
                }
                while !Task.isCancelled {
                    if let now = ProxyProcess.residentBytes(process) { peak.withLockedValue { $0 = max($0, now) } }
                    if finished.withLockedValue({ $0 }) { break }
                    try await Task.sleep(for: .milliseconds(20))
                }
                let sent = try await sending.value
                let grown = peak.withLockedValue { value in value } - idle
                #expect(grown < Self.bound, "\(name): the gate grew by \(grown / 1_048_576) MiB while \(sent / 1_048_576) MiB were sent")
                #expect(process.isRunning, "\(name): the gate died")
            }
            #expect(front.log.unchecked.isEmpty, "\(front.log.unchecked)")
        }
    }
}
