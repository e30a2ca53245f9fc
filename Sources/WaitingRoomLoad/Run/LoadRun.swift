import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// Runs a ``LoadPlan``: starts its users through a provider as they arrive, waits for every
/// outcome and for background key returns, and gives the figures as values (``LoadSummary``).
///
/// ```swift
/// let environment = ProviderEnvironment(passStore: CrowdStore(inner: MemoryPassStore()))
/// let provider = try VendorRegistry.standard.makeProvider(vendor: "netfunnel", configuration: configuration, environment: environment)
/// let summary = try await LoadRun(plan).run(provider: provider, pendingReturns: environment.pendingReturns,
///                                           emulator: suite.vendor("netfunnel"))
/// #expect(summary.outcomes["passed"] == plan.users)
/// ```
///
/// Give the provider a ``CrowdStore``, so that no user takes a pass another one stored.
public struct LoadRun: Sendable {
    /// What the run does.
    package var plan: LoadPlan

    /// A run of `plan`.
    public init(_ plan: LoadPlan) { self.plan = plan }

    /// Runs the plan against `vendor`'s room, configured by `configuration` (the JSON its
    /// provider takes, as `waitingroom load --config` reads it), and returns its figures.
    ///
    /// Every virtual user is its own visitor: the provider gets a pass store that keeps no pass
    /// (a user never takes a pass another one stored) and its own background key returns, which
    /// the run waits for at its end (``LoadPlan/drainTimeout``).
    ///
    /// ```swift
    /// let plan = LoadPlan(room: RoomKey(scope: "service_1", room: "act_10"), users: 500, arrivals: .poisson(perSecond: 50))
    /// let summary = try await LoadRun(plan).run(vendor: "netfunnel", configuration: configuration, registry: .standard)
    /// print(summary.text.joined(separator: "\n"))
    /// ```
    ///
    /// - Throws: `WaitingRoomError` when the registry cannot make the provider (an unknown
    ///   vendor, a configuration it refuses); ``LoadError`` as the other `run`.
    public func run(vendor: String, configuration: JSONValue, registry: VendorRegistry) async throws -> LoadSummary {
        let environment = ProviderEnvironment(passStore: CrowdStore(inner: MemoryPassStore()))
        let provider = try registry.makeProvider(vendor: vendor, configuration: configuration, environment: environment)
        return try await run(provider: provider, pendingReturns: environment.pendingReturns, emulator: nil)
    }

    /// Runs the plan through `provider` and returns its figures, with the embedded emulator's own
    /// counters and admission record.
    ///
    /// - Parameters:
    ///   - pendingReturns: the provider's background key returns (its environment's), counted in the summary.
    ///   - emulator: the embedded emulator serving the run, if any: its request and key counters,
    ///     the room's configured rate, the sale start it schedules (``LoadPlan/saleStart``) and its
    ///     record of arrival and admission order (the fairness figures).
    /// - Throws: ``LoadError`` when the plan's sale start cannot be scheduled on `emulator`.
    package func run(
        provider: any WaitingRoomProvider, pendingReturns: PendingReturns,
        emulator: (any EmulatedVendor)?
    ) async throws(LoadError) -> LoadSummary {
        let fairnessSource = emulator as? any EmulatorFairnessSource
        let originDate = Date()
        let started = ContinuousClock.now
        if let saleStart = plan.saleStart, let emulator {
            guard let fairnessSource else { throw .noScheduledStart(vendor: type(of: emulator).vendorID) }
            do {
                try fairnessSource.scheduleStart(
                    room: plan.room, at: originDate.addingTimeInterval(saleStart.seconds), shuffle: true, seed: plan.seed)
            } catch {
                throw .scheduleRefused(error)
            }
        }
        let arrivalTimes = plan.arrivals.offsets(count: plan.users, seed: plan.seed)
            .map { Duration.saturating(seconds: ($0 * 1000).rounded() / 1000) }
        let visits = await Crowd(provider: provider, room: plan.room, control: plan.control, hold: plan.hold...plan.hold)
            .run(arrivals: arrivalTimes, prefix: "load", origin: started)
        let wall = ContinuousClock.now - started
        let notDrained = await provider.drainPendingReturns(timeout: plan.drainTimeout)
        let rate = emulator.map { LoadOperatorFigures.roomRate(in: $0.emulatorStatus(), room: plan.room) } ?? .unknown
        return LoadSummary(
            users: plan.users, wall: wall, visits: visits, returns: pendingReturns.statistics, returnsLeft: notDrained,
            emulator: emulator?.loadFigures(), roomRate: rate,
            fairness: LoadFairnessFigures.measured(
                visits: visits, record: fairnessSource?.admissionRecord(room: plan.room), origin: originDate,
                startAt: plan.saleStart?.seconds, rate: rate))
    }
}
