/// Lets one operation at a time use a store's connection.
///
/// An actor runs one piece of code at a time, but it is reentrant: while an operation awaits
/// a statement (on the connection's thread), another may start and issue statements of its
/// own, which would then run inside the first one's transaction. The store therefore passes
/// every operation through this gate: it waits (without blocking a thread) until the one
/// before it has finished, in the order they arrived.
///
/// Kept inside the store's actor, so it needs no lock of its own.
struct SQLiteSerialGate {
    private var busy = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    /// Takes the gate when it is free; false when the caller must ``wait(_:)``.
    mutating func tryEnter() -> Bool {
        if busy { return false }
        busy = true
        return true
    }

    /// Queues a caller that found the gate taken; it is resumed holding the gate.
    mutating func wait(_ continuation: CheckedContinuation<Void, Never>) {
        waiting.append(continuation)
    }

    /// Hands the gate to the next caller in line, or frees it.
    mutating func leave() {
        if waiting.isEmpty {
            busy = false
        } else {
            waiting.removeFirst().resume()
        }
    }
}
