// The byte streams the benchmark feeds through both parsers: each workload is a series of reads
// (as the upstream connection would receive them) holding `answers` answers, and the number of
// requests whose heads are sent before each read (the NIO decoder must be told about each request
// before its answer comes; the framer is started once per answer).

struct Workload {
    let name: String
    /// Answers in one round.
    let answers: Int
    /// The stream, cut into reads.
    let reads: [[UInt8]]
    /// For each read: how many request heads go out before it.
    let requestsBefore: [Int]
}

enum Workloads {
    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    /// A head like nginx's for a static file: 9 fields.
    static let lengthHead = bytes(
        "HTTP/1.1 200 OK\r\n"
            + "Server: nginx/1.22.1\r\n"
            + "Date: Sat, 28 Nov 2026 01:00:00 GMT\r\n"
            + "Content-Type: text/html; charset=utf-8\r\n"
            + "Content-Length: 2048\r\n"
            + "Last-Modified: Fri, 27 Nov 2026 12:00:00 GMT\r\n"
            + "Connection: keep-alive\r\n"
            + "ETag: \"6564a1b0-800\"\r\n"
            + "Cache-Control: no-cache\r\n"
            + "Accept-Ranges: bytes\r\n"
            + "\r\n")

    static let chunkedHead = bytes(
        "HTTP/1.1 200 OK\r\n"
            + "Server: app\r\n"
            + "Date: Sat, 28 Nov 2026 01:00:00 GMT\r\n"
            + "Content-Type: application/octet-stream\r\n"
            + "Transfer-Encoding: chunked\r\n"
            + "Cache-Control: no-store\r\n"
            + "\r\n")

    static let smallAnswer = bytes(
        "HTTP/1.1 200 OK\r\n"
            + "Date: Sat, 28 Nov 2026 01:00:00 GMT\r\n"
            + "Content-Type: application/json\r\n"
            + "Content-Length: 2\r\n"
            + "Cache-Control: no-store\r\n"
            + "\r\n{}")

    /// 200 OK, a 2 KB body by Content-Length: one answer per read.
    static func length2K(answers: Int = 1000) -> Workload {
        let answer = lengthHead + [UInt8](repeating: UInt8(ascii: "x"), count: 2048)
        return Workload(
            name: "2 KB body by Content-Length, one read each", answers: answers,
            reads: Array(repeating: answer, count: answers), requestsBefore: Array(repeating: 1, count: answers))
    }

    /// A 64 KB body in 4 KB chunks, each answer arriving in 8 KB reads (chunk framing split anywhere).
    static func chunked64K(answers: Int = 100) -> Workload {
        var answer = chunkedHead
        for _ in 0..<16 {
            answer += bytes("1000\r\n") + [UInt8](repeating: UInt8(ascii: "y"), count: 4096) + bytes("\r\n")
        }
        answer += bytes("0\r\n\r\n")
        var reads: [[UInt8]] = []
        var requests: [Int] = []
        for _ in 0..<answers {
            var offset = 0
            while offset < answer.count {
                let end = min(offset + 8192, answer.count)
                reads.append(Array(answer[offset..<end]))
                requests.append(offset == 0 ? 1 : 0)
                offset = end
            }
        }
        return Workload(name: "64 KB chunked in 4 KB chunks, 8 KB reads", answers: answers, reads: reads, requestsBefore: requests)
    }

    /// Small keep-alive answers (5 fields, 2-byte body), one per read: what the proxy sees (one request at a time).
    static func smallOneEach(answers: Int = 1000) -> Workload {
        Workload(
            name: "1,000 small answers, one read each", answers: answers,
            reads: Array(repeating: smallAnswer, count: answers), requestsBefore: Array(repeating: 1, count: answers))
    }

    /// The same answers back to back in one stream cut into 16 KB reads (heads split across reads).
    static func smallBackToBack(answers: Int = 1000) -> Workload {
        var stream: [UInt8] = []
        for _ in 0..<answers { stream += smallAnswer }
        var reads: [[UInt8]] = []
        var requests: [Int] = []
        var offset = 0
        while offset < stream.count {
            let end = min(offset + 16384, stream.count)
            reads.append(Array(stream[offset..<end]))
            requests.append(offset == 0 ? answers : 0)
            offset = end
        }
        return Workload(name: "1,000 small answers back to back, 16 KB reads", answers: answers, reads: reads, requestsBefore: requests)
    }

    static let all = [length2K(), chunked64K(), smallOneEach(), smallBackToBack()]
}
