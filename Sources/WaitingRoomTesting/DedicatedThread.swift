import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// Runs CPU-bound or blocking test work on a thread of its own instead of a thread of Swift's
/// cooperative pool.
///
/// The pool has one thread per processor; a fuzzer, a benchmark loop or a blocking read that
/// holds one of them delays every other task of the process, deadlines and retry timers
/// included (they need a cooperative thread to run the code after their `await`). Work handed
/// to ``run(name:_:)`` runs on a new `Thread`, at a lower scheduling priority where the platform
/// allows it (a `nice` of 10 on Linux), so the pool stays free for the tests that run in
/// parallel with it.
package enum DedicatedThread {
    /// Runs `work` on a new thread and returns its result, or rethrows its error.
    ///
    /// The caller suspends (without holding a cooperative thread) until `work` ends; `work` is
    /// not cancelled with the calling task, so it should be bounded.
    package static func run<T: Sendable>(
        name: String = "waitingroom.dedicated", _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
            let thread = Thread {
                lowerPriority()
                continuation.resume(with: Result { try work() })
            }
            thread.name = name
            thread.start()
        }
    }

    /// Runs `work` on a new thread and returns its result.
    package static func run<T: Sendable>(name: String = "waitingroom.dedicated", _ work: @escaping @Sendable () -> T) async -> T {
        await withCheckedContinuation { (continuation: CheckedContinuation<T, Never>) in
            let thread = Thread {
                lowerPriority()
                continuation.resume(returning: work())
            }
            thread.name = name
            thread.start()
        }
    }

    /// Lowers the calling thread's priority so the cooperative pool and the event loops win
    /// the processor when both want it.
    private static func lowerPriority() {
        #if os(Linux)
            // On Linux (NPTL) `nice` is per thread: PRIO_PROCESS with id 0 sets the calling thread only.
            _ = setpriority(__priority_which_t(PRIO_PROCESS.rawValue), 0, 10)
        #else
            Thread.current.qualityOfService = .utility
        #endif
    }
}
