import Foundation
import WaitingRoom

#if canImport(Glibc)
    import Glibc
#endif

/// A server started from this same `waitingroom` binary in a child process for
/// `waitingroom bench emulators` (`emulate --port 0 --json` or `bench --serve-static FOLDER`), the
/// way a deployed emulator runs and the way `bench/wrk.sh` measures it: the bench process's own
/// threads, executor and heap stay out of the measured server. Its address is the `baseURL` of the
/// JSON line the child prints; ``stop()`` sends SIGTERM and waits for the child to end.
package struct BenchChildServer {
    let process: Process
    let baseURL: String

    /// This process's executable when it is the `waitingroom` binary (a test runner is not).
    package static func currentExecutable() -> String? {
        let path = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments.first ?? ""
        return URL(fileURLWithPath: path).lastPathComponent == "waitingroom" ? path : nil
    }

    /// Starts `executable arguments…` with its output in files under `directory` (named `name`),
    /// and waits (up to 30 s) for the `baseURL` it prints.
    static func start(executable: String, arguments: [String], name: String, directory: URL) async throws -> BenchChildServer {
        let out = directory.appendingPathComponent("\(name).out")
        let err = directory.appendingPathComponent("\(name).log")
        for file in [out, err] {
            guard FileManager.default.createFile(atPath: file.path, contents: nil) else {
                throw EmulatorBenchmarks.BenchFailure(description: "cannot create \(file.path)")
            }
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        try process.run()
        for _ in 0..<600 {
            if let text = try? String(contentsOf: out, encoding: .utf8),
                let line = text.split(separator: "\n").first(where: { $0.contains("baseURL") }),
                let base = (try? JSONValue.parse(String(line)))?.objectValue?["baseURL"]?.stringValue
            {
                return BenchChildServer(process: process, baseURL: base)
            }
            if !process.isRunning { break }
            try? await Task.sleep(for: .milliseconds(50))
        }
        if process.isRunning { process.terminate() }
        await EmulatorBenchmarks.waitForExit(process)
        let log = (try? String(contentsOf: err, encoding: .utf8)) ?? ""
        throw EmulatorBenchmarks.BenchFailure(
            description: "`waitingroom \(arguments.joined(separator: " "))` did not start: \(log.suffix(300))")
    }

    /// SIGTERM, then waits for the child to end (SIGKILL after 10 s).
    func stop() async {
        guard process.isRunning else { return }
        process.terminate()
        for _ in 0..<500 {
            guard process.isRunning else { break }
            try? await Task.sleep(for: .milliseconds(20))
        }
        #if canImport(Glibc)
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        #endif
        await EmulatorBenchmarks.waitForExit(process)
    }
}

/// One HTTP/1.1 exchange with a loopback server (`Connection: close`, read to the end), for the
/// bench's set-up requests to its child servers (the way `bench/wrk.sh` uses curl). Not a client:
/// only `http://127.0.0.1:PORT/…` and replies with a `Content-Length` or read to EOF.
package enum LoopbackHTTP {
    package struct Reply {
        package var status: Int
        package var body: [UInt8]
    }

    package static func exchange(_ url: String, method: String = "GET", body: [UInt8] = [], contentType: String? = nil) throws -> Reply {
        let prefix = "http://127.0.0.1:"
        guard url.hasPrefix(prefix) else { throw EmulatorBenchmarks.BenchFailure(description: "not a loopback URL: \(url)") }
        let rest = url.dropFirst(prefix.count)
        let portText = rest.prefix { $0.isNumber }
        guard let port = UInt16(portText) else { throw EmulatorBenchmarks.BenchFailure(description: "no port in \(url)") }
        let target = rest.dropFirst(portText.count)
        var head = "\(method) \(target.isEmpty ? "/" : target) HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nConnection: close\r\n"
        if let contentType { head += "Content-Type: \(contentType)\r\n" }
        if !body.isEmpty || method != "GET" { head += "Content-Length: \(body.count)\r\n" }
        let request = Array((head + "\r\n").utf8) + body
        #if canImport(Glibc)
            let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            guard fd >= 0 else { throw EmulatorBenchmarks.BenchFailure(description: "socket() failed") }
            defer { close(fd) }
            var timeout = timeval(tv_sec: 10, tv_usec: 0)
            _ = setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = port.bigEndian
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) { pointer in
                pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0
                }
            }
            guard connected else { throw EmulatorBenchmarks.BenchFailure(description: "cannot connect to \(url)") }
            var sent = 0
            while sent < request.count {
                let n = request[sent...].withUnsafeBytes { send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
                guard n > 0 else { throw EmulatorBenchmarks.BenchFailure(description: "send to \(url) failed") }
                sent += n
            }
            var received: [UInt8] = []
            var buffer = [UInt8](repeating: 0, count: 16_384)
            while true {
                let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
                if n <= 0 { break }
                received += buffer[0..<n]
            }
            return try parse(received, url: url)
        #else
            throw EmulatorBenchmarks.BenchFailure(description: "loopback HTTP needs Glibc")
        #endif
    }

    package static func parse(_ bytes: [UInt8], url: String) throws -> Reply {
        let separator: [UInt8] = [13, 10, 13, 10]
        guard let end = bytes.indices.dropLast(3).first(where: { Array(bytes[$0..<$0 + 4]) == separator }) else {
            throw EmulatorBenchmarks.BenchFailure(description: "no HTTP reply from \(url)")
        }
        let head = String(decoding: bytes[..<end], as: UTF8.self).split(separator: "\r\n")
        let statusWords = head.first?.split(separator: " ") ?? []
        guard statusWords.count >= 2, let status = Int(statusWords[1]) else {
            throw EmulatorBenchmarks.BenchFailure(description: "no HTTP status from \(url)")
        }
        var body = Array(bytes[(end + 4)...])
        let length = head.dropFirst().compactMap { line -> Int? in
            let parts = line.split(separator: ":", maxSplits: 1)
            guard parts.count == 2, parts[0].lowercased() == "content-length" else { return nil }
            return Int(parts[1].trimmingCharacters(in: .whitespaces))
        }.first
        if let length {
            guard body.count >= length else { throw EmulatorBenchmarks.BenchFailure(description: "short reply from \(url)") }
            body = Array(body.prefix(length))
        } else if head.contains(where: { $0.lowercased().hasPrefix("transfer-encoding:") }) {
            throw EmulatorBenchmarks.BenchFailure(description: "chunked reply from \(url) (not read here)")
        }
        return Reply(status: status, body: body)
    }
}
