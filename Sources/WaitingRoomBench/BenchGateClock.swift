import Foundation
import NIOConcurrencyHelpers
import WaitingRoom

/// The clock of the core benchmarks: every sleep waits at a gate until ``advance(by:)`` opens it,
/// so a benchmark can line up its sessions (and their subscribers) before it starts timing.
///
/// A shipped module must not use the test kit's `VirtualClock`; this is the part of it the
/// benchmarks need (sleepers are counted, `advance` wakes them all, cancellation ends a sleep).
final class BenchGateClock: WaitingRoomClock {
    private struct State {
        var nextID: UInt64 = 0
        var sleepers: [UInt64: CheckedContinuation<Void, any Error>] = [:]
        var opened = false
    }

    private let state = NIOLockedValueBox(State())

    func now() -> Date { Date() }

    /// Tasks waiting at the gate.
    var sleeperCount: Int { state.withLockedValue { $0.sleepers.count } }

    func sleep(for duration: Duration) async throws {
        try Task.checkCancellation()
        let id = state.withLockedValue { s -> UInt64 in
            s.nextID += 1
            return s.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                // Decided under the lock the cancellation handler takes too: exactly one resume.
                let action: Int = state.withLockedValue { s in
                    if s.opened || duration <= .zero { return 0 }
                    if Task.isCancelled { return 1 }
                    s.sleepers[id] = continuation
                    return 2
                }
                switch action {
                case 0: continuation.resume()
                case 1: continuation.resume(throwing: CancellationError())
                default: break
                }
            }
        } onCancel: {
            let sleeper = state.withLockedValue { $0.sleepers.removeValue(forKey: id) }
            sleeper?.resume(throwing: CancellationError())
        }
    }

    /// Opens the gate: every sleeper wakes, and later sleeps return at once (`duration` is
    /// ignored; the benchmarks only need "now").
    func advance(by duration: Duration) {
        let due = state.withLockedValue { s -> [CheckedContinuation<Void, any Error>] in
            s.opened = true
            defer { s.sleepers.removeAll() }
            return Array(s.sleepers.values)
        }
        for continuation in due { continuation.resume() }
    }

    /// Waits in real time until at least `count` tasks wait at the gate.
    @discardableResult
    func waitForSleepers(_ count: Int = 1, timeout: Duration = .seconds(30)) async -> Bool {
        let limit = ContinuousClock.now.advanced(by: timeout)
        while ContinuousClock.now < limit {
            if sleeperCount >= count { return true }
            try? await Task.sleep(for: .milliseconds(1))
        }
        return false
    }
}
