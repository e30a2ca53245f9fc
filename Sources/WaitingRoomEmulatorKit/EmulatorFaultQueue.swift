import NIOConcurrencyHelpers
import WaitingRoom

/// The faults an emulator holds, and what it injected: one queue per emulator, the same for
/// every vendor. Faults added one by one are served first, in order; then the chaos faults of
/// the request's kind (``installChaos(perKind:delay:on:)``), in rotation. Thread safety: its
/// state is behind a lock (NIO's `NIOLockedValueBox`, a pthread mutex ThreadSanitizer can see,
/// rather than `Synchronization.Mutex`, whose futex it cannot; no measurable cost next to the
/// HTTP request each call serves); any route may call it.
package final class EmulatorFaultQueue: Sendable {
    /// Chaos faults for one request kind: how many of each action are left, served in rotation
    /// (delay, drop, status 503, garbage), so consecutive requests meet different faults. O(1)
    /// per request, however many were installed.
    struct ChaosPlan: Sendable {
        static let order: [EmulatorFault.Action] = [.delay(.zero), .drop, .status(503), .garbage]
        var remaining = [0, 0, 0, 0]
        var next = 0
        var delay: Duration = .zero
        var pending: Int { remaining.reduce(0, +) }

        mutating func take(on kind: String) -> EmulatorFault? {
            for step in 0..<Self.order.count {
                let i = (next + step) % Self.order.count
                guard remaining[i] > 0 else { continue }
                remaining[i] -= 1
                next = (i + 1) % Self.order.count
                let action: EmulatorFault.Action = i == 0 ? .delay(delay) : Self.order[i]
                return EmulatorFault(action, on: kind, count: 1)
            }
            return nil
        }
    }

    private struct State: Sendable {
        var chaos: [String: ChaosPlan] = [:]
        var faults: [EmulatorFault] = []
        var installed = 0
        var injected = 0
        var injectedOn: [String: Int] = [:]
        var injectedByAction: [String: Int] = [:]
    }

    private let state = NIOLockedValueBox(State())

    package init() {}

    /// Adds `faults` (in order: the first matching one is used first).
    package func add(_ faults: [EmulatorFault]) {
        state.withLockedValue { s in
            s.faults.append(contentsOf: faults)
            s.installed += faults.reduce(0) { $0 + ($1.count ?? 1) }
        }
    }

    /// Adds one fault.
    package func add(_ fault: EmulatorFault) { add([fault]) }

    /// Removes every fault not used yet (the chaos faults too).
    package func clear() {
        state.withLockedValue { s in
            s.faults.removeAll()
            s.chaos.removeAll()
        }
    }

    /// Forgets the faults and the counters.
    package func reset() { state.withLockedValue { $0 = State() } }

    /// Whether a fault waits for a request of kind `kind` (it is left in place).
    package func has(for kind: String) -> Bool {
        state.withLockedValue { s in s.faults.contains { $0.matches(kind) } || (s.chaos[kind]?.pending ?? 0) > 0 }
    }

    /// Whether any fault waits.
    package var isEmpty: Bool { state.withLockedValue { s in s.faults.isEmpty && s.chaos.values.allSatisfy { $0.pending == 0 } } }

    /// The next fault for a request of kind `kind`, used once and counted as injected.
    package func take(for kind: String) -> EmulatorFault? {
        state.withLockedValue { s in
            let fault: EmulatorFault
            if let index = s.faults.firstIndex(where: { $0.matches(kind) }) {
                fault = s.faults[index]
                if let count = fault.count {
                    if count <= 1 { s.faults.remove(at: index) } else { s.faults[index].count = count - 1 }
                }
            } else if let chaos = s.chaos[kind]?.take(on: kind) {
                fault = chaos
            } else {
                return nil
            }
            s.injected += 1
            s.injectedOn[kind, default: 0] += 1
            s.injectedByAction[fault.action.name, default: 0] += 1
            return fault
        }
    }

    /// Fault uses installed so far (a fault until cleared counts once).
    package var installed: Int { state.withLockedValue { $0.installed } }
    /// Faults injected so far.
    package var injected: Int { state.withLockedValue { $0.injected } }
    /// Faults injected per request kind.
    package var injectedOn: [String: Int] { state.withLockedValue { $0.injectedOn } }
    /// Faults injected per action name.
    package var injectedByAction: [String: Int] { state.withLockedValue { $0.injectedByAction } }
    /// Fault uses still pending, chaos faults included (a fault until cleared counts once).
    package var pending: Int { state.withLockedValue { Self.pending($0) } }

    private static func pending(_ s: State) -> Int {
        s.faults.reduce(0) { $0 + ($1.count ?? 1) } + s.chaos.values.reduce(0) { $0 + $1.pending }
    }
    /// The faults not used yet.
    package var waiting: [EmulatorFault] { state.withLockedValue { $0.faults } }

    /// The counters as JSON (`faultsInstalled`, `faultsInjected`, `faultsPending`,
    /// `faultsInjectedOn`, `faultsInjectedByAction`, `faults`: the waiting ones).
    package var json: JSONValue {
        state.withLockedValue { s in
            .object([
                "faultsInstalled": .number(Double(s.installed)), "faultsInjected": .number(Double(s.injected)),
                "faultsPending": .number(Double(Self.pending(s))),
                "faultsInjectedOn": .object(s.injectedOn.mapValues { .number(Double($0)) }),
                "faultsInjectedByAction": .object(s.injectedByAction.mapValues { .number(Double($0)) }),
                "faults": .array(s.faults.map(\.json))
            ])
        }
    }

    /// The chaos rotation of `waitingroom load --chaos`: `perKind` faults of each of a `delay`,
    /// a dropped connection, HTTP 503 and garbage on each request kind of `kinds`, served in
    /// turn after the faults added one by one. Returns how many fault uses were installed
    /// (`perKind` is capped at 1,000,000; values ≤ 0 install nothing).
    @discardableResult
    package func installChaos(perKind: Int, delay: Duration, on kinds: [String]) -> Int {
        let n = min(perKind, EmulatorFaultBounds.count.upperBound)
        guard n > 0 else { return 0 }
        state.withLockedValue { s in
            for kind in kinds {
                var plan = s.chaos[kind] ?? ChaosPlan()
                for i in plan.remaining.indices { plan.remaining[i] += n }
                plan.delay = delay
                s.chaos[kind] = plan
            }
            s.installed += kinds.count * ChaosPlan.order.count * n
        }
        return kinds.count * ChaosPlan.order.count * n
    }
}
