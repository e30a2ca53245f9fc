import Foundation
import Synchronization
import WaitingRoom
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A `chromedriver` child process of `QueueItBrowserDriver`.
///
/// Its output goes to a log file (no pipes, so nothing blocks a cooperative thread reading
/// them); Foundation's `Process` reaps the child when it exits (no zombie), and the exit is
/// observed through its termination handler. ``stop()`` asks it to quit (SIGTERM), waits, then
/// kills it (SIGKILL) and waits again. Public so that tests of other modules can start one.
public final class ChromedriverProcess: Sendable {
    /// The exit status once the child has exited (set by the termination handler).
    private final class Exit: Sendable {
        let status = Mutex<Int32?>(nil)
    }

    private let exit: Exit
    private let process: Mutex<Process>
    /// The child's process id.
    public let pid: Int32
    /// The loopback port it listens on.
    public let port: Int
    /// Where its standard output and error go.
    public let logPath: String

    /// Starts `executable --port=<port>` (then `extraArguments`) with output to `logPath`.
    public init(executable: String, port: Int, logPath: String, extraArguments: [String] = []) throws {
        let exit = Exit()
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = ["--port=\(port)", "--allowed-ips=127.0.0.1", "--log-level=WARNING"] + extraArguments
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = FileHandle(forWritingAtPath: logPath) ?? FileHandle.nullDevice
        p.standardInput = FileHandle.nullDevice
        p.standardOutput = log
        p.standardError = log
        p.terminationHandler = { proc in
            let code = proc.terminationStatus
            exit.status.withLock { $0 = code }
        }
        try p.run()
        try? log.close()
        self.pid = p.processIdentifier
        self.exit = exit
        self.process = Mutex(p)
        self.port = port
        self.logPath = logPath
    }

    /// Whether the child has exited (and was reaped).
    public var hasExited: Bool { exit.status.withLock { $0 != nil } }

    /// The last `limit` characters of the child's log (for error messages).
    public func logTail(_ limit: Int = 600) -> String {
        guard let data = FileManager.default.contents(atPath: logPath) else { return "" }
        return String(decoding: data.suffix(limit), as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Waits (real time, polling every 20 ms) until the child has exited or `limit` passed.
    /// Returns whether it exited. Must not run in a cancelled task (use an unstructured one).
    public func waitForExit(within limit: Duration) async -> Bool {
        let clock = ContinuousClock()
        let end = clock.now.advanced(by: limit)
        while !hasExited {
            if clock.now >= end { return false }
            if (try? await SystemClock().sleep(for: .milliseconds(20))) == nil { return hasExited }
        }
        return true
    }

    /// Sends `signal` unless the child has already exited (its pid may be reused then).
    private func send(_ signal: Int32) {
        exit.status.withLock { status in
            if status == nil { _ = kill(pid, signal) }
        }
    }

    /// Ends the child: SIGTERM, up to 5 s for it to exit, then SIGKILL and up to 5 s more.
    /// Returns whether it is gone (reaped).
    @discardableResult
    public func stop() async -> Bool {
        send(SIGTERM)
        if await waitForExit(within: .seconds(5)) { return true }
        send(SIGKILL)
        return await waitForExit(within: .seconds(5))
    }

    /// A free TCP port on 127.0.0.1 (bound to port 0, read back, released), or nil.
    public static func freeLoopbackPort() -> Int? {
        #if os(Linux)
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        #else
        let fd = socket(AF_INET, SOCK_STREAM, 0)
        #endif
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var addr = sockaddr_in()
        addr.sin_family = sa_family_t(AF_INET)
        addr.sin_port = 0
        addr.sin_addr.s_addr = inet_addr("127.0.0.1")
        var len = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(fd, $0, len) }
        }
        guard bound == 0 else { return nil }
        let named = withUnsafeMutablePointer(to: &addr) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { getsockname(fd, $0, &len) }
        }
        guard named == 0 else { return nil }
        let port = Int(UInt16(bigEndian: addr.sin_port))
        return port > 0 ? port : nil
    }
}
