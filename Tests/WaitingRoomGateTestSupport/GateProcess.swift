import Foundation
import WaitingRoomTesting
import WebDriver

#if canImport(Glibc)
    import Glibc
#endif

/// `waitingroom gate` as an operator runs it: the package's own binary, started with given
/// arguments and environment; its port read from the line it prints.
public struct GateProcess: Sendable {
    public let process: SpawnedProcess
    public let port: Int

    /// The `waitingroom` executable next to the test bundle (or the package's debug build).
    public static var binary: String {
        var dir = URL(fileURLWithPath: CommandLine.arguments.first ?? "")
        for _ in 0..<4 {
            dir = dir.deletingLastPathComponent()
            let candidate = dir.appendingPathComponent("waitingroom").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return DeployedProxy.packageRoot + "/.build/debug/waitingroom"
    }

    /// Starts `waitingroom gate` with `arguments` (after `gate`) and `environment` added to this
    /// process's; waits for its `listening on` line (30 s at most).
    public static func start(_ arguments: [String], environment: [String: String] = [:]) async throws -> GateProcess {
        var env = ProcessInfo.processInfo.environment
        for (key, value) in environment { env[key] = value }
        let process = try SpawnedProcess.spawn(
            binary, arguments: ["gate"] + arguments, environment: env, directory: DeployedProxy.packageRoot,
            stdin: .discard, stdout: .pipe, stderr: .discard)
        let (port, text) = await listeningPort(of: process, within: .seconds(60))
        guard let port else {
            process.terminate()
            _ = process.waitForExit()
            throw GateTestError("the gate printed no address: \(text)")
        }
        return GateProcess(process: process, port: port)
    }

    /// Reads `process`'s stdout until its `listening on http://127.0.0.1:PORT` line (the process
    /// is terminated if that takes longer than `within`): the port (nil when none was printed)
    /// and what was read.
    package static func listeningPort(of process: SpawnedProcess, within: Duration) async -> (port: Int?, text: String) {
        let watchdog = Task.detached {
            try await Task.sleep(for: within)
            if process.isRunning { process.terminate() }
        }
        defer { watchdog.cancel() }
        let text = await DedicatedThread.run(name: "gate.stdout") { () -> String in
            var data = [UInt8]()
            var buffer = [UInt8](repeating: 0, count: 4096)
            guard let fd = process.stdout else { return "" }
            while true {
                let n = read(fd, &buffer, buffer.count)
                if n <= 0 { break }
                data.append(contentsOf: buffer[0..<n])
                let text = String(decoding: data, as: UTF8.self)
                if text.contains("listening on"), text.hasSuffix("\n") { break }
            }
            return String(decoding: data, as: UTF8.self)
        }
        guard let range = text.range(of: "listening on http://127.0.0.1:") else { return (nil, text) }
        return (Int(text[range.upperBound...].prefix { $0.isNumber }), text)
    }

    /// Stops it (SIGTERM) and waits for its exit status.
    @discardableResult
    public func stop() -> Int32 {
        process.terminate()
        let status = process.waitForExit()
        if let out = process.stdout { close(out) }
        return status
    }

    /// Runs `body` with the gate started; stopped however `body` ends.
    public static func with<T: Sendable>(
        _ arguments: [String], environment: [String: String] = [:],
        _ body: @Sendable (GateProcess) async throws -> T
    ) async throws -> T {
        let gate = try await start(arguments, environment: environment)
        do {
            let result = try await body(gate)
            gate.stop()
            return result
        } catch {
            gate.stop()
            throw error
        }
    }
}
