import Synchronization

/// The one handle that may be used from any thread: asks the Lua code running on a flow host to
/// stop (for example on Ctrl-C in the REPL). The count hook polls it every `hookStep` instructions
/// and ends the running chunk or handler with "interrupted"; awaits in progress are not affected
/// (cancel the Swift task for those).
package final class LuaInterrupt: Sendable {
    private let requested = Atomic<Bool>(false)

    package init() {}

    /// Request a stop of whatever Lua code is running now or next.
    package func request() { requested.store(true, ordering: .relaxed) }
    /// Clear a request (the host does this before each REPL chunk).
    package func reset() { requested.store(false, ordering: .relaxed) }
    /// Whether a stop was requested.
    package var isRequested: Bool { requested.load(ordering: .relaxed) }
}
