import Foundation
import WaitingRoom

/// A provider that plays a given script of events: for tests and flow authors (the way
/// swift-log ships `InMemoryLogging`). No network; time follows the environment's clock.
///
/// Registered as vendor `"scripted"` with ``ScriptedConfiguration``:
///
/// ```json
/// {"steps": [{"progress": {"ahead": 3, "behind": 0}}, {"sleep": 1},
///            {"progress": {"ahead": 0}}, {"outcome": "passed", "code": 200}],
///  "tryPass": "queue"}
/// ```
package struct ScriptedProvider: WaitingRoomProvider {
    /// One step of the script.
    package enum Step: Hashable, Sendable {
        /// Emit an event.
        case emit(WaitingRoomEvent)
        /// Wait on the environment's clock.
        case sleep(Duration)
        /// End with an outcome (later steps are ignored).
        case finish(Outcome)
    }

    package let vendorID: String
    /// The script `enqueue` plays.
    package let steps: [Step]
    /// What `tryPass` answers.
    package let tryPassResult: TryPassResult
    /// What `complete()` reports for a pass that holds a key.
    package let completionStatus: VendorStatus
    private let environment: ProviderEnvironment
    private let dedup = SessionDeduplicator()
    private let log = ScriptLog()

    /// Creates a scripted provider.
    package init(
        vendorID: String = "scripted",
        steps: [Step],
        tryPassResult: TryPassResult? = nil,
        completionStatus: VendorStatus? = nil,
        environment: ProviderEnvironment = ProviderEnvironment(transport: NoNetworkTransport())
    ) {
        self.vendorID = vendorID
        self.steps = steps
        self.tryPassResult =
            tryPassResult
            ?? TryPassResult(disposition: .queue, status: VendorStatus(vendor: vendorID, code: 201, message: "would wait"))
        self.completionStatus = completionStatus ?? VendorStatus(vendor: vendorID, code: 200, message: "returned")
        self.environment = environment
    }

    package func tryPass(_ entry: Entry) async throws -> TryPassResult {
        await log.record("tryPass \(entry.room)")
        return tryPassResult
    }

    package func enqueue(_ entry: Entry) throws -> WaitingSession {
        try dedup.session(for: entry, policy: environment.duplicatePolicy) {
            WaitingSession(
                entry: entry, engine: Engine(vendorID: vendorID, steps: steps, completionStatus: completionStatus, log: log),
                environment: environment)
        }
    }

    package func release(_ pass: Pass) async throws -> VendorStatus {
        await log.record("release \(pass.room)")
        return completionStatus
    }

    /// What the provider was asked to do, in order (`tryPass`, `wait`, `complete`, `cancel`).
    package func calls() async -> [String] { await log.entries }

    struct Engine: WaitingSessionEngine {
        let vendorID: String
        let steps: [Step]
        let completionStatus: VendorStatus
        let log: ScriptLog

        func wait(for entry: Entry, context: SessionContext) async -> Outcome {
            await log.record("wait \(entry.room)")
            for step in steps {
                if Task.isCancelled { break }
                switch step {
                case .emit(let event):
                    context.emit(event)
                case .sleep(let duration):
                    do { try await context.environment.clock.sleep(for: duration) } catch { break }
                case .finish(let outcome):
                    return outcome.rebased(on: entry, vendor: vendorID, at: context.environment.clock.now())
                }
            }
            // A script without an outcome waits until the session is cancelled.
            while !Task.isCancelled {
                do { try await Task.sleep(for: .seconds(3600)) } catch { break }
            }
            await log.record("cancel \(entry.room)")
            return .closed(cancelledStatus)
        }

        func complete(_ pass: Pass, context: SessionContext) async -> VendorStatus {
            await log.record("complete \(pass.room)")
            return completionStatus
        }
    }
}

actor ScriptLog {
    var entries: [String] = []
    func record(_ entry: String) { entries.append(entry) }
}

extension Outcome {
    /// The outcome with its pass moved to `entry`'s room (scripts are written once for any room).
    func rebased(on entry: Entry, vendor: String, at now: Date) -> Outcome {
        func move(_ pass: Pass) -> Pass {
            var pass = pass
            pass.room = entry.room
            pass.vendor = vendor
            pass.issuedAt = now
            return pass
        }
        switch self {
        case .passed(let pass, let status): return .passed(move(pass), status)
        case .disabled(let pass, let status): return .disabled(pass.map(move), status)
        default: return self
        }
    }
}
