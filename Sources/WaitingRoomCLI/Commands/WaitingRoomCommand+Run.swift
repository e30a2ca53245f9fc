import Dispatch
import NIOCore
import NIOPosix
import WaitingRoomHTTP

#if canImport(Glibc)
    import Glibc
#endif

extension WaitingRoomCommand {
    /// Parses the command line and runs the command.
    ///
    /// Parsing is synchronous, on the calling (main) thread (``CommandLineParser``, no
    /// reflection): help, completion scripts and usage errors are answered and the process exits
    /// before Swift concurrency starts a thread. A command then runs in a task, and the main
    /// thread serves the main dispatch queue (`dispatchMain()`, as an `async` main does) until
    /// the command ends and the process exits with its status.
    ///
    /// A command that serves HTTP (``CLICommand/servesOnEventLoops``) first moves Swift
    /// concurrency onto NIO's event loops: every request Hummingbird serves is read and written on
    /// an event loop and handled in a Swift task, and with the default executor it crosses between
    /// the two thread pools twice. Installing NIO's event-loop group as the global executor
    /// (`NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()`)
    /// keeps both on the same threads; it is process-wide and can only happen once, before any
    /// other task runs. Deadlines are unaffected: ``WaitingRoom/SystemClock`` fires from
    /// event-loop timers either way.
    ///
    /// Call it from the executable's synchronous `main`, before anything else starts a task.
    public static func runFromCommandLine(_ arguments: [String]? = nil) -> Never {
        let invocation: CommandLineParser.Invocation
        do {
            invocation = try parser.parse(arguments ?? Array(CommandLine.arguments.dropFirst()))
        } catch {
            Terminal.write(2, error.report)
            exit(ExitStatus.usage.rawValue)
        }
        switch invocation {
        case .output(let text):
            Terminal.write(1, text.hasSuffix("\n") ? text : text + "\n")
            exit(ExitStatus.passed.rawValue)
        case .run(let command):
            if command.servesOnEventLoops {
                // false if a hook is already installed, on platforms without the hook, or in the
                // static release binary (its runtime keeps the hook's symbol local, so NIO cannot
                // find it): the command then runs on the default executor, which is correct
                _ = NIOSingletons.unsafeTryInstallSingletonPosixEventLoopGroupAsConcurrencyGlobalExecutor()
            }
            Task {
                await run(command)
            }
            dispatchMain()
        }
    }

    /// Runs a command to its end and exits the process with its status: the ``ExitStatus`` it
    /// throws, 0 when it returns, 64 for a usage error, 4 (error) for any other error.
    private static func run(_ command: any CLICommand) async -> Never {
        // The SDK's default transport for every provider a command makes (HTTPTransportSystem).
        AsyncHTTPTransport.bootstrapIfUnset()
        do {
            try await command.run()
        } catch let status as ExitStatus {
            exit(status.rawValue)
        } catch let usage as UsageError {
            Terminal.write(2, usage.report)
            exit(ExitStatus.usage.rawValue)
        } catch {
            Terminal.write(2, "Error: \(error)\n")
            exit(ExitStatus.error.rawValue)
        }
        exit(ExitStatus.passed.rawValue)
    }
}
