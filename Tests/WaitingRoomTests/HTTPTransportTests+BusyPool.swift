import Foundation
import NIOCore
import Synchronization
import Testing
import WaitingRoomHTTP
import WaitingRoomTesting
import WebDriver

@testable import WaitingRoom

/// A deadline holds while every thread of Swift's cooperative pool is busy.
///
/// The request goes to a loopback server that never answers, with a short deadline; once it is
/// on the wire, as many loops as there are processors (the pool's width on Linux) take every
/// cooperative thread and spin without suspending. The deadline is AsyncHTTPClient's own, on the
/// request's event loop: when it passes, the client closes the connection, which the server sees
/// on its own event loop and which releases the loops. A deadline that needs a free cooperative
/// thread (a `Task.sleep` race) cannot fire while the loops spin, so the loops would run into
/// their 3 s cap instead and the connection would close only after it.
///
/// Taking the whole pool stalls every other task of the process, so the check runs in a child
/// process of its own (this test binary again, filtered to ``BusyPoolCheck``): in the parallel
/// suite it would otherwise starve the other tests' emulators for up to the deadline and make
/// their own (correct) deadlines fire. The parent judges the child's exit status and report.
///
/// Timing: the close is expected at the deadline; the bound checked is the deadline plus 1.3 s,
/// generous so that a loaded 2-core machine cannot make it flaky, and still well below the 3 s
/// the loops would spin without the fix. The decisive checks are not timed: every loop was still
/// spinning when the connection closed, and none ran into its cap.
extension HTTPTransportTests {
    @Test func aDeadlineFiresWhileEveryCooperativeThreadSpins() async throws {
        let result = try await TestBinaryChild.run(
            filter: "BusyPoolCheck", environment: [busyPoolChildSwitch: "1"], timeout: .seconds(120))
        let report = result.output.split(separator: "\n").filter { $0.contains("busy pool (") }
        for line in report { print(line) }
        #expect(result.status == 0, "the busy-pool check failed in its own process:\n\(result.output)")
        #expect(!report.isEmpty, "the child ran no busy-pool check:\n\(result.output)")
        #expect(result.output.contains("aDeadlineFiresWhileEveryCooperativeThreadSpinsInThisProcess"))
        #expect(result.output.contains("theCoresTimerQueueFiresWhileEveryCooperativeThreadSpinsInThisProcess"))
    }
}

/// The environment variable that enables ``BusyPoolCheck`` (set only for the child process).
let busyPoolChildSwitch = "WR_BUSY_POOL_CHILD"

/// The busy-pool check itself; enabled only in the child process started above.
@Suite(.serialized, .enabled(if: ProcessInfo.processInfo.environment[busyPoolChildSwitch] == "1"))
struct BusyPoolCheck {

    @Test func aDeadlineFiresWhileEveryCooperativeThreadSpinsInThisProcess() async throws {
        let threads = ProcessInfo.processInfo.activeProcessorCount
        // The premise (every loop spinning when the deadline fires) needs the loops to have started
        // before it; on a loaded machine the pool may be slow to hand them threads, so an attempt
        // whose loops did not all start is inconclusive and the next tries a longer deadline. Only
        // a conclusive attempt is judged.
        for deadline in [200, 500, 1_000, 2_000] {
            let server = try await LoopbackHTTPServer.start()
            defer { Task { await server.stop() } }
            let hog = PoolHog(cap: .milliseconds(Int64(deadline)) + .seconds(3))
            server.activity.onClose { hog.release() }
            let url = server.base + "/never"
            let started = NIODeadline.now()
            let request = Task { try await AsyncHTTPTransport().send(HTTPRequest(url: url, timeout: .milliseconds(Int64(deadline)))) }
            // The request is on the wire before the pool is taken.
            while server.activity.paths.isEmpty { try await Task.sleep(for: .milliseconds(1)) }
            await hog.occupy(threads)
            let result = await request.result
            let answered = NIODeadline.now() - started

            #expect(throws: WaitingRoomError.self) { try result.get() }
            if case .failure(let error as WaitingRoomError) = result { #expect(error.kind == .networkTimeout) }
            let closed = try #require(server.activity.closes.first) - started
            print(
                "busy pool (\(threads) spinning loops): \(deadline) ms deadline closed the connection after \(closed.milliseconds) ms; "
                    + "loops spinning then: \(hog.spinningAtRelease); caller saw the timeout after \(answered.milliseconds) ms")
            guard hog.spinningAtRelease == threads else { continue }
            #expect(hog.loopsThatHitTheCap == 0, "the deadline, not the cap, ended the loops")
            #expect(closed >= .milliseconds(Int64(deadline) - 5))
            #expect(closed < .milliseconds(Int64(deadline) + 1_300))
            return
        }
        Issue.record("the cooperative pool could not be taken before any of the deadlines fired")
    }

    /// The core's own timer queue (used when no transport's event loops are bootstrapped) fires
    /// on time while every cooperative thread spins: the timer itself releases the loops.
    @Test func theCoresTimerQueueFiresWhileEveryCooperativeThreadSpinsInThisProcess() async throws {
        let threads = ProcessInfo.processInfo.activeProcessorCount
        for delay in [200, 500, 1_000, 2_000] {
            let hog = PoolHog(cap: .milliseconds(Int64(delay)) + .seconds(3))
            let started = ContinuousClock.now
            let firedAt = Mutex<ContinuousClock.Instant?>(nil)
            _ = EventLoopTimer.scheduleOnQueue(after: .milliseconds(Int64(delay))) {
                firedAt.withLock { $0 = ContinuousClock.now }
                hog.release()
            }
            await hog.occupy(threads)
            let fired = try #require(firedAt.withLock { $0 }) - started
            print(
                "busy pool (\(threads) spinning loops): the core's timer queue fired a \(delay) ms timer after \(fired); loops spinning then: \(hog.spinningAtRelease)"
            )
            guard hog.spinningAtRelease == threads else { continue }
            #expect(hog.loopsThatHitTheCap == 0, "the timer, not the cap, ended the loops")
            #expect(fired >= .milliseconds(Int64(delay)))
            #expect(fired < .milliseconds(Int64(delay) + 1_300))
            return
        }
        Issue.record("the cooperative pool could not be taken before any of the timers fired")
    }
}

/// Runs this test binary again as a child process, filtered to some tests.
enum TestBinaryChild {
    struct Result {
        var status: Int32
        /// Standard output and standard error, interleaved.
        var output: String
    }

    /// Runs the tests matching `filter` in a new process with `environment` added; kills it
    /// after `timeout`.
    static func run(filter: String, environment: [String: String], timeout: Duration) async throws -> Result {
        var env = ProcessInfo.processInfo.environment
        env.merge(environment) { _, new in new }
        let executable = URL(fileURLWithPath: "/proc/self/exe").resolvingSymlinksInPath().path
        let process = try SpawnedProcess.spawn(
            executable, arguments: ["--testing-library", "swift-testing", "--filter", filter], environment: env,
            stdin: .discard, stdout: .pipe, stderr: .sameAsStdout)
        // The read blocks until the child ends: on a thread of its own, not the cooperative pool's.
        async let text = DedicatedThread.run(name: "child.output") { SpawnedProcess.readToEnd(process.stdout) }
        let deadline = ContinuousClock.now + timeout
        while process.isRunning && ContinuousClock.now < deadline {
            try await Task.sleep(for: .milliseconds(20))
        }
        if process.isRunning { process.terminate() }
        let status = await DedicatedThread.run(name: "child.wait") { process.waitForExit() }
        return Result(status: status, output: String(decoding: await text, as: UTF8.self))
    }
}

extension TimeAmount {
    /// Whole milliseconds.
    var milliseconds: Int64 { nanoseconds / 1_000_000 }
}
