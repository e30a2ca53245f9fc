import Foundation
import Prometheus
import Synchronization
import WaitingRoom

/// `waitingroom bench events`: what the core's event fan-out costs, measured on the emit path
/// itself (an engine that emits progress events in a loop; no vendor, no test kit):
/// - an emit nobody listens to (no stream, no handler; the session keeps the early events for
///   its first stream), next to one uncontended lock round trip, the floor of any locked emit;
/// - an event delivered to 3 streams read by 3 tasks (each reads every event), next to the
///   same events pushed through 3 plain `AsyncStream`s and read by 3 tasks.
enum BenchEvents {
    ///
    /// Each figure is the best of `repeats` runs: the machines here are shared, and a run that
    /// another process interrupted says nothing about the code.
    static func run(events: Int = 200_000, repeats: Int = 5) async -> [BenchFigure] {
        var lock = Double.infinity
        var quiet = Double.infinity
        var plain = Double.infinity
        var fanOut = Double.infinity
        var measured = Double.infinity
        for _ in 0..<repeats {
            lock = min(lock, lockRoundTrip(rounds: events * 2))
            quiet = min(quiet, await emitWithoutSubscribers(events: events))
            measured = min(measured, await emitWithoutSubscribers(events: events, environment: measuredEnvironment))
            plain = min(plain, await plainAsyncStreams(events: events / 2))
            fanOut = min(fanOut, await deliverToThreeStreams(events: events / 2))
        }
        return [
            BenchFigure(
                name: "core event emit, no subscriber", value: quiet, unit: "ns/event",
                baseline: .init(name: "one uncontended Mutex lock round trip", value: lock, unit: "ns"),
                goal: .value(atMost: 100)),
            BenchFigure(
                name: "core event emit, no subscriber, with a metrics backend (swift-prometheus)", value: measured, unit: "ns/event",
                baseline: .init(name: "the same emit without a backend", value: quiet, unit: "ns/event"),
                goal: .value(atMost: 100)),
            BenchFigure(
                name: "core event delivered to 3 subscribers (3 streams, 3 reading tasks)", value: fanOut, unit: "ns/event",
                baseline: .init(name: "the same events through 3 plain AsyncStreams", value: plain, unit: "ns/event"),
                goal: .value(atMost: 1000))
        ]
    }

    /// Holds the engine until the streams are open, then lets it emit.
    final class Gate: Sendable {
        private let state = Mutex<(open: Bool, waiter: CheckedContinuation<Void, Never>?)>((false, nil))
        func wait() async {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let open = state.withLock { state -> Bool in
                    if state.open { return true }
                    state.waiter = continuation
                    return false
                }
                if open { continuation.resume() }
            }
        }
        func open() {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.open = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }

    /// Emits `count` progress events as fast as it can once the gate opens; the time it took is
    /// recorded by the engine itself (the emit loop alone).
    final class Engine: WaitingSessionEngine {
        let vendorID = "bench"
        let count: Int
        let gate: Gate
        let elapsed: Mutex<Duration>

        init(count: Int, gate: Gate) {
            self.count = count
            self.gate = gate
            self.elapsed = Mutex(.zero)
        }

        func wait(for entry: Entry, context: SessionContext) async -> Outcome {
            await gate.wait()
            let status = VendorStatus(vendor: vendorID, code: 201, message: "Continue")
            let started = ContinuousClock.now
            for i in 0..<count {
                context.emit(.progress(QueueProgress(ahead: count - i, behind: i), status))
            }
            let took = ContinuousClock.now - started
            elapsed.withLock { $0 = took }
            return .blocked(VendorStatus(vendor: vendorID, code: 301, message: "end of the benchmark"))
        }

        func complete(_ pass: Pass, context: SessionContext) async -> VendorStatus {
            VendorStatus(vendor: vendorID, code: 200, message: "nothing held")
        }
    }

    static func emitWithoutSubscribers(events: Int, environment: ProviderEnvironment = BenchEvents.environment) async -> Double {
        let gate = Gate()
        let engine = Engine(count: events, gate: gate)
        let session = WaitingSession(entry: Entry(room: RoomKey(scope: "bench", room: "quiet")), engine: engine, environment: environment)
        gate.open()
        _ = await session.outcome()
        return engine.elapsed.withLock { $0 }.seconds * 1e9 / Double(events)
    }

    static func deliverToThreeStreams(events: Int) async -> Double {
        let gate = Gate()
        let engine = Engine(count: events, gate: gate)
        let session = WaitingSession(entry: Entry(room: RoomKey(scope: "bench", room: "fan-out")), engine: engine, environment: environment)
        let streams = (0..<3).map { _ in session.events }
        let started = ContinuousClock.now
        gate.open()
        let counts = await withTaskGroup(of: Int.self) { group in
            for stream in streams {
                group.addTask {
                    var n = 0
                    for await _ in stream { n += 1 }
                    return n
                }
            }
            var counts: [Int] = []
            for await n in group { counts.append(n) }
            return counts
        }
        let elapsed = ContinuousClock.now - started
        guard counts.allSatisfy({ $0 >= events }) else { return .nan }
        return elapsed.seconds * 1e9 / Double(events)
    }

    /// The baseline: 3 unbounded AsyncStreams fed from one loop, read by 3 tasks.
    static func plainAsyncStreams(events: Int) async -> Double {
        let pairs = (0..<3).map { _ in AsyncStream<WaitingRoomEvent>.makeStream(bufferingPolicy: .unbounded) }
        let status = VendorStatus(vendor: "bench", code: 201, message: "Continue")
        let started = ContinuousClock.now
        await withTaskGroup(of: Void.self) { group in
            for (stream, _) in pairs {
                group.addTask {
                    var n = 0
                    for await _ in stream { n += 1 }
                    _ = n
                }
            }
            group.addTask {
                for i in 0..<events {
                    let event = WaitingRoomEvent.progress(QueueProgress(ahead: events - i, behind: i), status)
                    for (_, continuation) in pairs { continuation.yield(event) }
                }
                for (_, continuation) in pairs { continuation.finish() }
            }
            for await _ in group {}
        }
        return (ContinuousClock.now - started).seconds * 1e9 / Double(events)
    }

    /// One `Mutex.withLock` round trip on an uncontended lock, in nanoseconds.
    static func lockRoundTrip(rounds: Int) -> Double {
        let mutex = Mutex(0)
        let elapsed = ContinuousClock().measure {
            for i in 0..<rounds { mutex.withLock { $0 &+= i } }
        }
        let sink = mutex.withLock { $0 }
        return elapsed.seconds * 1e9 / Double(rounds) + (sink == 42 ? 1e-12 : 0)
    }

    /// A quiet environment: no network is used (the engine never sends).
    static var environment: ProviderEnvironment { ProviderEnvironment(transport: NoNetworkTransport(), metrics: nil, tracer: nil) }

    /// The same with the SDK's metrics going to a swift-prometheus registry (given to the
    /// environment: the bench does not bootstrap the process's backend).
    static var measuredEnvironment: ProviderEnvironment {
        ProviderEnvironment(
            transport: NoNetworkTransport(),
            metrics: WaitingRoomMetrics(factory: PrometheusMetricsFactory(registry: PrometheusCollectorRegistry())),
            tracer: nil)
    }
}
