import WaitingRoomEmulatorKit

extension QueueItEmulator {
    /// Queue-it holds no keys: what counts is that every admitted visitor got its pass.
    package func loadFigures() -> EmulatorLoadFigures {
        let q = counters
        return EmulatorLoadFigures(
            keys: [
                ("enqueued", q.enqueueCount), ("passedVisitors", q.passedVisitors), ("faultsInjected", q.faultsInjected),
                ("faultsInjectedOnEnqueue", q.faultsInjectedOnEnqueue), ("faultsInjectedOnQueue", q.faultsInjectedOnQueue)
            ],
            requests: [
                ("enqueue (served)", q.enqueueCount), ("enqueue (faulted)", q.faultsInjectedOnEnqueue),
                ("queue page (faulted)", q.faultsInjectedOnQueue)
            ],
            replies: [("queueittoken answers", q.passedCount), ("visitors passed", q.passedVisitors)])
    }
}
