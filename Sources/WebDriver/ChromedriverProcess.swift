import Foundation
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
/// Started with ``SpawnedProcess`` (`posix_spawn`, not Foundation's `Process`); its output goes
/// to a log file (no pipes, so nothing blocks a cooperative thread reading them). The child is
/// reaped when ``hasExited`` or ``stop()`` sees it gone (no zombie). ``stop()`` asks it to quit
/// (SIGTERM), waits, then kills it (SIGKILL) and waits again. Public so that tests of other
/// modules can start one.
public final class ChromedriverProcess: Sendable {
    private let child: SpawnedProcess
    /// The child's process id.
    public let pid: Int32
    /// The loopback port it listens on.
    public let port: Int
    /// Where its standard output and error go.
    public let logPath: String

    /// Starts `executable --port=<port>` (then `extraArguments`) with output to `logPath`.
    public init(executable: String, port: Int, logPath: String, extraArguments: [String] = []) throws {
        child = try SpawnedProcess.spawn(
            executable, arguments: ["--port=\(port)", "--allowed-ips=127.0.0.1", "--log-level=WARNING"] + extraArguments,
            stdin: .discard, stdout: .file(logPath), stderr: .sameAsStdout)
        self.pid = child.pid
        self.port = port
        self.logPath = logPath
    }

    /// Whether the child has exited (and was reaped).
    public var hasExited: Bool { !child.isRunning }

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
    private func send(_ signal: Int32) { child.send(signal) }

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
        LoopbackPort.free()
    }
}
