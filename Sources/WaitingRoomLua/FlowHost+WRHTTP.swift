import CLua
import CLuaShim
import Foundation
import Logging
import WaitingRoom

extension FlowHost {
    /// `wr.http(request)`: one request on the host's transport; the response table, or
    /// `nil, message, error`.
    func wrHTTPFunctions() -> [(String, HostFunction)] {
        let transport = options.environment.transport
        return [
            (
                "http",
                { vm, L in
                    guard lua_type(L, 1) == LUA_TTABLE else {
                        return .error(
                            "wr.http: expected a request table { url = ..., method = ..., headers = {...}, body = ..., timeout = seconds }")
                    }
                    guard let url = vm.stringField(L, 1, "url") else { return .error("wr.http: request.url: expected a string") }
                    let method = vm.stringField(L, 1, "method")?.uppercased() ?? "GET"
                    var headers = HTTPHeaderList()
                    if vm.pushField(L, 1, "headers") == LUA_TTABLE, case .success(.object(let fields)) = vm.json(L, -1, path: "headers") {
                        for (name, value) in fields.sorted(by: { $0.key < $1.key }) {
                            if case .string(let text) = value { headers.add(name, text) } else { headers.add(name, value.jsonText) }
                        }
                    }
                    clua_pop(L, 1)
                    let body = vm.stringField(L, 1, "body").map { Array($0.utf8) }
                    let timeout = vm.numberField(L, 1, "timeout")
                    if let timeout, !(timeout > 0 && timeout.isFinite) {
                        return .error("wr.http: request.timeout: expected a number of seconds > 0")
                    }
                    var follow = false
                    if vm.pushField(L, 1, "follow_redirects") == LUA_TBOOLEAN { follow = lua_toboolean(L, -1) != 0 }
                    clua_pop(L, 1)
                    let request = HTTPRequest(
                        method: method, url: url, headers: headers, body: body,
                        timeout: timeout.map { .saturating(seconds: $0) } ?? .seconds(10), followRedirects: follow)
                    return .await(
                        PendingOperation(
                            { await capture { try await transport.send(request) } },
                            deliver: { vm, L, result in
                                switch result {
                                case .success(let response):
                                    lua_createtable(L, 0, 4)
                                    vm.setField(L, "status", response.status)
                                    vm.setField(L, "url", response.url)
                                    vm.push(L, String(decoding: response.body, as: UTF8.self))
                                    lua_setfield(L, -2, "body")
                                    lua_createtable(L, 0, Int32(clamping: response.headers.fields.count))
                                    for field in response.headers {
                                        vm.push(L, field.value)
                                        lua_setfield(L, -2, field.name.lowercased())
                                    }
                                    lua_setfield(L, -2, "headers")
                                    return 1
                                case .failure(let error):
                                    return FlowHost.pushFailure(vm, L, error)
                                }
                            }))
                }
            )
        ]
    }
}
