import NIOCore
import Testing

@testable import WaitingRoomGateProxy

/// The gate's reader of upstream answers (``GateResponseFramer``), fed bytes directly: framing by
/// length, chunks, the connection's end and no body (RFC 9112 §6.3), heads split anywhere, and
/// answers that are not valid HTTP.
struct GateResponseFramerTests {
    /// What the framer made of some bytes: the final head, the body bytes handed on, and how it ended.
    struct Outcome {
        var heads: [GateUpstreamHead] = []
        var informational: [Int] = []
        var body: [UInt8] = []
        var ended: Bool?
        var leftover = 0
    }

    /// Feeds `pieces` one read at a time (then, with `closed`, the connection's end).
    static func run(_ pieces: [String], requestIsHead: Bool = false, dechunk: Bool = false, closed: Bool = false) throws -> Outcome {
        var framer = GateResponseFramer()
        framer.start(requestIsHead: requestIsHead, dechunk: dechunk)
        var outcome = Outcome()
        func record(_ event: GateResponseFramer.Event) {
            switch event {
            case .informational(let head): outcome.informational.append(head.status)
            case .head(let head): outcome.heads.append(head)
            case .body(let bytes): outcome.body += bytes.readableBytesView
            case .end(let reusable): outcome.ended = reusable
            }
        }
        reading: for piece in pieces {
            var buffer = ByteBuffer(string: piece)
            while let event = try framer.next(&buffer) {
                record(event)
                if case .end = event {
                    outcome.leftover = buffer.readableBytes
                    break reading
                }
            }
        }
        if closed, outcome.ended == nil, let event = framer.inputEnded() { record(event) }
        return outcome
    }

    /// Every way of cutting `text` in two reads, plus one byte per read.
    static func splits(_ text: String) -> [[String]] {
        let bytes = Array(text.utf8)
        var all = (1..<bytes.count).map { [String(decoding: bytes[..<$0], as: UTF8.self), String(decoding: bytes[$0...], as: UTF8.self)] }
        all.append(bytes.map { String(decoding: [$0], as: UTF8.self) })
        return all
    }

    @Test func aLengthFramedAnswerPassesAsItCameHoweverItIsSplit() throws {
        let answer = "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: 5\r\nX-A:  spaced value \t\r\n\r\nhello"
        for pieces in Self.splits(answer) {
            let outcome = try Self.run(pieces)
            let head = try #require(outcome.heads.first)
            #expect(head.status == 200 && head.text(head.reason) == "OK" && head.isHTTP11)
            #expect(head.framing == .length(5) && head.keepAlive)
            #expect(head.value(of: "x-a") == "spaced value", "optional whitespace around a value is not part of it")
            #expect(String(decoding: outcome.body, as: UTF8.self) == "hello")
            #expect(outcome.ended == true, "\(pieces)")
        }
    }

    @Test func chunksPassWithTheirFramingOrAsDataForHTTP10() throws {
        let answer =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5;ext=1\r\nhello\r\n1A\r\n" + String(repeating: "x", count: 26)
            + "\r\n0\r\nTrailer-Field: yes\r\n\r\n"
        let body = String(answer[answer.range(of: "\r\n\r\n")!.upperBound...])
        for pieces in Self.splits(answer) {
            let raw = try Self.run(pieces)
            #expect(raw.heads.first?.framing == .chunked)
            #expect(String(decoding: raw.body, as: UTF8.self) == body, "the chunk framing and trailers pass as they came")
            #expect(raw.ended == true)
            let data = try Self.run(pieces, dechunk: true)
            #expect(String(decoding: data.body, as: UTF8.self) == "hello" + String(repeating: "x", count: 26))
            #expect(data.ended == true)
        }
    }

    @Test func anAnswerWithoutLengthEndsWithTheConnection() throws {
        let outcome = try Self.run(["HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nsome ", "bytes"], closed: true)
        #expect(outcome.heads.first?.framing == .untilClose)
        #expect(String(decoding: outcome.body, as: UTF8.self) == "some bytes")
        #expect(outcome.ended == false, "ended, and the connection is not reused")
        // other codings than chunked: delimited by the close too, the codings kept for the visitor
        let gzip = try Self.run(["HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\nxyz"], closed: true)
        #expect(gzip.heads.first?.framing == .untilClose && gzip.heads.first?.otherCodings == "gzip")
        #expect(gzip.ended == false)
        // a chunked answer cut short is not ended by the close
        let cut = try Self.run(["HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhel"], closed: true)
        #expect(cut.ended == nil)
    }

    @Test func answersWithoutBodyEndAtTheirHead() throws {
        for (answer, isHead) in [
            ("HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\n", false),
            ("HTTP/1.1 304 Not Modified\r\nTransfer-Encoding: chunked\r\n\r\n", false),
            ("HTTP/1.1 200 OK\r\nContent-Length: 10\r\n\r\n", true),
            ("HTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n", false)
        ] {
            let outcome = try Self.run([answer], requestIsHead: isHead)
            #expect(outcome.body.isEmpty && outcome.ended == true, "\(answer)")
        }
    }

    @Test func interimAnswersComeBeforeTheFinalOne() throws {
        let outcome = try Self.run([
            "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 103 Early Hints\r\nLink: </a.css>\r\n\r\nHTTP/1.1 201 Created\r\nContent-Length: 2\r\n\r\nok"
        ])
        #expect(outcome.informational == [100, 103])
        #expect(outcome.heads.first?.status == 201)
        #expect(String(decoding: outcome.body, as: UTF8.self) == "ok" && outcome.ended == true)
    }

    @Test func connectionFieldsDecideReuseAndWhatStopsAtTheGate() throws {
        let closing = try Self.run(["HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n"])
        #expect(closing.ended == false)
        let old = try Self.run(["HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n"])
        #expect(old.heads.first?.isHTTP11 == false && old.ended == false, "HTTP/1.0 closes unless it says keep-alive")
        let oldKept = try Self.run(["HTTP/1.0 200 OK\r\nConnection: Keep-Alive\r\nContent-Length: 0\r\n\r\n"])
        #expect(oldKept.ended == true)
        let extra = try Self.run(["HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nokEXTRA"])
        #expect(extra.ended == false && extra.leftover == 5, "bytes after the answer: the connection is not reused")
        let both = try Self.run(["HTTP/1.1 200 OK\r\nContent-Length: 3\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nok\r\n0\r\n\r\n"])
        #expect(both.heads.first?.framing == .chunked && both.ended == false, "RFC 9112 §6.3: the coding wins and the connection ends")
        let listed = try #require(
            try Self.run([
                "HTTP/1.1 200 OK\r\nConnection: X-Private, keep-alive\r\nX-Private: 1\r\nKeep-Alive: timeout=5\r\nUpgrade: h2c\r\nX-Public: 2\r\nContent-Length: 0\r\n\r\n"
            ]).heads.first)
        let kinds = Dictionary(uniqueKeysWithValues: listed.fields.map { (listed.text($0.name).lowercased(), $0.kind) })
        #expect(
            kinds["x-private"] == .hopByHop && kinds["keep-alive"] == .hopByHop && kinds["upgrade"] == .hopByHop
                && kinds["connection"] == .hopByHop)
        #expect(kinds["x-public"] == .plain && kinds["content-length"] == .contentLength)
    }

    @Test func answersThatAreNotHTTPAreRefused() throws {
        let bad: [(String, String)] = [
            ("HTTP/2 200 OK\r\n\r\n", "status line"),
            ("HTTP/1.1 2000 OK\r\n\r\n", "three digits"),
            ("HTTP/1.1 20 OK\r\n\r\n", "three digits"),
            ("HTTP/1.1 099 Low\r\n\r\n", "three digits"),
            ("HTTP/1.1 200OK\r\n\r\n", "three digits"),
            ("garbage\r\n\r\n", "status line"),
            ("HTTP/1.1 200 OK\r\nNo-Colon\r\n\r\n", "valid name"),
            ("HTTP/1.1 200 OK\r\n: empty name\r\n\r\n", "valid name"),
            ("HTTP/1.1 200 OK\r\nBad Name: x\r\n\r\n", "valid name"),
            ("HTTP/1.1 200 OK\r\nA: 1\r\n folded\r\n\r\n", "folding"),
            ("HTTP/1.1 200 OK\r\nA: x\0y\r\n\r\n", "CR or NUL"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 5, 6\r\n\r\n", "one number"),
            ("HTTP/1.1 200 OK\r\nContent-Length: -1\r\n\r\n", "one number"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Length: 7\r\n\r\n", "one number"),
            ("HTTP/1.1 200 OK\r\nContent-Length: 99999999999999999999\r\n\r\n", "one number"),
            ("HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\n\r\n", "101"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked, gzip\r\n\r\n", "not the last"),
            ("HTTP/1.0 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n", "HTTP/1.0 answer with Transfer-Encoding"),
            ("HTTP/1.0 200 OK\r\nTransfer-Encoding: gzip\r\nContent-Length: 5\r\n\r\nhello", "HTTP/1.0 answer with Transfer-Encoding"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n5z\r\n", "hexadecimal"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n\r\n", "without a size"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nokX\r\n", "longer than its size"),
            ("HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1000000000000000\r\n", "15 hex digits")
        ]
        for (answer, reason) in bad {
            for dechunk in [false, true] {
                #expect(throws: GateResponseFramer.Malformed.self, "\(answer.debugDescription)") {
                    try Self.run([answer], dechunk: dechunk)
                }
                do {
                    _ = try Self.run([answer], dechunk: dechunk)
                } catch let error as GateResponseFramer.Malformed {
                    #expect(error.reason.contains(reason), "\(answer.debugDescription): \(error.reason)")
                } catch {
                    Issue.record("\(error)")
                }
            }
        }
        // a duplicated, equal Content-Length is one number
        #expect(try Self.run(["HTTP/1.1 200 OK\r\nContent-Length: 2, 2\r\n\r\nok"]).ended == true)
        // bytes when no answer is due
        var idle = GateResponseFramer()
        var stray = ByteBuffer(string: "HTTP/1.1 200 OK\r\n\r\n")
        #expect(throws: GateResponseFramer.Malformed.self) { try idle.next(&stray) }
    }

    @Test func fieldNamesAreTokens() {
        let specials = Set("!#$%&'*+-.^_`|~".utf8)
        for byte in UInt8.min...UInt8.max {
            let alphanumeric = (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5a) || (byte >= 0x61 && byte <= 0x7a)
            #expect(GateResponseFramer.isTokenByte(byte) == (alphanumeric || specials.contains(byte)), "byte \(byte)")
        }
    }

    @Test func headsAndTrailersHaveBounds() throws {
        let long = "HTTP/1.1 200 OK\r\nX-Big: " + String(repeating: "a", count: GateResponseFramer.headBound) + "\r\n\r\n"
        #expect(throws: GateResponseFramer.Malformed.self) { try Self.run([long]) }
        // split in small reads: the bound counts across reads, and nothing waits for more
        let pieces = stride(from: 0, to: long.utf8.count, by: 1000).map { offset in
            String(decoding: Array(long.utf8)[offset..<min(offset + 1000, long.utf8.count)], as: UTF8.self)
        }
        #expect(throws: GateResponseFramer.Malformed.self) { try Self.run(pieces) }
        let trailers =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n0\r\nT: "
            + String(repeating: "t", count: GateResponseFramer.chunkLineBound) + "\r\n\r\n"
        #expect(throws: GateResponseFramer.Malformed.self) { try Self.run([trailers]) }
        let extensions =
            "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n1;" + String(repeating: "e", count: GateResponseFramer.chunkLineBound + 1)
            + "\r\nx\r\n0\r\n\r\n"
        #expect(throws: GateResponseFramer.Malformed.self) { try Self.run([extensions]) }
    }

    /// Random answers (150), cut at random places: the body handed on is the body sent, and the answer ends once.
    @Test func randomAnswersCutAnywhereComeThroughWhole() throws {
        var generator = SystemRandomNumberGenerator()
        for round in 0..<150 {
            let payload = String(
                (0..<Int.random(in: 0...600, using: &generator)).map { _ in
                    Character(UnicodeScalar(UInt8.random(in: 32...126, using: &generator)))
                })
            let chunked = round % 2 == 0
            var answer = "HTTP/1.1 200 OK\r\nServer: t\r\n"
            var expectedRaw = payload
            if chunked {
                answer += "Transfer-Encoding: chunked\r\n\r\n"
                var rest = Substring(payload)
                var framed = ""
                while !rest.isEmpty {
                    let size = min(rest.count, Int.random(in: 1...100, using: &generator))
                    framed += String(size, radix: 16) + "\r\n" + rest.prefix(size) + "\r\n"
                    rest = rest.dropFirst(size)
                }
                framed += "0\r\n\r\n"
                expectedRaw = framed
                answer += framed
            } else {
                answer += "Content-Length: \(payload.utf8.count)\r\n\r\n" + payload
            }
            var cuts = Set(
                (0..<Int.random(in: 0...6, using: &generator)).map { _ in Int.random(in: 1..<answer.utf8.count, using: &generator) })
            cuts.insert(answer.utf8.count)
            let bytes = Array(answer.utf8)
            var pieces: [String] = []
            var start = 0
            for cut in cuts.sorted() {
                pieces.append(String(decoding: bytes[start..<cut], as: UTF8.self))
                start = cut
            }
            let raw = try Self.run(pieces)
            #expect(String(decoding: raw.body, as: UTF8.self) == expectedRaw && raw.ended == true, "round \(round)")
            let data = try Self.run(pieces, dechunk: true)
            #expect(String(decoding: data.body, as: UTF8.self) == (chunked ? payload : expectedRaw) && data.ended == true, "round \(round)")
        }
    }
}
