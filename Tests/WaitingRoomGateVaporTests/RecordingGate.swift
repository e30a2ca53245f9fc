#if Vapor
    import Synchronization
    import WaitingRoomGate

    /// An engine that lets everything through with one pass header and keeps each request it was
    /// asked about, to compare what the adapters hand it.
    final class RecordingGate: GateEngine {
        let vendorID = "recording"
        private let seen = Mutex<[GateRequest]>([])

        var requests: [GateRequest] { seen.withLock { $0 } }

        func decide(_ request: GateRequest) async -> GateDecision {
            seen.withLock { $0.append(request) }
            return .pass("recorded", headers: [GateHeader("Set-Cookie", "gate=1; Path=/")])
        }
    }
#endif
