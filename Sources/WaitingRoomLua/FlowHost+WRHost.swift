import CLua
import CLuaShim
import Foundation
import Logging
import WaitingRoom

extension FlowHost {
    /// `wr.sleep(seconds)`, `wr.now()`, `wr.log(level, ...)` and `wr.emit(name, payload)`: time
    /// on the host's clock, the flow's logger and the actions handed back to the Swift host.
    func wrHostFunctions(for context: FlowContext) -> [(String, HostFunction)] {
        let clock = options.environment.clock
        let logger = context.logger
        let sink = actionSink
        return [
            (
                "sleep",
                { vm, L in
                    guard let seconds = vm.number(L, 1), seconds >= 0, seconds.isFinite else {
                        return .error("wr.sleep: expected a number of seconds >= 0")
                    }
                    return .await(
                        PendingOperation(
                            { () async -> Bool in
                                do {
                                    try await clock.sleep(for: .saturating(seconds: seconds))
                                    return true
                                } catch {
                                    return false
                                }
                            },
                            deliver: { vm, L, slept in
                                if slept {
                                    lua_pushboolean(L, 1)
                                    return 1
                                }
                                lua_pushnil(L)
                                vm.push(L, "cancelled")
                                return 2
                            }))
                }
            ),
            (
                "now",
                { vm, L in
                    lua_pushnumber(L, clock.now().timeIntervalSince1970)
                    return .values(1)
                }
            ),
            (
                "log",
                { vm, L in
                    // the level comes first and is named: `wr.log()` logged an empty line and `wr.log(5)` dropped the 5
                    guard let levelName = vm.string(L, 1) else {
                        return .error(
                            "wr.log: the first argument is the level (trace, debug, info, notice, warning, error or critical), not a \(String(cString: clua_typename_at(L, 1)))"
                        )
                    }
                    guard let level = Logger.Level(rawValue: levelName) else {
                        return .error(
                            "wr.log: unknown level \"\(levelName)\"; expected trace, debug, info, notice, warning, error or critical")
                    }
                    logger.log(level: level, "\(vm.joinArguments(L, from: 2))")
                    return .values(0)
                }
            ),
            (
                "emit",
                { vm, L in
                    guard let name = vm.string(L, 1) else { return .error("wr.emit: expected an action name string") }
                    let payload: JSONValue
                    switch vm.json(L, 2, path: "payload") {
                    case .success(let value): payload = value
                    case .failure(let error): return .error("wr.emit: \(error.message)")
                    }
                    let action = FlowAction(flow: context.name, name: name, payload: payload)
                    context.actions.append(action)
                    sink.yield(action)
                    return .values(0)
                }
            )
        ]
    }
}
