import CLua
import CLuaShim
import Foundation
import Logging
import WaitingRoom

/// `Result` of a throwing vendor call, with any error turned into a `WaitingRoomError`.
func capture<T: Sendable>(_ body: () async throws -> T) async -> Result<T, WaitingRoomError> {
    do {
        return .success(try await body())
    } catch let error as WaitingRoomError {
        return .failure(error)
    } catch is CancellationError {
        return .failure(WaitingRoomError(.invalidUse, message: "cancelled"))
    } catch {
        return .failure(WaitingRoomError(.invalidResponse, message: "\(error)"))
    }
}

extension FlowHost {
    /// `room:release(pass)` (and its alias `room:complete(pass)`): gives back the key of a pass
    /// from `room:try_pass` (the answer or its `pass` table). A pass that holds no key, or whose
    /// key was already given back, returns status code 0 "nothing to return": safe to call twice.
    static func release(_ objects: HostObjects, _ method: String) -> HostFunction {
        return { vm, L in
            let usage = "\(method): call it as room:\(method)(answer) with the table room:try_pass returned (or its pass)"
            guard luaL_testudata(L, 1, "wr.room") != nil, lua_type(L, 2) == LUA_TTABLE else { return .error(usage) }
            var handle = vm.numberField(L, 2, "handle")
            if handle == nil {
                if vm.pushField(L, 2, "pass") == LUA_TTABLE { handle = vm.numberField(L, -1, "handle") }
                clua_pop(L, 1)
            }
            guard let handle, handle.isFinite, abs(handle) < 9e15, let held = objects.held.take(Int64(handle)) else {
                vm.push(L, status: VendorStatus(vendor: "", code: 0, message: "nothing to return (no key, or it was already given back)"))
                return .values(1)
            }
            return .await(
                PendingOperation({ await capture { try await held.provider.release(held.pass) } }, deliver: FlowHost.deliverStatus))
        }
    }

    /// Pushes a status table, or `nil, message, error-table` for a failure: the answer of the
    /// operations that give a status back (`room:release`, `session:complete`).
    static func deliverStatus(_ vm: LuaVM, _ L: OpaquePointer, _ result: Result<VendorStatus, WaitingRoomError>) -> Int32 {
        switch result {
        case .success(let status):
            vm.push(L, status: status)
            return 1
        case .failure(let error):
            return pushFailure(vm, L, error)
        }
    }

    /// Push `nil, message, error-table` (the `wr` convention for failed operations).
    static func pushFailure(_ vm: LuaVM, _ L: OpaquePointer, _ error: WaitingRoomError) -> Int32 {
        lua_pushnil(L)
        vm.push(L, error.description)
        vm.push(L, json: .object(error.fields))
        return 3
    }

    // MARK: room and session methods (shared by all flows on the host)

    func installMetatables() {
        let L = vm.L
        installMethods("wr.room", roomMethods())
        installMethods("wr.session", sessionMethods())
        luaL_newmetatable(L, "wr.decision")
        vm.push(L, "wr.decision")
        lua_setfield(L, -2, "__metatable")
        clua_pop(L, 1)
    }

    /// Registers the metatable `name` with `functions` as its methods (`__index`), a locked
    /// `__metatable` and a `__tostring` naming the object.
    func installMethods(_ name: String, _ functions: [(String, HostFunction)]) {
        let L = vm.L
        luaL_newmetatable(L, name)
        lua_createtable(L, 0, Int32(functions.count))
        for (method, function) in functions {
            clua_pushhost(L, vm.register(function))
            lua_setfield(L, -2, method)
        }
        lua_setfield(L, -2, "__index")
        vm.push(L, name)
        lua_setfield(L, -2, "__metatable")
        clua_pushhost(
            L,
            vm.register { [weak self] vm, L in
                let id = self?.userdataID(L, 1, name) ?? 0
                vm.push(L, "\(name) \(id)")
                return .values(1)
            })
        lua_setfield(L, -2, "__tostring")
        clua_pop(L, 1)
    }

    // MARK: the wr table of one flow

    /// Installs `wr` in the flow's global table: its functions by API area (rooms, events, the
    /// host's clock, logger and actions, HTTP, decisions), `wr.json` and `wr.version`.
    func installWR(in context: FlowContext) {
        let L = vm.L
        let functions =
            wrRoomFunctions(for: context) + wrEventFunctions(for: context) + wrHostFunctions(for: context)
            + wrHTTPFunctions() + Self.wrDecisionFunctions()
        // wr = { ... } in the flow's global table
        _ = clua_getref(L, context.env)
        lua_createtable(L, 0, Int32(functions.count + 1))
        for (name, function) in functions {
            clua_pushhost(L, vm.register(function))
            lua_setfield(L, -2, name)
        }
        pushWRJSON(L)
        lua_setfield(L, -2, "json")
        vm.push(L, "1.0")
        lua_setfield(L, -2, "version")
        lua_setfield(L, -2, "wr")
        clua_pop(L, 1)
    }
}
