import Dispatch
import Foundation
import Synchronization
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomLua
import WaitingRoomVendors

#if canImport(Glibc)
    import Glibc
#endif

/// `waitingroom repl`: Lua with `wr` loaded, at a prompt.
struct ReplCommand: CLICommand {
    static let about = CommandDescription(
        name: "repl",
        abstract: "A Lua 5.4 prompt with the `wr` API loaded (line editing and history on a terminal).",
        discussion: """
            An expression prints its value (tables pretty-printed); an unfinished statement continues
            on the next line; `wr.*` calls that wait on the network just work. Ctrl-C stops the running
            chunk, Ctrl-D exits. When stdin is not a terminal, lines are read without prompts.

            Commands: :help  :load FILE  :vendors  :emulator start|stop  :quit

            Example:
              $ waitingroom repl
              > :emulator start
              > room = wr.open("netfunnel")
              > s = room:enqueue{ scope = "service_1", room = "basic" }
              > s:wait()
              > s:complete()

              printf 'return 1 + 1\\n' | waitingroom repl
            """
    )

    var history: String?
    var emulator = false

    static var arguments: [CLIArgument<Self>] {
        [
            .option("history", \.history, help: "History file (default ~/.waitingroom_history).", completion: .files),
            .flag("emulator", \.emulator, help: "Start the embedded emulator before the first prompt.")
        ]
    }

    func run() async throws {
        let terminal = Terminal()
        let session = try ReplSession(terminal: terminal, historyPath: history ?? LineReader.defaultHistoryPath)
        try await session.run(startEmulator: emulator)
    }
}

/// One REPL: the runtime, the line reader, the emulator it may have started.
final class ReplSession: Sendable {
    let terminal: Terminal
    let reader: LineReader
    let defaults = VendorDefaults()
    let emulator = EmulatorSlot()
    let runtime: FlowRuntime
    /// The chunk running now, so Ctrl-C can cancel a `wr.*` wait as well as running Lua.
    private let running = Mutex<Task<EvaluationResult, Never>?>(nil)

    init(terminal: Terminal, historyPath: String?) throws {
        self.terminal = terminal
        var history = historyPath
        if terminal.stdinIsTTY, let path = historyPath, !LineReader.mayKeepHistory(in: path) {
            terminal.error(
                "waitingroom repl: \(path) is not a history file (it does not start with _HiStOrY_V2_); it is left as it is and this session's lines are not kept"
            )
            history = nil
        }
        reader = LineReader(interactive: terminal.stdinIsTTY, historyPath: history)
        let printer = terminal
        let options = FlowOptions(
            printHandler: { printer.line($0) },
            registry: VendorRegistry.standard.withDefaults(defaults)
        )
        runtime = try FlowRuntime(options: options)
    }

    func run(startEmulator: Bool) async throws {
        let interrupt = runtime.interrupt
        signal(SIGINT, SIG_IGN)
        let sigint = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        sigint.setEventHandler { [self] in
            interrupt.request()
            running.withLock { $0?.cancel() }
        }
        sigint.resume()
        defer { sigint.cancel() }

        if reader.interactive {
            terminal.line("WaitingRoom REPL (Lua 5.4, `wr` loaded). :help for commands, Ctrl-D to exit.")
        }
        if startEmulator { await command(":emulator start") }
        var buffer = ""
        while true {
            guard let line = await reader.next(prompt: buffer.isEmpty ? "> " : ">> ") else { break }
            if buffer.isEmpty, line.hasPrefix(":") {
                reader.remember(line)
                if await command(line) == false { break }
                continue
            }
            if buffer.isEmpty, line.trimmingCharacters(in: .whitespaces).isEmpty { continue }
            buffer = buffer.isEmpty ? line : buffer + "\n" + line
            switch await evaluate(buffer) {
            case .incomplete:
                continue
            case .values(let values):
                if !values.isEmpty { terminal.line(values.joined(separator: "\t")) }
            case .failure(let error):
                terminal.error(error.description)
            }
            reader.remember(buffer)
            buffer = ""
        }
        if !buffer.isEmpty {
            terminal.error("stdin: unfinished chunk at end of input:\n\(buffer)")
        }
        if reader.interactive { terminal.line("") }
        // Keys taken in the session (room:try_pass without room:release, sessions left passed or
        // waiting) go back before the emulator it may be using stops.
        let returned = await runtime.returnHeldKeys()
        if returned > 0 { terminal.error("gave back \(returned) key(s) still held (room:release returns a try_pass key)") }
        await emulator.stop()
    }

    /// Evaluates one chunk as a task Ctrl-C can cancel.
    private func evaluate(_ chunk: String, chunkName: String = "=stdin") async -> EvaluationResult {
        let runtime = self.runtime
        let task = Task { await runtime.evaluate(chunk, chunkName: chunkName) }
        running.withLock { $0 = task }
        let result = await task.value
        running.withLock { $0 = nil }
        return result
    }

    /// Runs a `:` command; returns false to leave the REPL.
    @discardableResult
    func command(_ line: String) async -> Bool {
        let words = line.split(separator: " ", omittingEmptySubsequences: true).map(String.init)
        switch words.first ?? "" {
        case ":help", ":h", ":?":
            terminal.line(
                """
                :help                 this text
                :load FILE            run a Lua file in the REPL's globals
                :vendors              list the registered vendors
                :emulator start|stop  serve every vendor's emulator on 127.0.0.1 and make it `wr.open`'s default
                :quit                 leave (or Ctrl-D)
                Lua: an expression prints its value; wr.open(vendor, config) → room; room:enqueue{scope=…, room=…}
                → session; session:wait(); session:complete(). See Scripts/wr.meta.lua.
                """)
        case ":vendors":
            for descriptor in VendorRegistry.standard.descriptors {
                terminal.line("\(descriptor.id)\t\(descriptor.summary)")
            }
        case ":load":
            guard words.count == 2 else {
                terminal.error(":load needs a file name")
                return true
            }
            guard let data = FileManager.default.contents(atPath: words[1]) else {
                terminal.error(":load: cannot read \(words[1])")
                return true
            }
            // named after the file in messages ("big.bin:1:", not "stdin:1:")
            switch await evaluate(String(decoding: data, as: UTF8.self), chunkName: "@" + words[1]) {
            case .values(let values): if !values.isEmpty { terminal.line(values.joined(separator: "\t")) }
            case .incomplete: terminal.error("\(words[1]): unfinished chunk at end of file")
            case .failure(let error): terminal.error("\(error)")
            }
        case ":emulator":
            switch words.dropFirst().first {
            case "start":
                do {
                    let (suite, server) = try await emulator.start()
                    defaults.set(EmulatorSuite.clientDefaults(for: server))
                    terminal.line(suite.summary(server: server))
                    terminal.line(
                        "wr.open(\"netfunnel\"), wr.open(\"queueit\"), wr.open(\"crowdhandler\") and wr.open(\"cloudflare\") now default to it"
                    )
                } catch {
                    terminal.error(":emulator start: \(error)")
                }
            case "stop":
                let stopped = await emulator.stop()
                defaults.set([:])
                terminal.line(stopped ? "emulator stopped" : "no emulator is running (:emulator start starts one)")
            default:
                terminal.error(":emulator start|stop")
            }
        case ":quit", ":q", ":exit":
            return false
        default:
            terminal.error("unknown command \(words.first ?? line); :help lists them")
        }
        return true
    }
}
