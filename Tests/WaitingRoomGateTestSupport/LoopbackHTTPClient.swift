import Foundation
import WaitingRoom
import WaitingRoomTesting

#if canImport(Glibc)
    import Glibc
#endif

/// A plain HTTP/1.1 client over loopback that can choose its source address (any of 127.0.0.0/8
/// on Linux), so a test can be two visitors with two addresses whatever stands in front of the
/// app: a middleware sees the peer, the reverse proxy sees the peer, nginx and Caddy pass it to
/// the gate in `X-Forwarded-For`. One request per connection (`Connection: close`); blocking
/// POSIX calls on a thread of their own (``DedicatedThread``), never the cooperative pool.
public enum LoopbackHTTPClient {
    public struct Failure: Error, CustomStringConvertible {
        public let description: String
    }

    /// Sends one request to 127.0.0.1:`port` from `source` and reads the whole answer (no
    /// redirect followed). `headers` may include `Host` (else `127.0.0.1:port`).
    public static func send(
        port: Int, from source: String = "127.0.0.1", method: String = "GET", target: String,
        headers: [(String, String)] = [], body: [UInt8]? = nil, timeout: Double = 20
    ) async throws -> WaitingRoom.HTTPResponse {
        var head = "\(method) \(target) HTTP/1.1\r\n"
        if !headers.contains(where: { $0.0.lowercased() == "host" }) { head += "Host: 127.0.0.1:\(port)\r\n" }
        for (name, value) in headers { head += "\(name): \(value)\r\n" }
        if let body { head += "Content-Length: \(body.count)\r\n" }
        head += "Connection: close\r\n\r\n"
        let bytes = Array(head.utf8) + (body ?? [])
        let raw: [UInt8] = try await DedicatedThread.run(name: "loopback-http") {
            let fd = try connect(port: port, from: source)
            defer { close(fd) }
            var sent = 0
            while sent < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { throw Failure(description: "send to \(port): errno \(errno)") }
                sent += n
            }
            var time = timeval(tv_sec: Int(timeout), tv_usec: 0)
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            var out: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
                if n <= 0 { break }
                out.append(contentsOf: buffer[0..<n])
            }
            return out
        }
        return try parse(raw, url: "http://127.0.0.1:\(port)\(target)", isHead: method == "HEAD")
    }

    /// Sends `bytes` as they are to 127.0.0.1:`port` and reads until the server closes the
    /// connection or `timeout` seconds pass without a byte; `closed` says which. For tests that
    /// check what a server does with raw input (pipelined requests, malformed heads).
    public static func exchangeRaw(port: Int, _ bytes: [UInt8], timeout: Double = 30) async throws -> (bytes: [UInt8], closed: Bool) {
        try await DedicatedThread.run(name: "loopback-raw") {
            let fd = try connect(port: port, from: "127.0.0.1")
            defer { close(fd) }
            var sent = 0
            while sent < bytes.count {
                let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
                if n <= 0 { break }
                sent += n
            }
            var time = timeval(tv_sec: Int(timeout), tv_usec: Int((timeout - timeout.rounded(.down)) * 1_000_000))
            setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &time, socklen_t(MemoryLayout<timeval>.size))
            var out: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
                if n == 0 { return (out, true) }
                if n < 0 { return (out, errno == ECONNRESET) }
                out.append(contentsOf: buffer[0..<n])
            }
        }
    }

    static func connect(port: Int, from source: String) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        var local = sockaddr_in()
        local.sin_family = sa_family_t(AF_INET)
        local.sin_port = 0
        local.sin_addr.s_addr = inet_addr(source)
        let bound = withUnsafePointer(to: &local) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard bound == 0 else {
            close(fd)
            throw Failure(description: "bind to \(source): errno \(errno)")
        }
        try connect(fd, toLoopbackPort: port)
        return fd
    }

    /// Connects the socket `fd` to 127.0.0.1:`port`; closes it and throws when that fails.
    package static func connect(_ fd: Int32, toLoopbackPort port: Int) throws {
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { Glibc.connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) }
        }
        guard connected == 0 else {
            close(fd)
            throw Failure(description: "connect to \(port): errno \(errno)")
        }
    }

    /// The answer in `raw`: status line, fields, and the body by `Content-Length`, chunks, or
    /// the connection's end.
    static func parse(_ raw: [UInt8], url: String, isHead: Bool) throws -> WaitingRoom.HTTPResponse {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = raw.indices.first(where: { raw[$0...].starts(with: separator) }) else {
            throw Failure(description: "no complete answer head in \(raw.count) bytes: \(String(decoding: raw.prefix(200), as: UTF8.self))")
        }
        let lines = String(decoding: raw[..<end], as: UTF8.self).components(separatedBy: "\r\n")
        let statusParts = lines[0].split(separator: " ", maxSplits: 2)
        guard statusParts.count >= 2, let status = Int(statusParts[1]) else { throw Failure(description: "bad status line \(lines[0])") }
        var fields: [(String, String)] = []
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields.append((String(line[..<colon]), line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)))
        }
        var body = Array(raw[(end + 4)...])
        if isHead || status == 204 || status == 304 {
            body = []
        } else if fields.contains(where: { $0.0.lowercased() == "transfer-encoding" && $0.1.lowercased().contains("chunked") }) {
            body = dechunk(body)
        } else if let length = fields.first(where: { $0.0.lowercased() == "content-length" }).flatMap({ Int($0.1) }) {
            body = Array(body.prefix(length))
        }
        return WaitingRoom.HTTPResponse(status: status, headers: HTTPHeaderList(fields), body: body, url: url)
    }

    static func dechunk(_ bytes: [UInt8]) -> [UInt8] {
        var out: [UInt8] = []
        var i = 0
        while i < bytes.count {
            guard let lineEnd = bytes[i...].firstIndex(of: 10) else { break }
            let sizeText = String(decoding: bytes[i..<lineEnd], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
            guard let size = Int(sizeText.split(separator: ";").first ?? "", radix: 16), size > 0 else { break }
            let start = lineEnd + 1
            guard start + size <= bytes.count else {
                out += bytes[start...]
                break
            }
            out += bytes[start..<(start + size)]
            i = start + size + 2
        }
        return out
    }

    /// A TCP port free on 127.0.0.1 now (bound and released: a server started right after takes it).
    public static func freePort() throws -> Int {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: errno \(errno)") }
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, length) }
        }
        guard bound == 0 else { throw Failure(description: "bind: errno \(errno)") }
        _ = withUnsafeMutablePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &length) }
        }
        return Int(UInt16(bigEndian: address.sin_port))
    }

    /// Waits until something accepts connections on 127.0.0.1:`port` (at most `timeout` seconds).
    public static func waitUntilListening(port: Int, timeout: Double = 15) async throws {
        let deadline = Date().addingTimeInterval(timeout)
        while Date() < deadline {
            let open: Bool = await DedicatedThread.run(name: "loopback-probe") {
                guard let fd = try? connect(port: port, from: "127.0.0.1") else { return false }
                close(fd)
                return true
            }
            if open { return }
            try await Task.sleep(for: .milliseconds(50))
        }
        throw Failure(description: "nothing listens on 127.0.0.1:\(port) after \(timeout) s")
    }
}
