import Foundation
import WaitingRoomGateTestSupport
import WaitingRoomTesting

#if canImport(Glibc)
    import Glibc
#endif

/// An attacker's client: bytes exactly as given, over a loopback TCP socket, and whatever comes
/// back until the server closes or `readTimeout` passes in silence. Blocking POSIX calls, run on
/// a thread of their own (``DedicatedThread``), never on the cooperative pool.
enum RawHTTP {
    struct Failure: Error, CustomStringConvertible {
        let description: String
    }

    /// Sends `bytes` to 127.0.0.1:`port` and returns what the server answered (as text, lossy).
    /// `halfClose`: shut the sending side after the bytes (the server sees the end of input).
    /// `quietAfterFirstByte`: once something came, stop after this many seconds of silence (a
    /// kept-alive connection is not waited out).
    static func exchange(
        port: Int, _ bytes: [UInt8], readTimeout: Double = 3, halfClose: Bool = false,
        quietAfterFirstByte: Double? = nil
    ) async throws -> String {
        try await DedicatedThread.run(name: "raw-http") {
            let fd = try connect(port: port)
            defer { close(fd) }
            send(fd, bytes)
            if halfClose { shutdown(fd, Int32(SHUT_WR)) }
            return String(decoding: readAll(fd, timeout: readTimeout, quiet: quietAfterFirstByte), as: UTF8.self)
        }
    }

    /// The same, for text.
    static func exchange(port: Int, _ text: String, readTimeout: Double = 3, halfClose: Bool = false) async throws -> String {
        try await exchange(port: port, Array(text.utf8), readTimeout: readTimeout, halfClose: halfClose)
    }

    /// A connected socket to 127.0.0.1:`port` with a 5 s send timeout.
    static func connect(port: Int) throws -> Int32 {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw Failure(description: "socket: \(errno)") }
        try LoopbackHTTPClient.connect(fd, toLoopbackPort: port)
        setTimeout(fd, SO_SNDTIMEO, seconds: 5)
        return fd
    }

    static func setTimeout(_ fd: Int32, _ option: Int32, seconds: Double) {
        var time = timeval(tv_sec: Int(seconds), tv_usec: Int((seconds - Double(Int(seconds))) * 1_000_000))
        setsockopt(fd, SOL_SOCKET, option, &time, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Writes all of `bytes`; a peer that closed or stopped reading ends the write quietly
    /// (an attacker does not care).
    @discardableResult
    static func send(_ fd: Int32, _ bytes: [UInt8]) -> Int {
        var sent = 0
        while sent < bytes.count {
            let n = bytes.withUnsafeBytes { Glibc.send(fd, $0.baseAddress! + sent, bytes.count - sent, Int32(MSG_NOSIGNAL)) }
            if n <= 0 { break }
            sent += n
        }
        return sent
    }

    /// Reads until the peer closes, an error, or `timeout` seconds without a byte.
    static func readAll(_ fd: Int32, timeout: Double, quiet: Double? = nil) -> [UInt8] {
        setTimeout(fd, SO_RCVTIMEO, seconds: timeout)
        var out: [UInt8] = []
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while true {
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress!, $0.count, 0) }
            if n <= 0 { break }
            if out.isEmpty, let quiet { setTimeout(fd, SO_RCVTIMEO, seconds: quiet) }
            out.append(contentsOf: buffer[0..<n])
            if out.count > 4 * 1024 * 1024 { break }
        }
        return out
    }

    /// The status codes of the answers in `text`, in order (`HTTP/1.x NNN`).
    static func statuses(_ text: String) -> [Int] {
        var result: [Int] = []
        var rest = Substring(text)
        while let range = rest.range(of: "HTTP/1.") {
            let after = rest[range.upperBound...].dropFirst(2)
            if let code = Int(after.prefix(3)) { result.append(code) }
            rest = rest[range.upperBound...]
        }
        return result
    }
}
