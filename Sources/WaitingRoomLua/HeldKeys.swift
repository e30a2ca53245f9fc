import Synchronization
import WaitingRoom

/// Keys Lua took with `room:try_pass` and has not given back (`room:release`), per flow.
///
/// Thread rules: `Sendable` and locked, because a key is registered by the vendor call itself
/// (off the runtime's actor, in the `try_pass` operation) the moment it arrives — before its
/// result is handed to Lua, so a flow that is aborted, errors or is cancelled while the answer
/// is on its way still has the key on record. Everything else (release, the flow's end, the
/// runtime's drop) takes entries out under the same lock, so each key is given back once.
final class HeldKeys: Sendable {
    struct Held: Sendable {
        var provider: any WaitingRoomProvider
        var pass: Pass
        /// The flow context that took it.
        var context: Int
    }

    private let state = Mutex<(next: Int64, held: [Int64: Held])>((1, [:]))

    /// Records a key-holding pass; returns its handle (the `handle` field Lua sees).
    func register(_ pass: Pass, provider: any WaitingRoomProvider, context: Int) -> Int64 {
        state.withLock { s in
            let id = s.next
            s.next += 1
            s.held[id] = Held(provider: provider, pass: pass, context: context)
            return id
        }
    }

    /// Takes the key `id` out of the ledger (nil when it was already given back).
    func take(_ id: Int64) -> Held? { state.withLock { $0.held.removeValue(forKey: id) } }

    /// Takes every key of `context` (nil: of every context) out of the ledger.
    func takeAll(context: Int?) -> [Held] {
        state.withLock { s in
            let ids = s.held.filter { context == nil || $0.value.context == context }.keys.sorted()
            return ids.compactMap { s.held.removeValue(forKey: $0) }
        }
    }

    /// Keys still held.
    var count: Int { state.withLock { $0.held.count } }
}
