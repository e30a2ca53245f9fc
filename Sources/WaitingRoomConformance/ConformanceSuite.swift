import Foundation
import Synchronization
import WaitingRoom
import WaitingRoomTesting

/// A promise every vendor keeps (or, where its capabilities say so, keeps in its declared way).
public enum ConformancePromise: String, Sendable, Hashable, CaseIterable, CustomStringConvertible {
    /// The open room passes at once, without progress events.
    case passWithoutWaiting
    /// `tryPass` never waits in line and leaves no key behind.
    case tryPassNeverWaits
    /// The queue room keeps the user in line, then passes: progress in order, position never rises.
    case queueThenPass
    /// The block room ends as declared (`blocked`).
    case block
    /// The closed room ends as declared (`disabled`).
    case disabled
    /// Every entry fault ends in its error kind, with the vendor's id and own code kept.
    case errorKinds
    /// `complete()` returns the key once, and a second call returns the same status.
    case completeOnce
    /// `cancel()` while waiting ends `closed` and gives the waiting key back.
    case cancelWhileWaiting
    /// `restart()` while waiting gives the key back and enters again in the same session.
    case restartWhileWaiting
    /// A finished session refuses `restart()` and `complete()` with `.invalidUse`.
    case finishedSessionRefuses
    /// Duplicate policy `join`: a second `enqueue` of an entry in flight joins it.
    case duplicateJoin
    /// Duplicate policy `reject`: a second `enqueue` of an entry in flight is refused.
    case duplicateReject
    /// A late subscriber gets the current state and the replayed outcome.
    case lateSubscriber
    /// Every event stream ends after the outcome (or after `completed` for a key).
    case streamsEnd
    /// A bound handler sees future events only.
    case boundHandlersSeeFutureEventsOnly
    /// Delay, drop, 5xx and garbage on each request kind end in the documented event within the
    /// retry budget, and no key is left behind.
    case faults
    /// Passes are stored in, and expire from, the `PassStore` (or are never stored, as declared).
    case passStore

    public var description: String { rawValue }
}

/// One broken promise.
public struct ConformanceFailure: Sendable, Hashable, CustomStringConvertible {
    /// The vendor id.
    package var vendor: String
    /// The promise that broke.
    package var promise: ConformancePromise
    /// What was seen.
    package var message: String

    public var description: String { "[\(vendor)] promise '\(promise.rawValue)' broken: \(message)" }
}

/// What a run found: the promises checked and the failures.
public struct ConformanceReport: Sendable, CustomStringConvertible {
    /// The vendor id.
    package var vendor: String
    /// The promises checked.
    package var checked: [ConformancePromise]
    /// Every broken promise, with what was seen.
    public var failures: [ConformanceFailure]

    /// True when every promise held.
    package var passed: Bool { failures.isEmpty }

    public var description: String {
        if failures.isEmpty { return "[\(vendor)] \(checked.count) promise(s) kept: \(checked.map(\.rawValue).joined(separator: ", "))" }
        return failures.map(\.description).joined(separator: "\n")
    }
}

/// The conformance suite: one entry point that checks a vendor's provider against its emulator
/// through the public API only.
///
/// ```swift
/// let suite = ConformanceSuite(capabilities: myCapabilities) { clock in
///     try await MyEmulatorAdapter.start(clock: clock)   // any ConformanceEmulator
/// }
/// @Test(arguments: ConformancePromise.allCases)
/// func conformance(_ promise: ConformancePromise) async {
///     for failure in await suite.check(promise).failures { Issue.record("\(failure)") }
/// }
/// ```
///
/// Each promise runs on a new emulator and a new auto-advancing ``VirtualClock`` that the
/// emulator, the provider and the pass store share, so polling and retry waits take no real time
/// (the provider's sleeps pause 5 ms of real time each, so a waiting user does not poll flat out);
/// real-time waits are bounded by ``timeout``.
public struct ConformanceSuite<Emulator: ConformanceEmulator>: Sendable {
    /// What the vendor declares.
    package let capabilities: ConformanceCapabilities
    /// Makes an emulator on the given clock.
    package let makeEmulator: @Sendable (VirtualClock) async throws -> Emulator
    /// The real-time bound on any one wait (an outcome, a counter, a stream's end).
    package var timeout: Duration

    /// Creates the suite.
    /// - Parameters:
    ///   - capabilities: what the vendor declares.
    ///   - timeout: the real-time bound on any one wait (default 30 s; generous for loaded machines).
    ///   - makeEmulator: starts an emulator whose time is the given clock; its
    ///     ``ConformanceEmulator/makeProvider(environment:)`` makes the provider under test.
    public init(
        capabilities: ConformanceCapabilities, timeout: Duration = .seconds(30),
        makeEmulator: @escaping @Sendable (VirtualClock) async throws -> Emulator
    ) {
        self.capabilities = capabilities
        self.timeout = timeout
        self.makeEmulator = makeEmulator
    }

    /// Checks every promise in `promises` (default all), one after the other.
    public func run(_ promises: [ConformancePromise] = ConformancePromise.allCases) async -> ConformanceReport {
        var report = ConformanceReport(vendor: capabilities.vendorID, checked: [], failures: [])
        for promise in promises {
            let one = await check(promise)
            report.checked += one.checked
            report.failures += one.failures
        }
        return report
    }

    /// Checks one promise on a new emulator.
    public func check(_ promise: ConformancePromise) async -> ConformanceReport {
        let recorder = Recorder(vendor: capabilities.vendorID, promise: promise)
        let clock = VirtualClock(autoAdvance: true)
        let emulator: Emulator
        do {
            emulator = try await makeEmulator(clock)
        } catch {
            recorder.fail("could not start the emulator: \(error)")
            return recorder.report
        }
        let context = CheckContext(
            capabilities: capabilities, emulator: emulator, clock: clock, recorder: recorder, timeout: timeout)
        do {
            try await emulator.reset()
            try await context.run(promise)
        } catch {
            recorder.fail("stopped by an error: \(error)")
        }
        await emulator.shutdown()
        return recorder.report
    }
}

/// Collects failures for one promise.
final class Recorder: Sendable {
    let vendor: String
    let promise: ConformancePromise
    private let failures = Mutex<[ConformanceFailure]>([])

    init(vendor: String, promise: ConformancePromise) {
        self.vendor = vendor
        self.promise = promise
    }

    func fail(_ message: String) {
        failures.withLock { $0.append(ConformanceFailure(vendor: vendor, promise: promise, message: message)) }
    }

    /// Records `message` unless `condition` holds; returns `condition`.
    @discardableResult
    func expect(_ condition: Bool, _ message: @autoclosure () -> String) -> Bool {
        if !condition { fail(message()) }
        return condition
    }

    var report: ConformanceReport {
        ConformanceReport(vendor: vendor, checked: [promise], failures: failures.withLock { $0 })
    }
}

/// Reads a session's first event stream to its end.
final class EventCollector: Sendable {
    private struct State {
        var events: [WaitingRoomEvent] = []
        var finished = false
    }
    private let state = Mutex(State())

    init(_ stream: AsyncStream<WaitingRoomEvent>) {
        Task { [self] in
            for await event in stream { state.withLock { $0.events.append(event) } }
            state.withLock { $0.finished = true }
        }
    }

    var events: [WaitingRoomEvent] { state.withLock { $0.events } }
    var finished: Bool { state.withLock { $0.finished } }
}

/// Collects what a bound handler sees.
final class HandlerLog: Sendable {
    private let storage = Mutex<[WaitingRoomEvent]>([])
    func append(_ event: WaitingRoomEvent) { storage.withLock { $0.append(event) } }
    var events: [WaitingRoomEvent] { storage.withLock { $0 } }
}
