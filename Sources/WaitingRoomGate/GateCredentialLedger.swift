import Logging
import NIOConcurrencyHelpers
import WaitingRoom

/// A `SingleUseLedger` as a gate engine uses it: the store, what a request gets when the store
/// cannot answer (open or closed), and the count of those times.
///
/// An engine decides synchronously on a `GateCredentialView`: it asks the view whether a
/// credential was used and tells it which ones its decision uses. This type runs that decision:
/// - with the in-process ``GateReplayLedger``, on the caller's thread, in one pass;
/// - with a shared store (SQLite, PostgreSQL), in two: the first pass learns which ids the
///   decision reads (most requests read none and are answered at once), their state is fetched,
///   the decision is made again on it, and then each id it uses is recorded. A use that loses a
///   race (another instance recorded the id in between) turns the decision into the answer the
///   engine gave for a replay. Nothing is recorded for a preview (`GateRequest/isPreview`).
///
/// When the store throws: with `failsOpen` the credential counts as unused and is not recorded
/// (the KnownUser connectors' own behaviour: they keep no ledger); otherwise the request gets 503.
/// Either way the failure is logged and counted (`failureCount`).
public final class GateCredentialLedger: Sendable {
    /// Where uses are recorded.
    package let store: any SingleUseLedger
    /// Whether a request is decided as if its credential were unused when the store fails.
    package let failsOpen: Bool
    let logger: Logger
    private let failures = NIOLockedValueBox(0)
    /// The store when it answers on the caller's thread.
    let local: GateReplayLedger?

    public init(
        _ store: any SingleUseLedger, failsOpen: Bool = true,
        logger: Logger = Logger(label: "waitingroom.gate.ledger")
    ) {
        self.store = store
        self.failsOpen = failsOpen
        self.logger = logger
        self.local = store as? GateReplayLedger
    }

    /// How many times the store could not answer.
    package var failureCount: Int { failures.withLockedValue { $0 } }

    /// The answer when the store fails closed.
    package static let unavailable = GateDecision(
        verdict: .refuse, response: .refusal(503, "the gate cannot check this link now; try again in a minute"),
        reason: "credential ledger unavailable")

    /// The decision when it can be made without waiting: always with the in-process ledger; with a
    /// shared store, only when the decision reads and uses no credential. Nil: ask ``decide(_:now:_:)``.
    package func decideNow(_ request: GateRequest, now: Int64, _ decide: (inout GateCredentialView) -> GateDecision) -> GateDecision? {
        var view = GateCredentialView(now: now, local: local)
        let decision = decide(&view)
        if let local {
            if request.isPreview { return decision }
            for use in view.uses where !local.use(use.id, expiresAt: use.expiresAt, now: now) { return use.ifReplayed }
            return decision
        }
        return view.asked.isEmpty && view.uses.isEmpty ? decision : nil
    }

    /// The decision, reading and recording credentials in the store.
    package func decide(_ request: GateRequest, now: Int64, _ decide: (inout GateCredentialView) -> GateDecision) async -> GateDecision {
        if let decision = decideNow(request, now: now, decide) { return decision }
        var known: [String: Bool] = [:]
        var view = GateCredentialView(now: now, local: nil)
        var decision = decide(&view)
        // a decision reads at most a couple of ids; a new one read on a later pass is fetched too
        for _ in 0..<3 where !view.asked.isEmpty {
            for id in view.asked where known[id] == nil {
                do {
                    known[id] = try await store.wasUsed(id, now: now)
                } catch {
                    if let refusal = failed(error, id: id) { return refusal }
                    known[id] = false
                }
            }
            view = GateCredentialView(now: now, local: nil, known: known)
            decision = decide(&view)
        }
        if request.isPreview { return decision }
        for use in view.uses {
            do {
                if try await !store.use(use.id, expiresAt: use.expiresAt, now: now) { return use.ifReplayed }
            } catch {
                if let refusal = failed(error, id: use.id) { return refusal }
            }
        }
        return decision
    }

    /// Logs and counts a failure; the refusal when failing closed.
    private func failed(_ error: any Error, id: String) -> GateDecision? {
        failures.withLockedValue { $0 += 1 }
        logger.error(
            "the credential ledger could not answer",
            metadata: [
                "error": "\(error)", "failsOpen": "\(failsOpen)"
            ])
        return failsOpen ? nil : Self.unavailable
    }
}

/// What an engine sees of the ledger while it decides (see ``GateCredentialLedger``): whether an
/// id was used, and which ids its decision will use.
package struct GateCredentialView {
    /// The time the decision is made at (epoch seconds).
    package let now: Int64
    let local: GateReplayLedger?
    var known: [String: Bool]
    /// The ids asked about that the view did not know.
    private(set) var asked: [String] = []
    /// The ids the decision uses, with the decision each would turn into if it was a replay.
    private(set) var uses: [GateCredentialUse] = []

    init(now: Int64, local: GateReplayLedger?, known: [String: Bool] = [:]) {
        self.now = now
        self.local = local
        self.known = known
    }

    /// A view of no ledger: nothing was used, nothing is recorded (an engine configured without
    /// replay protection).
    package static func none(now: Int64) -> GateCredentialView { GateCredentialView(now: now, local: nil) }

    /// Whether `id` was used and has not expired. An id the view does not know yet counts as
    /// unused on this pass (it is fetched and the decision made again).
    package mutating func wasUsed(_ id: String) -> Bool {
        if let local { return local.wasUsed(id, now: now) }
        if let answer = known[id] { return answer }
        if !asked.contains(id) { asked.append(id) }
        return false
    }

    /// The decision uses `id` until `expiresAt`; if another use got there first, the request
    /// gets `ifReplayed` instead.
    package mutating func willUse(_ id: String, expiresAt: Int64, ifReplayed: GateDecision) {
        uses.append(GateCredentialUse(id: id, expiresAt: expiresAt, ifReplayed: ifReplayed))
    }
}

/// One credential a decision uses.
struct GateCredentialUse {
    let id: String
    let expiresAt: Int64
    let ifReplayed: GateDecision
}
