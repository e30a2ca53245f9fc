import Foundation
import Tracing

/// Sessions across instances: with a shared store (PostgreSQL), a user (``Entry/userId``) waits
/// in one room on one instance at a time.
///
/// The instance that gets the session's lease waits in line as usual and renews the lease with
/// its heartbeat (``KeyJournal``); when it ends, the lease keeps the pass (until the pass
/// expires) or is dropped. Another instance asked to enqueue the same user follows: it polls
/// the lease, and ends with the pass the first instance got (status code 0, "passed on another
/// instance"), or, when the first ended without a pass or died (its lease lapsed), takes the
/// lease and waits in line itself. A store failure never keeps a user waiting: the session
/// then waits in line on this instance (logged).
extension WaitingSession {
    /// How often a following instance looks at the lease.
    static let leaseFollowInterval: Duration = .milliseconds(250)
    /// How long a finished lease without an expiring pass keeps it for the other instances.
    static let leasePassKeep: TimeInterval = 600

    /// The wait with what decorates it: the wait's span as the current trace context (so the
    /// vendor requests are its children) and, with a shared store, the session's lease.
    func decoratedWait(for entry: Entry, context: SessionContext, leased: Bool) async -> Outcome {
        guard let spanContext = instrumentation?.startWait() else {
            return leased ? await leasedWait(for: entry, context: context) : await engine.wait(for: entry, context: context)
        }
        return await InstrumentationContext.$current.withValue(spanContext) {
            leased ? await leasedWait(for: entry, context: context) : await engine.wait(for: entry, context: context)
        }
    }

    /// ``WaitingSessionEngine/wait(for:context:)`` under the session's lease (the store is
    /// shared and the entry names its user).
    func leasedWait(for entry: Entry, context: SessionContext) async -> Outcome {
        let store = environment.store
        guard let user = entry.userId, !user.isEmpty else {
            return await engine.wait(for: entry, context: context)
        }
        let journal = environment.keyJournal
        let clock = environment.clock
        let id = SessionLeaseID(vendor: vendorID, room: entry.room, user: user)
        let lease = journal.lease.seconds
        var following = false
        while true {
            let now = clock.now()
            let claim: SessionClaim
            do {
                claim = try await store.acquireSession(id, owner: journal.owner, now: now, until: now.addingTimeInterval(lease))
            } catch {
                logger.warning(
                    "state store: cannot take the session's lease; waiting in line on this instance", metadata: ["error": "\(error)"])
                return await engine.wait(for: entry, context: context)
            }
            switch claim {
            case .acquired:
                journal.beginSessionLease()
                let outcome = await engine.wait(for: entry, context: context)
                do {
                    try await store.finishSession(
                        id, owner: journal.owner, pass: outcome.pass, keepUntil: clock.now().addingTimeInterval(Self.leasePassKeep))
                } catch {
                    logger.warning("state store: cannot finish the session's lease", metadata: ["error": "\(error)"])
                }
                journal.endSessionLease()
                return outcome
            case .passed(let pass):
                return .passed(pass, VendorStatus(vendor: vendorID, code: 0, message: "passed on another instance (shared state store)"))
            case .heldBy(let owner, _):
                if !following {
                    following = true
                    logger.debug("the user waits on another instance; following its lease", metadata: ["owner": "\(owner)"])
                }
                do {
                    try await SystemClock().sleep(for: Self.leaseFollowInterval)
                } catch {
                    return .closed(engine.cancelledStatus)
                }
            }
        }
    }
}
