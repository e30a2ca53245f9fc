import CLua
import CLuaShim
import Foundation
import WaitingRoom

extension FlowHost {
    /// The methods of a `wr.room`: `try_pass(entry)`, `release(answer)` and its alias
    /// `complete(answer)`, and `enqueue(entry)` (a `wr.session`).
    func roomMethods() -> [(String, HostFunction)] {
        let objects = self.objects
        return [
            (
                "try_pass",
                { [weak self] vm, L in
                    guard let self, let id = self.userdataID(L, 1, "wr.room"), let room = objects.rooms[id] else {
                        return .error("try_pass: call it as room:try_pass(entry)")
                    }
                    let entry: Entry
                    switch vm.entry(L, 2) {
                    case .success(let value): entry = value
                    case .failure(let error): return .error("try_pass: \(error.message)")
                    }
                    let provider = room.provider
                    let held = objects.held
                    let flow = room.context
                    return .await(
                        PendingOperation(
                            { () async -> Result<(TryPassResult, Int64?), WaitingRoomError> in
                                await capture {
                                    let answer = try await provider.tryPass(entry)
                                    // On record the moment it arrives: a flow that ends before the answer
                                    // reaches Lua still gives this key back.
                                    guard let pass = answer.pass, pass.requiresCompletion else { return (answer, nil) }
                                    return (answer, held.register(pass, provider: provider, context: flow))
                                }
                            },
                            deliver: { vm, L, result in
                                switch result {
                                case .success(let (answer, handle)):
                                    vm.push(L, tryPass: answer, handle: handle)
                                    return 1
                                case .failure(let error):
                                    return FlowHost.pushFailure(vm, L, error)
                                }
                            }))
                }
            ),
            ("release", Self.release(objects, "release")),
            ("complete", Self.release(objects, "complete")),
            (
                "enqueue",
                { [weak self] vm, L in
                    guard let self, let id = self.userdataID(L, 1, "wr.room"), let room = objects.rooms[id] else {
                        return .error("enqueue: call it as room:enqueue(entry)")
                    }
                    let entry: Entry
                    switch vm.entry(L, 2) {
                    case .success(let value): entry = value
                    case .failure(let error): return .error("enqueue: \(error.message)")
                    }
                    do {
                        let session = try room.provider.enqueue(entry)
                        let ref = self.sessionReference(session)
                        if let id = objects.sessionIDs[ObjectIdentifier(session)] { objects.enqueuedBy[id] = room.context }
                        if let context = self.contexts.first(where: { $0.id == room.context }) {
                            self.follow(session, context: context)
                        }
                        _ = clua_getref(L, ref)
                        return .values(1)
                    } catch let error as WaitingRoomError {
                        return .values(FlowHost.pushFailure(vm, L, error))
                    } catch {
                        return .values(FlowHost.pushFailure(vm, L, WaitingRoomError(.invalidUse, message: "\(error)")))
                    }
                }
            )
        ]
    }
}
