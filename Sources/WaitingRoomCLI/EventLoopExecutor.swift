import ArgumentParser
import Dispatch
import NIOCore
import NIOPosix

/// A command whose work is serving HTTP (`emulate`, the bench's static-reply server): its tasks
/// run on NIO's event loops rather than on Swift's cooperative pool.
///
/// Every request Hummingbird serves is read and written on a NIO event loop and handled in a Swift
/// task; with the default executor each request crosses between the two thread pools twice.
/// Installing NIO's event-loop group as the global executor (NIO's
/// `NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`) keeps
/// both on the same threads. It is process-wide and can only happen once, on the main thread, before
/// any other task runs, so the decision is taken right after parsing, before the command starts.
/// Deadlines are unaffected: ``WaitingRoom/SystemClock`` fires from event-loop timers either way.
protocol ServesOnEventLoops: SendableMetatype {
    /// Whether this invocation serves HTTP (a command may serve only with some options).
    var servesOnEventLoops: Bool { get }
}

extension WaitingRoomCommand {
    /// Parses the command line and runs the command, like ArgumentParser's `main()`, except that a
    /// command that ``ServesOnEventLoops`` first moves Swift concurrency onto NIO's event loops.
    ///
    /// Parsing is synchronous, on the calling (main) thread, and so are ArgumentParser's own
    /// commands (`--help`, `help`, completion scripts): they, a usage error or a bad option are
    /// answered and the process exits before Swift concurrency starts a thread. (An asynchronous
    /// parse hopped to the cooperative pool first, and its dispatch threads cost `--help` about a
    /// sixth of its start-up: 8.1 → 6.5–6.8 ms; `bench/startup.sh`.) An asynchronous command
    /// then runs in a task, and the main thread serves the main dispatch queue (`dispatchMain()`,
    /// as an `async` main does) until the command ends and the process exits with its status.
    ///
    /// Call it from the executable's synchronous `main`, before anything else starts a task.
    public static func runFromCommandLine(_ arguments: [String]? = nil) -> Never {
        var command = parse(arguments)
        guard let asyncCommand = command as? AsyncParsableCommand else {
            // ArgumentParser's own commands (help, completion scripts, the tool-info dump) are
            // synchronous: they run here, and no thread is started
            do {
                try command.run()
            } catch {
                exit(withError: error)
            }
            exit()
        }
        if let serving = asyncCommand as? ServesOnEventLoops, serving.servesOnEventLoops {
            // false if a hook is already installed, on platforms without the hook, or in the
            // static release binary (its runtime keeps the hook's symbol local, so NIO cannot
            // find it): the command then runs on the default executor, which is correct
            _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
        }
        Task {
            await run(asyncCommand)
        }
        dispatchMain()
    }

    /// The command the arguments name, or the exit ArgumentParser gives for help and errors.
    private static func parse(_ arguments: [String]?) -> sending any ParsableCommand {
        do {
            return try parseAsRoot(arguments)
        } catch {
            exit(withError: error)
        }
    }

    /// Runs an asynchronous command to its end and exits the process with its status.
    private static func run(_ parsed: any AsyncParsableCommand) async -> Never {
        var command = parsed
        do {
            try await command.run()
        } catch {
            exit(withError: error)
        }
        exit()
    }
}

extension EmulateCommand: ServesOnEventLoops {
    var servesOnEventLoops: Bool { true }
}

extension BenchCommand: ServesOnEventLoops {
    var servesOnEventLoops: Bool { serveStatic != nil }
}
