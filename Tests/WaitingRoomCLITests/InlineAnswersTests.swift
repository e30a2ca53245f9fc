import Foundation
import NetFUNNELEmulator
import QueueItEmulator
import Testing
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomVendors

#if canImport(Glibc)
    import Glibc
#endif

/// The emulators' hot requests (NetFUNNEL `/ts.wseq`, Queue-it enqueue) are answered on the
/// server's event loop (`InlineAnswerHandler`). These tests hold that path to the routes': the
/// same conversation, byte for byte once keys and ports are masked, on a server with inline
/// answers and on one without; faults still reach the routes; a routed request keeps its place
/// ahead of later requests on the same connection; bodies too large to hold go to the route.
@Suite("emulator answers on the event loop")
struct InlineAnswersTests {
    static let document = """
        { "netfunnel": { "projects": { "service_1": { "segments": {
          "inline": { "control": "basic", "limit": 1, "ttlMin": 1, "ttlMax": 1, "timeoutSec": 60, "retentionSec": 60, "tpsWindowSec": 3600 } } } } } }
        """

    static func suite() throws -> EmulatorSuite {
        let document = try JSONDecoder().decode(JSONValue.self, from: Data(Self.document.utf8))
        return try EmulatorSuite(document: document)
    }

    /// One NetFUNNEL and Queue-it conversation, on one keep-alive connection; returns each reply
    /// with keys, queue ids and ports masked, plus its status line and header names.
    static func conversation(port: Int) throws -> [String] {
        let connection = try KeepAliveConnection(port: port)
        var seen: [String] = []
        func record(_ reply: KeepAliveConnection.Reply) {
            seen.append("\(reply.status) \(reply.headerNames.sorted().joined(separator: ",")) \(mask(reply.body))")
        }
        func netfunnel(_ query: String) throws -> KeepAliveConnection.Reply {
            let reply = try connection.exchange("GET /ts.wseq?\(query)")
            record(reply)
            return reply
        }
        let base = "sid=service_1&aid=inline&js=yes"
        let first = try netfunnel("opcode=5101&nfid=0&\(base)")
        let second = try netfunnel("opcode=5101&nfid=0&\(base)")
        let firstKey = try #require(key(in: first.body))
        let secondKey = try #require(key(in: second.body))
        _ = try netfunnel("opcode=5002&key=\(secondKey)&nfid=0&prefix=NetFunnel.gRtype%3D5002%3B&ttl=1&\(base)")
        _ = try netfunnel("opcode=5004&key=\(firstKey)&nfid=0&\(base)")
        _ = try netfunnel("opcode=5002&key=\(secondKey)&nfid=0&\(base)")
        _ = try netfunnel("opcode=5004&key=\(secondKey)&nfid=0&\(base)")
        _ = try netfunnel("opcode=5002&key=NOSUCHKEY&nfid=0&\(base)")
        _ = try netfunnel("opcode=9999&\(base)")
        _ = try netfunnel("opcode=5101&sid=nosuch&aid=nosuch")
        _ = try netfunnel("%zz=%&&=&opcode")
        _ = try netfunnel("opcode=5101&nfid=0&sid=service_1&aid=inline")  // native dialect
        let enqueue = #"{"userId":"inline-user","userAgent":"tests/1","sdkVersion":"tests-1"}"#
        for (path, body) in [
            ("/api/mobileapp/queue/demo/sale/enqueue", enqueue),
            ("/prefix/api/mobileapp/queue/demo/sale/enqueue", enqueue),
            ("/api/mobileapp/queue/demo/nosuchroom/enqueue", enqueue),
            ("/api/mobileapp/queue/nosuch/sale/enqueue", enqueue),
            ("/api/mobileapp/queue/demo/sale/enqueue", "{not json"),
            ("/api/mobileapp/queue/demo/sale/enqueue", "")
        ] {
            record(try connection.exchange("POST \(path)", body: Array(body.utf8), contentType: "application/json"))
        }
        return seen
    }

    @Test("inline answers are the routes' answers, byte for byte (keys, ids and ports masked)")
    func inlineMatchesRoutes() async throws {
        let inlineSuite = try Self.suite()
        let routedSuite = try Self.suite()
        let inline = try await inlineSuite.start()
        let routed = try await EmulatorServer.start { router in
            routedSuite.netfunnel.addRoutes(to: router)
            routedSuite.queueit.addRoutes(to: router)
        }
        defer {
            Task {
                await inline.stop()
                await routed.stop()
            }
        }
        let (inlinePort, routedPort) = (inline.port, routed.port)
        let a = try await OffPool.run { try Self.conversation(port: inlinePort) }
        let b = try await OffPool.run { try Self.conversation(port: routedPort) }
        #expect(a.count == 17)
        for (x, y) in zip(a, b) { #expect(x == y) }
        #expect(inline.inlineAnswers == 17, "every request of the conversation is one the event loop answers")
        #expect(routed.inlineAnswers == 0)
        // the emulators' own books agree too
        #expect(inlineSuite.netfunnel.counters().requests == routedSuite.netfunnel.counters().requests)
        #expect(inlineSuite.netfunnel.counters().replies == routedSuite.netfunnel.counters().replies)
        #expect(inlineSuite.queueit.enqueueCount == routedSuite.queueit.enqueueCount)
    }

    @Test("a pending fault sends the request to its route, and the next one is inline again")
    func faultsReachTheRoute() async throws {
        let suite = try Self.suite()
        let server = try await suite.start()
        defer { Task { await server.stop() } }
        struct Seen: Sendable {
            var statuses: [Int] = [], inline: [Int] = [], body = ""
        }
        let seen = try await OffPool.run { () throws -> Seen in
            var seen = Seen()
            let connection = try KeepAliveConnection(port: server.port)
            let base = "sid=service_1&aid=inline&js=yes"
            _ = try connection.exchange("GET /ts.wseq?opcode=5101&nfid=0&\(base)")
            let waiting = try connection.exchange("GET /ts.wseq?opcode=5101&nfid=0&\(base)")
            let key = Self.key(in: waiting.body) ?? "missing"
            suite.netfunnel.inject(NetFUNNELFault(opcode: 5002, action: .httpStatus(503), count: 1))
            seen.inline.append(server.inlineAnswers)
            seen.statuses.append(try connection.exchange("GET /ts.wseq?opcode=5002&key=\(key)&nfid=0&\(base)").status)
            seen.inline.append(server.inlineAnswers)
            let next = try connection.exchange("GET /ts.wseq?opcode=5002&key=\(key)&nfid=0&\(base)")
            seen.statuses.append(next.status)
            seen.body = String(decoding: next.body, as: UTF8.self)
            seen.inline.append(server.inlineAnswers)
            // Queue-it: a 503 fault on enqueue, then a normal enqueue
            suite.queueit.inject(QueueItEmulatorFault(kind: .status, count: 1, status: 503, on: .enqueue))
            let body = Array(#"{"userId":"u","userAgent":"tests/1","sdkVersion":"tests-1"}"#.utf8)
            for _ in 0..<2 {
                seen.statuses.append(
                    try connection.exchange("POST /api/mobileapp/queue/demo/sale/enqueue", body: body, contentType: "application/json")
                        .status)
            }
            seen.inline.append(server.inlineAnswers)
            return seen
        }
        #expect(seen.statuses == [503, 200, 503, 200])
        #expect(seen.body.contains("5002:201:"))
        let before = seen.inline[0]
        #expect(seen.inline == [before, before, before + 1, before + 2], "faulted requests reach the route, the others do not")
    }

    @Test("a routed request keeps its place: pipelined requests behind it are answered in order")
    func routedRequestKeepsItsPlace() async throws {
        let suite = try Self.suite()
        let server = try await suite.start()
        defer { Task { await server.stop() } }
        let (bodies, inline) = try await OffPool.run { () throws -> ([String], [Int]) in
            let connection = try KeepAliveConnection(port: server.port)
            let base = "sid=service_1&aid=inline&js=yes"
            let first = try connection.exchange("GET /ts.wseq?opcode=5101&nfid=0&\(base)")
            let key = Self.key(in: first.body) ?? "missing"
            // the enqueue waits 600 ms in its route; the 5002 behind it could be answered at once
            suite.queueit.inject(QueueItEmulatorFault(kind: .delay, count: 1, delayMs: 600, on: .enqueue))
            var inline = [server.inlineAnswers]
            try connection.send(
                [
                    KeepAliveConnection.request(
                        "POST /api/mobileapp/queue/demo/sale/enqueue", port: server.port,
                        body: Array(#"{"userId":"first","userAgent":"tests/1","sdkVersion":"tests-1"}"#.utf8),
                        contentType: "application/json"),
                    KeepAliveConnection.request("GET /ts.wseq?opcode=5002&key=\(key)&nfid=0&prefix=SECOND%3B&\(base)", port: server.port)
                ].flatMap { $0 })
            let a = try connection.readReply()
            let b = try connection.readReply()
            inline.append(server.inlineAnswers)
            // once the connection is quiet again, it is answered inline
            _ = try connection.exchange("GET /ts.wseq?opcode=5002&key=\(key)&nfid=0&\(base)")
            inline.append(server.inlineAnswers)
            return ([a.body, b.body].map { String(decoding: $0, as: UTF8.self) }, inline)
        }
        #expect(bodies[0].contains("QueueUrl"))
        #expect(bodies[1].hasPrefix("SECOND;"))
        #expect(inline[1] == inline[0], "the request behind a routed one goes to the route too")
        #expect(inline[2] == inline[0] + 1)
    }

    @Test("bodies over the inline limit, `Connection: close` and `Expect` go to the route")
    func largeBodiesAndConnectionControlGoToTheRoute() async throws {
        let inlineSuite = try Self.suite()
        let routedSuite = try Self.suite()
        let inline = try await inlineSuite.start()
        let routed = try await EmulatorServer.start { router in routedSuite.queueit.addRoutes(to: router) }
        defer {
            Task {
                await inline.stop()
                await routed.stop()
            }
        }
        let padding = String(repeating: "x", count: 40_000)
        let large = Array(#"{"userId":"u","userAgent":"\#(padding)","sdkVersion":"tests-1"}"#.utf8)
        let ports = [inline.port, routed.port]
        let statuses = try await OffPool.run { () throws -> [Int] in
            var statuses: [Int] = []
            for port in ports {
                let connection = try KeepAliveConnection(port: port)
                statuses.append(
                    try connection.exchange("POST /api/mobileapp/queue/demo/sale/enqueue", body: large, contentType: "application/json")
                        .status)
            }
            let closing = try KeepAliveConnection(port: ports[0])
            statuses.append(
                try closing.exchange(
                    "GET /ts.wseq?opcode=5101&nfid=0&sid=service_1&aid=inline&js=yes", extraHeaders: "Connection: close\r\n"
                ).status)
            let expecting = try KeepAliveConnection(port: ports[0])
            statuses.append(
                try expecting.exchange(
                    "POST /api/mobileapp/queue/demo/sale/enqueue", body: Array(#"{"userId":"u","userAgent":"t","sdkVersion":"t"}"#.utf8),
                    contentType: "application/json", extraHeaders: "Expect: 100-continue\r\n"
                ).status)
            return statuses
        }
        #expect(statuses[0] == statuses[1])
        #expect(statuses[2] == 200)
        #expect(statuses[3] == 100 || statuses[3] == 200)
        #expect(inline.inlineAnswers == 0)
    }

    // MARK: helpers

    static func key(in body: [UInt8]) -> String? {
        let text = String(decoding: body, as: UTF8.self)
        guard let range = text.range(of: "key=") else { return nil }
        let key = text[range.upperBound...].prefix { $0.isLetter || $0.isNumber }
        return key.isEmpty ? nil : String(key)
    }

    /// Keys, Queue-it ids and ports vary between two servers; everything else must not.
    static func mask(_ body: [UInt8]) -> String {
        var text = String(decoding: body, as: UTF8.self)
        for (pattern, replacement) in [
            ("key=[0-9A-Za-z]+", "key=K"), ("127\\.0\\.0\\.1:[0-9]+", "HOST"), ("127%2E0%2E0%2E1%3A[0-9]+", "HOST"),
            ("port=[0-9]+", "port=P"), ("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{12}", "QID")
        ] {
            text = text.replacingOccurrences(of: pattern, with: replacement, options: .regularExpression)
        }
        return text
    }
}

/// Runs blocking socket work on a thread of its own, never on the cooperative pool (whose few
/// threads the routed requests of the servers under test need).
enum OffPool {
    static func run<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
        try await withCheckedThrowingContinuation { continuation in
            let thread = Thread { continuation.resume(with: Result { try body() }) }
            thread.start()
        }
    }
}

/// A blocking HTTP/1.1 keep-alive connection to a loopback port: requests in order, replies read
/// by `Content-Length` (the emulators' replies always carry one).
final class KeepAliveConnection {
    struct Reply {
        var status: Int
        var headerNames: [String]
        var body: [UInt8]
        /// The header fields, names lower-cased, in order.
        var headers: [(name: String, value: String)] = []
    }

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    private let fd: Int32
    private let port: Int
    private var pending: [UInt8] = []

    init(port: Int) throws {
        self.port = port
        fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket() failed") }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = UInt16(port).bigEndian
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
        guard connected else {
            close(fd)
            throw Failure(description: "cannot connect to 127.0.0.1:\(port)")
        }
    }

    deinit { close(fd) }

    /// `"METHOD /target"` as request bytes.
    static func request(_ line: String, port: Int, body: [UInt8] = [], contentType: String? = nil, extraHeaders: String = "") -> [UInt8] {
        var head = "\(line) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\n\(extraHeaders)"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        if line.hasPrefix("POST") || !body.isEmpty { head += "Content-Length: \(body.count)\r\n" }
        return Array((head + "\r\n").utf8) + body
    }

    func exchange(_ line: String, body: [UInt8] = [], contentType: String? = nil, extraHeaders: String = "") throws -> Reply {
        try send(Self.request(line, port: port, body: body, contentType: contentType, extraHeaders: extraHeaders))
        return try readReply()
    }

    func send(_ bytes: [UInt8]) throws {
        var sent = 0
        while sent < bytes.count {
            let n = bytes[sent...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            guard n > 0 else { throw Failure(description: "send failed") }
            sent += n
        }
    }

    func readReply() throws -> Reply {
        let separator: [UInt8] = [13, 10, 13, 10]
        var end: Int?
        while true {
            if pending.count >= 4, let found = pending.indices.dropLast(3).first(where: { Array(pending[$0..<$0 + 4]) == separator }) {
                end = found
                break
            }
            try fill()
        }
        guard let end else { throw Failure(description: "no reply head") }
        let lines = String(decoding: pending[..<end], as: UTF8.self).split(separator: "\r\n")
        let words = lines.first?.split(separator: " ") ?? []
        guard words.count >= 2, let status = Int(words[1]) else { throw Failure(description: "no status line") }
        var length = 0
        var names: [String] = []
        var fields: [(name: String, value: String)] = []
        for line in lines.dropFirst() {
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2 else { continue }
            let name = parts[0].lowercased()
            names.append(name)
            fields.append((name, parts[1].trimmingCharacters(in: .whitespaces)))
            if name == "content-length" { length = Int(parts[1].trimmingCharacters(in: .whitespaces)) ?? 0 }
        }
        pending.removeFirst(end + 4)
        while pending.count < length { try fill() }
        let body = Array(pending.prefix(length))
        pending.removeFirst(length)
        return Reply(status: status, headerNames: names, body: body, headers: fields)
    }

    /// The bytes read until `done` holds for them (or the connection closes, when `orClose`), taken out.
    func readRaw(orClose: Bool = false, until done: (String) -> Bool) throws -> String {
        while !done(String(decoding: pending, as: UTF8.self)) {
            do {
                try fill()
            } catch {
                if orClose { break }
                throw error
            }
        }
        defer { pending.removeAll() }
        return String(decoding: pending, as: UTF8.self)
    }

    private func fill() throws {
        var buffer = [UInt8](repeating: 0, count: 65_536)
        let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
        guard n > 0 else { throw Failure(description: "connection closed or timed out (\(n))") }
        pending += buffer[0..<n]
    }
}
