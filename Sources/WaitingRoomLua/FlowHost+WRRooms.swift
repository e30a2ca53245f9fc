import CLua
import CLuaShim
import Foundation
import Logging
import WaitingRoom

extension FlowHost {
    /// `wr.open(vendor, config)`: a room of the flow (a `wr.room` userdata) made by the
    /// registry's vendor, or `nil, message, error`.
    func wrRoomFunctions(for context: FlowContext) -> [(String, HostFunction)] {
        let options = self.options
        let objects = self.objects
        return [
            (
                "open",
                { [weak self] vm, L in
                    guard let self else { return .values(0) }
                    guard let vendor = vm.string(L, 1) else {
                        return .error("wr.open: expected a vendor id string (one of \(options.registry.vendorIDs.joined(separator: ", ")))")
                    }
                    let config: JSONValue
                    if lua_type(L, 2) <= LUA_TNIL {
                        config = .object([:])
                    } else {
                        switch vm.json(L, 2, path: "config") {
                        case .success(let value): config = value
                        case .failure(let error): return .error("wr.open: \(error.message)")
                        }
                    }
                    do {
                        let provider = try options.registry.makeProvider(
                            vendor: vendor, configuration: config, environment: options.environment)
                        let id = objects.nextID
                        objects.nextID += 1
                        objects.rooms[id] = (vendor, provider, context.id)
                        self.pushUserdata(L, id: id, metatable: "wr.room")
                        return .values(1)
                    } catch let error as WaitingRoomError {
                        return .values(FlowHost.pushFailure(vm, L, error))
                    } catch {
                        return .values(FlowHost.pushFailure(vm, L, WaitingRoomError(.invalidConfiguration, message: "\(error)")))
                    }
                }
            )
        ]
    }
}
