import Foundation
import Testing
import WaitingRoomGateTestSupport
import WaitingRoomTesting
import WebDriver

/// Runs the built `waitingroom` binary as a child process, the way a person would.
struct CLIProcess {
    struct Result {
        var status: Int32
        var stdout: String
        var stderr: String
    }

    /// The `waitingroom` executable next to the test bundle.
    static var binary: String { GateProcess.binary }

    /// The package root (for `Scripts/…`).
    static var packageRoot: String {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent().path
    }

    /// Runs `waitingroom arguments…` with `input` on stdin; kills it after `timeout`.
    static func run(_ arguments: [String], input: String = "", environment: [String: String] = [:], timeout: Duration = .seconds(60))
        async throws -> Result
    {
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { _, new in new }
        // posix_spawn, not Foundation's Process: see SpawnedProcess
        let child = try SpawnedProcess.spawn(binary, arguments: arguments, environment: env, directory: packageRoot)
        child.writeInputAndClose(Array(input.utf8))
        // The reads block until the child ends: on threads of their own, not the cooperative pool's.
        async let out = DedicatedThread.run(name: "cli.stdout") { SpawnedProcess.readToEnd(child.stdout) }
        async let err = DedicatedThread.run(name: "cli.stderr") { SpawnedProcess.readToEnd(child.stderr) }
        let deadline = ContinuousClock.now + timeout
        while child.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        if child.isRunning { child.terminate() }
        let status = await DedicatedThread.run(name: "cli.wait") { child.waitForExit() }
        return Result(
            status: status, stdout: String(decoding: await out, as: UTF8.self), stderr: String(decoding: await err, as: UTF8.self))
    }

    /// Runs `waitingroom check --vendor <vendor> [--emulator] --scope <scope> --room <room>` and then
    /// `extra`.
    static func check(_ vendor: String, _ scope: String, _ room: String, emulator: Bool = true, _ extra: [String] = []) async throws
        -> Result
    {
        try await run(["check", "--vendor", vendor] + (emulator ? ["--emulator"] : []) + ["--scope", scope, "--room", room] + extra)
    }

    /// `check … --json` on the emulator for a room that lets the user in: exits 0 with the
    /// disposition `passed`. Returns the JSON object it printed.
    @discardableResult
    static func expectCheckPasses(_ vendor: String, _ scope: String, _ room: String, sourceLocation: SourceLocation = #_sourceLocation)
        async throws -> [String: Any]?
    {
        let passed = try await check(vendor, scope, room, ["--json"])
        #expect(passed.status == 0, "\(passed.stderr)", sourceLocation: sourceLocation)
        let json = try jsonObject(passed.stdout)
        #expect(json?["disposition"] as? String == "passed", sourceLocation: sourceLocation)
        return json
    }

    /// REPL lines that start the embedded emulator, open `vendor` and wait for one user (`repl`)
    /// of `room` in `scope` (the session `s`, its outcome `o`), printing the outcome's name.
    static func replWaitLines(_ vendor: String, scope: String, room: String) -> String {
        """
        :emulator start
        room = wr.open("\(vendor)")
        s = room:enqueue{ scope = "\(scope)", room = "\(room)", user_id = "repl" }
        o = s:wait()
        o.outcome
        """
    }

    /// The JSON object `text` holds, or nil.
    static func jsonObject(_ text: String) throws -> [String: Any]? {
        try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any]
    }

    /// Runs `waitingroom repl` (history in a fresh folder) with the lines of `input` on stdin.
    static func repl(_ input: String) async throws -> Result {
        try await run(["repl", "--history", temporaryDirectory() + "/h"], input: input + "\n")
    }

    /// Starts `waitingroom arguments…` without waiting for it: stdout on a pipe, stderr
    /// discarded.
    static func start(_ arguments: [String]) throws -> SpawnedProcess {
        try SpawnedProcess.spawn(binary, arguments: arguments, directory: packageRoot, stdin: .discard, stdout: .pipe, stderr: .discard)
    }

    /// Reads `process`'s stdout (blocking, on a thread of its own) until `done` says the text so
    /// far is enough, or the output ends.
    static func read(_ process: SpawnedProcess, until done: @escaping @Sendable (String) -> Bool) async -> String {
        await DedicatedThread.run(name: "cli.stdout") { () -> String in
            var data = Data()
            while !done(String(decoding: data, as: UTF8.self)) {
                let chunk = SpawnedProcess.readSome(process.stdout)
                if chunk.isEmpty { break }
                data.append(chunk)
            }
            return String(decoding: data, as: UTF8.self)
        }
    }

    static func temporaryDirectory() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wr-cli-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.path
    }
}
