import NIOConcurrencyHelpers

/// An engine whose configuration can be replaced while requests are decided: each request asks
/// the engine in force when it starts, whole, so none is decided by a half-read configuration
/// (the engines are immutable values; a new configuration is a new engine, swapped in one step).
/// What ``GateConfigurationReloader`` installs into; adapters hold it like any engine.
///
/// Threading: the reference is read and replaced behind NIO's lock (a pthread mutex:
/// ThreadSanitizer sees it, it cannot see `Synchronization.Mutex` on Linux), held for the copy of
/// one reference only; any thread may ask or replace.
package final class GateEngineSwitch: GateEngine {
    private let current: NIOLockedValueBox<any GateEngine>
    /// The vendor id of the first engine (a replacement is of the same vendor).
    package let vendorID: String

    package init(_ engine: any GateEngine) {
        current = NIOLockedValueBox(engine)
        vendorID = engine.vendorID
    }

    /// The engine in force.
    package var engine: any GateEngine { current.withLockedValue { $0 } }

    /// Puts `engine` in force for every request that starts from now on.
    package func replace(with engine: any GateEngine) {
        current.withLockedValue { $0 = engine }
    }

    package func decide(_ request: GateRequest) async -> GateDecision {
        await engine.decide(request)
    }

    package func immediateDecision(_ request: GateRequest) -> GateDecision? {
        engine.immediateDecision(request)
    }

    /// The engine in force's. (A proxy reads it once at start: a field a later configuration's
    /// trigger reads can be dropped by a visitor's `Connection` header until the gate restarts.)
    package var consultedHeaderNames: Set<String> { engine.consultedHeaderNames }

    package var bodyBytesToDecide: Int { engine.bodyBytesToDecide }

    package func handlerAnswered(_ request: GateRequest, decision: GateDecision, status: Int, elapsed: Duration) async {
        await engine.handlerAnswered(request, decision: decision, status: status, elapsed: elapsed)
    }
}
