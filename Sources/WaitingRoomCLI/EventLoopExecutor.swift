import ArgumentParser
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
protocol ServesOnEventLoops {
    /// Whether this invocation serves HTTP (a command may serve only with some options).
    var servesOnEventLoops: Bool { get }
}

extension WaitingRoomCommand {
    /// Parses the command line and runs the command, like ArgumentParser's `main()`, except that a
    /// command that ``ServesOnEventLoops`` first moves Swift concurrency onto NIO's event loops.
    ///
    /// Call it from the executable's `main`, before anything else starts a task.
    public static func runFromCommandLine(_ arguments: [String]? = nil) async {
        do {
            var command = try await asyncParseAsRoot(arguments)
            if let serving = command as? ServesOnEventLoops, serving.servesOnEventLoops {
                // false if a hook is already installed, on platforms without the hook, or in the
                // static release binary (its runtime keeps the hook's symbol local, so NIO cannot
                // find it): the command then runs on the default executor, which is correct
                _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
            }
            if var asyncCommand = command as? AsyncParsableCommand {
                try await asyncCommand.run()
            } else {
                try command.run()
            }
        } catch {
            exit(withError: error)
        }
    }
}

extension EmulateCommand: ServesOnEventLoops {
    var servesOnEventLoops: Bool { true }
}

extension BenchCommand: ServesOnEventLoops {
    var servesOnEventLoops: Bool { serveStatic != nil }
}
