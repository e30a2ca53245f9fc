import Synchronization

/// The session engine of every polling vendor, written once: per run it checks for a stored
/// pass, then asks the vendor's ``PollingVendor/check(_:visit:context:)`` and
/// ``PollingVendor/decide(_:entry:visit:context:)`` until an outcome, waiting between checks on
/// the environment's clock. Cancellation before or during a check, or during a wait, closes the
/// session with the vendor's cancelled status; a pass is kept in the store (by the vendor's
/// ``PassKeeper``) even when the user cancelled meanwhile, so no pass is lost.
package struct PollingSessionEngine<Vendor: PollingVendor>: WaitingSessionEngine {
    /// The vendor's side.
    package let vendor: Vendor
    let runs = RunCounter()

    /// An engine for `vendor`.
    package init(_ vendor: Vendor) { self.vendor = vendor }

    package var vendorID: String { vendor.vendorID }
    package var cancelledStatus: VendorStatus { vendor.cancelledStatus }
    package var restartedStatus: VendorStatus { vendor.restartedStatus }

    package func wait(for entry: Entry, context: SessionContext) async -> Outcome {
        let start: (storedPassRoom: RoomKey?, visit: Vendor.Visit)
        do { start = try vendor.begin(entry, run: runs.next()) } catch { return .failed(error) }
        if let room = start.storedPassRoom, let pass = await vendor.passes.stored(room) {
            return .passed(pass, vendor.storedPassStatus)
        }
        var visit = start.visit
        while true {
            if Task.isCancelled { return .closed(cancelledStatus) }
            let answer = await vendor.check(entry, visit: visit, context: context)
            // the answer is decided even when the user cancelled meanwhile: a pass it carries is
            // kept before the session closes, never dropped with the answer
            switch await vendor.decide(answer, entry: entry, visit: &visit, context: context) {
            case .finish(let outcome):
                if case .passed(let pass, _) = outcome { await vendor.passes.keep(pass) }
                return Task.isCancelled ? .closed(cancelledStatus) : outcome
            case .checkAgain(let delay):
                guard delay > .zero else { continue }
                do { try await context.environment.clock.sleep(for: delay) } catch { return .closed(cancelledStatus) }
            }
        }
    }

    package func complete(_ pass: Pass, context: SessionContext) async -> VendorStatus {
        await vendor.complete(pass, context: context)
    }
}

/// Counts a session's runs (the first wait, then one per restart).
final class RunCounter: Sendable {
    private let value = Mutex(0)
    /// The next run's number, from 1.
    func next() -> Int {
        value.withLock { v in
            v += 1
            return v
        }
    }
}
