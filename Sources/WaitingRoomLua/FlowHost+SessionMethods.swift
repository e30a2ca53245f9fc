import CLua
import CLuaShim
import Foundation
import WaitingRoom

extension FlowHost {
    /// The methods of a `wr.session`: `wait()`, `complete()`, `restart()`, `cancel()` and `state()`.
    func sessionMethods() -> [(String, HostFunction)] {
        let objects = self.objects
        // A closure of `objects` only: a nested function calling a method would capture the
        // host, and the VM that keeps these closures would keep the host alive (it never deinit'd).
        let session = { (L: OpaquePointer, _: String) -> WaitingSession? in
            guard let block = luaL_testudata(L, 1, "wr.session") else { return nil }
            let id = block.load(as: Int64.self)
            return objects.sessions[id]
        }

        return [
            (
                "wait",
                { [weak self] vm, L in
                    guard let session = self.flatMap({ _ in session(L, "wait") }) else { return .error("wait: call it as session:wait()") }
                    return .await(
                        PendingOperation(
                            { await session.outcome() },
                            deliver: { vm, L, outcome in
                                vm.push(L, json: .object(outcome.fields(revealSecrets: true)))
                                return 1
                            }))
                }
            ),
            (
                "complete",
                { [weak self] vm, L in
                    guard let session = self.flatMap({ _ in session(L, "complete") }) else {
                        return .error("complete: call it as session:complete()")
                    }
                    return .await(PendingOperation({ await capture { try await session.complete() } }, deliver: FlowHost.deliverStatus))
                }
            ),
            (
                "restart",
                { [weak self] vm, L in
                    guard let session = self.flatMap({ _ in session(L, "restart") }) else {
                        return .error("restart: call it as session:restart()")
                    }
                    return .await(
                        PendingOperation(
                            { await capture { try await session.restart() } },
                            deliver: { vm, L, result in
                                switch result {
                                case .success:
                                    lua_pushboolean(L, 1)
                                    return 1
                                case .failure(let error):
                                    return FlowHost.pushFailure(vm, L, error)
                                }
                            }))
                }
            ),
            (
                "cancel",
                { [weak self] vm, L in
                    guard let session = self.flatMap({ _ in session(L, "cancel") }) else {
                        return .error("cancel: call it as session:cancel()")
                    }
                    session.cancel()
                    lua_pushboolean(L, 1)
                    return .values(1)
                }
            ),
            (
                "state",
                { [weak self] vm, L in
                    guard let session = self.flatMap({ _ in session(L, "state") }) else {
                        return .error("state: call it as session:state()")
                    }
                    vm.push(L, session.state.rawValue)
                    return .values(1)
                }
            )
        ]
    }
}
