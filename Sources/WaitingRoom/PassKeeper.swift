import Logging

/// One vendor's pass persistence, written once for every vendor: the stored-pass check before a
/// vendor is asked again, saving a pass that lets the user in, and forgetting it on release.
///
/// A pass is kept when it has a credential and no bypassed error (a pass let through on failure
/// must not outlive the failure); with ``keepsOnlyExpiring`` it must also expire in the future
/// (Queue-it keeps a pass only until its token's `ts_`). A failed save is logged, not thrown: the
/// user has passed either way.
package struct PassKeeper: Sendable {
    /// The vendor the passes are filed under.
    package let vendorID: String
    /// Whether a stored, unexpired pass lets the user through without asking the vendor.
    package let reusesStoredPasses: Bool
    /// Whether only a pass with an expiry in the future is kept.
    package let keepsOnlyExpiring: Bool
    let store: any PassStore
    let clock: any WaitingRoomClock
    let logger: Logger

    /// - Parameters:
    ///   - reusesStoredPasses: the vendor configuration's `reuseStoredPass`.
    ///   - keepsOnlyExpiring: keep only passes whose `expiresAt` is after now.
    package init(vendorID: String, environment: ProviderEnvironment, reusesStoredPasses: Bool, keepsOnlyExpiring: Bool = false) {
        self.vendorID = vendorID
        self.reusesStoredPasses = reusesStoredPasses
        self.keepsOnlyExpiring = keepsOnlyExpiring
        self.store = environment.passStore
        self.clock = environment.clock
        self.logger = environment.logger(for: vendorID)
    }

    /// The stored pass for `room` when stored passes are reused (nil when none, or the store fails).
    package func stored(_ room: RoomKey) async -> Pass? {
        guard reusesStoredPasses else { return nil }
        return try? await store.pass(vendor: vendorID, room: room)
    }

    /// `tryPass`'s answer from a stored pass for `room` (passed, with `status`), or nil.
    package func storedResult(_ room: RoomKey, status: VendorStatus) async -> TryPassResult? {
        guard let pass = await stored(room) else { return nil }
        return TryPassResult(disposition: .passed, status: status, pass: pass)
    }

    /// Whether `pass` is one to keep (see the type's rule).
    package func keeps(_ pass: Pass) -> Bool {
        guard !pass.credential.isEmpty, pass.bypassedError == nil else { return false }
        guard keepsOnlyExpiring else { return true }
        return pass.expiresAt.map { $0 > clock.now() } ?? false
    }

    /// Saves `pass` when it is one to keep; a failed save is logged.
    package func keep(_ pass: Pass) async {
        guard keeps(pass) else { return }
        do { try await store.save(pass) } catch {
            logger.warning("could not save the pass", metadata: ["error": "\(error)"])
        }
    }

    /// Forgets the stored pass of `room`.
    package func forget(_ room: RoomKey) async throws {
        try await store.remove(vendor: vendorID, room: room)
    }
}
