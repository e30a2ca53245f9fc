import Foundation
import Testing
import WaitingRoomTesting

#if canImport(Glibc)
    import Glibc
#endif

/// The REPL on a real terminal (tmux), with libedit line editing and history.
@Suite("REPL on a terminal (tmux)", .serialized, .timeLimit(.minutes(2)))
struct REPLTerminalTests {
    static var tmux: String? {
        ["/usr/bin/tmux", "/usr/local/bin/tmux"].first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// A tmux server of this test's own (`-L`), so no other tmux server is touched and the
    /// test can end it with `kill-server`.
    static let socket = "wr-test-\(getpid())-\(UInt32.random(in: 0...UInt32.max))"

    /// Runs tmux through `/bin/sh` with output to a file and waits with `waitpid`: `new-session`
    /// forks the tmux server, which must not keep a pipe of ours (or Foundation's exit
    /// notification) waiting. A tmux client that does not finish within `timeout` is killed and
    /// reported, so the test can never hang the run.
    ///
    /// The wait blocks its thread, so tests call ``tmux(_:timeout:)``, which runs it on a thread
    /// of its own rather than on a thread of the cooperative pool; only `defer` clean-up (which
    /// cannot `await`) calls this directly.
    @discardableResult
    static func tmuxBlocking(_ arguments: [String], timeout: Duration = .seconds(10)) throws -> String {
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("tmux-\(UUID().uuidString).txt").path
        let quoted = ([tmux ?? "/usr/bin/tmux", "-L", socket] + arguments).map {
            "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'"
        }
        // exec: the shell becomes the tmux client, so a kill reaches the client itself.
        let command = "exec " + quoted.joined(separator: " ") + " > '\(out)' 2>/dev/null < /dev/null"
        var pid: pid_t = 0
        let words: [String] = ["/bin/sh", "-c", command]
        var argv: [UnsafeMutablePointer<CChar>?] = words.map { word in word.withCString { strdup($0) } }
        argv.append(nil)
        defer { for p in argv { free(p) } }
        guard posix_spawn(&pid, "/bin/sh", nil, nil, argv, environ) == 0 else { throw TmuxFailure(message: "posix_spawn failed") }
        defer { try? FileManager.default.removeItem(atPath: out) }
        let deadline = ContinuousClock.now + timeout
        var status: Int32 = 0
        while waitpid(pid, &status, WNOHANG) == 0 {
            if ContinuousClock.now > deadline {
                kill(pid, SIGKILL)
                waitpid(pid, &status, 0)
                throw TmuxFailure(message: "tmux \(arguments.first ?? "") did not finish within \(timeout)")
            }
            usleep(10_000)
        }
        return (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
    }

    /// Runs a tmux client (see ``tmuxBlocking(_:timeout:)``) off the cooperative pool.
    @discardableResult
    static func tmux(_ arguments: [String], timeout: Duration = .seconds(10)) async throws -> String {
        try await DedicatedThread.run(name: "tmux") { try tmuxBlocking(arguments, timeout: timeout) }
    }

    struct TmuxFailure: Error, CustomStringConvertible {
        let message: String
        var description: String { message }
    }

    /// Waits until the pane shows `text` (or gives up after `timeout`).
    static func waitFor(_ text: String, session: String, timeout: Duration = .seconds(20)) async throws -> String {
        let deadline = ContinuousClock.now + timeout
        var screen = ""
        while ContinuousClock.now < deadline {
            screen = try await tmux(["capture-pane", "-p", "-t", session])
            if screen.contains(text) { return screen }
            try await Task.sleep(for: .milliseconds(100))
        }
        return screen
    }

    @Test(.enabled(if: tmux != nil, "tmux is not installed"))
    func historyIsRecalledWithTheArrowKeys() async throws {
        let dir = CLIProcess.temporaryDirectory()
        let session = "wr-repl-\(UInt32.random(in: 0...UInt32.max))"
        let command = "cd '\(CLIProcess.packageRoot)' && HOME='\(dir)' '\(CLIProcess.binary)' repl --history '\(dir)/history'"
        try await Self.tmux(["new-session", "-d", "-s", session, "-x", "100", "-y", "30", command])
        defer {
            _ = try? Self.tmuxBlocking(["kill-session", "-t", session])
            _ = try? Self.tmuxBlocking(["kill-server"])
        }
        var screen = try await Self.waitFor("WaitingRoom REPL", session: session)
        #expect(screen.contains("WaitingRoom REPL"))

        try await Self.tmux(["send-keys", "-t", session, "-l", "6 * 7"])
        try await Self.tmux(["send-keys", "-t", session, "Enter"])
        screen = try await Self.waitFor("42", session: session)
        #expect(screen.contains("42"))

        try await Self.tmux(["send-keys", "-t", session, "-l", "function sq(x)"])
        try await Self.tmux(["send-keys", "-t", session, "Enter"])
        screen = try await Self.waitFor(">>", session: session)
        #expect(screen.contains(">>"), "continuation prompt")
        try await Self.tmux(["send-keys", "-t", session, "-l", "return x * x end"])
        try await Self.tmux(["send-keys", "-t", session, "Enter"])
        try await Self.tmux(["send-keys", "-t", session, "-l", "sq(12)"])
        try await Self.tmux(["send-keys", "-t", session, "Enter"])
        screen = try await Self.waitFor("144", session: session)
        #expect(screen.contains("144"))

        // Up Up recalls "6 * 7" past "sq(12)"; Enter runs it again.
        try await Self.tmux(["send-keys", "-t", session, "-l", "\"marker\""])
        try await Self.tmux(["send-keys", "-t", session, "Enter"])
        _ = try await Self.waitFor("marker", session: session)
        try await Self.tmux(["send-keys", "-t", session, "Up"])
        try await Self.tmux(["send-keys", "-t", session, "Up"])
        try await Self.tmux(["send-keys", "-t", session, "Up"])
        try await Self.tmux(["send-keys", "-t", session, "Up"])
        try await Self.tmux(["send-keys", "-t", session, "Enter"])
        try await Task.sleep(for: .milliseconds(500))
        screen = try await Self.tmux(["capture-pane", "-p", "-t", session])
        let answers = screen.components(separatedBy: "\n").filter { $0.trimmingCharacters(in: .whitespaces) == "42" }
        #expect(answers.count == 2, "the recalled line ran again:\n\(screen)")

        // Ctrl-D leaves; the history file was written.
        try await Self.tmux(["send-keys", "-t", session, "C-d"])
        try await Task.sleep(for: .milliseconds(500))
        let history = (try? String(contentsOfFile: "\(dir)/history", encoding: .utf8)) ?? ""
        #expect(history.contains("sq(12)"))
        #expect(history.hasPrefix("_HiStOrY_V2_"), "libedit's header, which the REPL looks for: \(history.prefix(40))")
    }

    /// `--history` naming a file that is not a history file leaves it as it is (libedit read its
    /// lines as history and wrote them back reformatted, after a header line of its own).
    @Test(.enabled(if: tmux != nil, "tmux is not installed"))
    func someoneElsesFileIsNotTakenForHistory() async throws {
        let dir = CLIProcess.temporaryDirectory()
        let notes = "\(dir)/notes-\(UInt32.random(in: 0...UInt32.max)).txt"
        let content = "my notes\nroot:x:0:0:root:/root:/bin/bash\n"
        try Data(content.utf8).write(to: URL(fileURLWithPath: notes))
        let session = "wr-repl-\(UInt32.random(in: 0...UInt32.max))"
        let command = "cd '\(CLIProcess.packageRoot)' && HOME='\(dir)' '\(CLIProcess.binary)' repl --history '\(notes)'"
        try await Self.tmux(["new-session", "-d", "-s", session, "-x", "160", "-y", "30", command])
        defer {
            _ = try? Self.tmuxBlocking(["kill-session", "-t", session])
            _ = try? Self.tmuxBlocking(["kill-server"])
        }
        let screen = try await Self.waitFor("WaitingRoom REPL", session: session)
        #expect(screen.contains("is not a history file"), "\(screen)")
        try await Self.tmux(["send-keys", "-t", session, "-l", "6 * 7"])
        try await Self.tmux(["send-keys", "-t", session, "Enter"])
        _ = try await Self.waitFor("42", session: session)
        try await Self.tmux(["send-keys", "-t", session, "C-d"])
        try await Task.sleep(for: .milliseconds(500))
        #expect(try String(contentsOfFile: notes, encoding: .utf8) == content)
    }
}
