import CLua
import CLuaShim
import Foundation
import Logging
import WaitingRoom

/// `Result` of a throwing vendor call, with any error turned into a `WaitingRoomError`.
private func capture<T: Sendable>(_ body: () async throws -> T) async -> Result<T, WaitingRoomError> {
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
            return .await(PendingOperation({ await capture { try await held.provider.release(held.pass) } }, deliver: { vm, L, result in
                switch result {
                case .success(let status):
                    vm.push(L, status: status)
                    return 1
                case .failure(let error):
                    return FlowHost.pushFailure(vm, L, error)
                }
            }))
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
        let objects = self.objects
        let environment = options.environment

        func methods(_ name: String, _ functions: [(String, HostFunction)]) {
            luaL_newmetatable(L, name)
            lua_createtable(L, 0, Int32(functions.count))
            for (method, function) in functions {
                clua_pushhost(L, vm.register(function))
                lua_setfield(L, -2, method)
            }
            lua_setfield(L, -2, "__index")
            vm.push(L, name)
            lua_setfield(L, -2, "__metatable")
            clua_pushhost(L, vm.register { [weak self] vm, L in
                let id = self?.userdataID(L, 1, name) ?? 0
                vm.push(L, "\(name) \(id)")
                return .values(1)
            })
            lua_setfield(L, -2, "__tostring")
            clua_pop(L, 1)
        }

        methods("wr.room", [
            ("try_pass", { [weak self] vm, L in
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
                return .await(PendingOperation({ () async -> Result<(TryPassResult, Int64?), WaitingRoomError> in
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
            }),
            ("release", Self.release(objects, "release")),
            ("complete", Self.release(objects, "complete")),
            ("enqueue", { [weak self] vm, L in
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
            }),
        ])

        // A closure of `objects` only: a nested function calling a method would capture the
        // host, and the VM that keeps these closures would keep the host alive (it never deinit'd).
        let session = { (L: OpaquePointer, _: String) -> WaitingSession? in
            guard let block = luaL_testudata(L, 1, "wr.session") else { return nil }
            let id = block.load(as: Int64.self)
            return objects.sessions[id]
        }

        methods("wr.session", [
            ("wait", { [weak self] vm, L in
                guard let session = self.flatMap({ _ in session(L, "wait") }) else { return .error("wait: call it as session:wait()") }
                return .await(PendingOperation({ await session.outcome() }, deliver: { vm, L, outcome in
                    vm.push(L, json: .object(outcome.fields(revealSecrets: true)))
                    return 1
                }))
            }),
            ("complete", { [weak self] vm, L in
                guard let session = self.flatMap({ _ in session(L, "complete") }) else { return .error("complete: call it as session:complete()") }
                return .await(PendingOperation({ await capture { try await session.complete() } }, deliver: { vm, L, result in
                    switch result {
                    case .success(let status):
                        vm.push(L, status: status)
                        return 1
                    case .failure(let error):
                        return FlowHost.pushFailure(vm, L, error)
                    }
                }))
            }),
            ("restart", { [weak self] vm, L in
                guard let session = self.flatMap({ _ in session(L, "restart") }) else { return .error("restart: call it as session:restart()") }
                return .await(PendingOperation({ await capture { try await session.restart() } }, deliver: { vm, L, result in
                    switch result {
                    case .success:
                        lua_pushboolean(L, 1)
                        return 1
                    case .failure(let error):
                        return FlowHost.pushFailure(vm, L, error)
                    }
                }))
            }),
            ("cancel", { [weak self] vm, L in
                guard let session = self.flatMap({ _ in session(L, "cancel") }) else { return .error("cancel: call it as session:cancel()") }
                session.cancel()
                lua_pushboolean(L, 1)
                return .values(1)
            }),
            ("state", { [weak self] vm, L in
                guard let session = self.flatMap({ _ in session(L, "state") }) else { return .error("state: call it as session:state()") }
                vm.push(L, session.state.rawValue)
                return .values(1)
            }),
        ])

        luaL_newmetatable(L, "wr.decision")
        vm.push(L, "wr.decision")
        lua_setfield(L, -2, "__metatable")
        clua_pop(L, 1)
        _ = environment
    }

    // MARK: the wr table of one flow

    func installWR(in context: FlowContext) {
        let L = vm.L
        let options = self.options
        let objects = self.objects
        let clock = options.environment.clock
        let logger = context.logger
        let sink = actionSink

        var functions: [(String, HostFunction)] = []
        functions.append(("open", { [weak self] vm, L in
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
                let provider = try options.registry.makeProvider(vendor: vendor, configuration: config, environment: options.environment)
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
        }))
        functions.append(("on", { vm, L in
            guard let name = vm.string(L, 1) else { return .error("wr.on: expected an event name such as \"progress\" or \"*\"") }
            let event: String
            if name == "*" {
                event = "*"
            } else if let known = LuaEventNames.listenerAliases[name] {
                event = known.rawValue
            } else {
                return .error("wr.on: unknown event \"\(name)\"; expected one of progress, queue_opened, success, disabled, block, error, close, restart, complete, key_returned_late, connection, queue_page_changed, user_exited, state or \"*\"")
            }
            guard clua_isfunction(L, 2) != 0 else { return .error("wr.on: expected a function as the second argument") }
            lua_pushvalue(L, 2)
            let ref = clua_ref(L)
            let id = context.nextListenerID
            context.nextListenerID += 1
            context.listeners.append((id, event, ref))
            lua_pushinteger(L, lua_Integer(id))
            return .values(1)
        }))
        functions.append(("off", { vm, L in
            guard let id = vm.integer(L, 1) else { return .error("wr.off: expected the id wr.on returned") }
            guard let index = context.listeners.firstIndex(where: { $0.id == id }) else {
                lua_pushboolean(L, 0)
                return .values(1)
            }
            clua_unref(L, context.listeners[index].ref)
            context.listeners.remove(at: index)
            lua_pushboolean(L, 1)
            return .values(1)
        }))
        functions.append(("sleep", { vm, L in
            guard let seconds = vm.number(L, 1), seconds >= 0, seconds.isFinite else {
                return .error("wr.sleep: expected a number of seconds >= 0")
            }
            return .await(PendingOperation({ () async -> Bool in
                do {
                    try await clock.sleep(for: .saturating(seconds: seconds))
                    return true
                } catch {
                    return false
                }
            }, deliver: { vm, L, slept in
                if slept {
                    lua_pushboolean(L, 1)
                    return 1
                }
                lua_pushnil(L)
                vm.push(L, "cancelled")
                return 2
            }))
        }))
        functions.append(("log", { vm, L in
            // the level comes first and is named: `wr.log()` logged an empty line and `wr.log(5)` dropped the 5
            guard let levelName = vm.string(L, 1) else {
                return .error("wr.log: the first argument is the level (trace, debug, info, notice, warning, error or critical), not a \(String(cString: clua_typename_at(L, 1)))")
            }
            guard let level = Logger.Level(rawValue: levelName) else {
                return .error("wr.log: unknown level \"\(levelName)\"; expected trace, debug, info, notice, warning, error or critical")
            }
            logger.log(level: level, "\(vm.joinArguments(L, from: 2))")
            return .values(0)
        }))
        functions.append(("emit", { vm, L in
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
        }))
        functions.append(("now", { vm, L in
            lua_pushnumber(L, clock.now().timeIntervalSince1970)
            return .values(1)
        }))
        let transport = options.environment.transport
        functions.append(("http", { vm, L in
            guard lua_type(L, 1) == LUA_TTABLE else {
                return .error("wr.http: expected a request table { url = ..., method = ..., headers = {...}, body = ..., timeout = seconds }")
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
            let request = HTTPRequest(method: method, url: url, headers: headers, body: body, timeout: timeout.map { .saturating(seconds: $0) } ?? .seconds(10), followRedirects: follow)
            return .await(PendingOperation({ await capture { try await transport.send(request) } }, deliver: { vm, L, result in
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
        }))
        func decision(_ kind: String) -> HostFunction {
            return { vm, L in
                var after: Double?
                var reason: String?
                if kind == "retry" {
                    // `after` is a number or absent (0): `after = "x"` was taken for 0 without a word
                    let afterType: Int32
                    if lua_type(L, 1) == LUA_TTABLE {
                        afterType = vm.pushField(L, 1, "after")
                        clua_pop(L, 1)
                        after = vm.numberField(L, 1, "after")
                        reason = vm.stringField(L, 1, "reason")
                    } else {
                        afterType = lua_type(L, 1)
                        after = vm.number(L, 1)
                    }
                    guard afterType == LUA_TNIL || afterType == LUA_TNONE || afterType == LUA_TNUMBER else {
                        return .error("wr.retry: 'after' must be a number of seconds >= 0")
                    }
                    if let value = after, value < 0 || !value.isFinite {
                        return .error("wr.retry: 'after' must be a number of seconds >= 0")
                    }
                } else {
                    // a reason is text or absent: `wr.bypass(5)` and `wr.abort({})` gave an empty one without a word
                    let type = lua_type(L, 1)
                    guard type == LUA_TSTRING || type == LUA_TNIL || type == LUA_TNONE else {
                        return .error("wr.\(kind): 'reason' must be a string, not a \(String(cString: clua_typename_at(L, 1)))")
                    }
                    reason = vm.string(L, 1)
                }
                lua_createtable(L, 0, 3)
                vm.setField(L, "decision", kind)
                vm.setField(L, "after", after ?? (kind == "retry" ? 0 : nil))
                vm.setField(L, "reason", reason)
                luaL_setmetatable(L, "wr.decision")
                return .values(1)
            }
        }
        functions.append(("retry", decision("retry")))
        functions.append(("bypass", decision("bypass")))
        functions.append(("abort", decision("abort")))

        let encodeID = vm.register { vm, L in
            switch vm.json(L, 1) {
            case .success(let value):
                vm.push(L, value.jsonText)
                return .values(1)
            case .failure(let error):
                lua_pushnil(L)
                vm.push(L, error.message)
                return .values(2)
            }
        }
        let decodeID = vm.register { vm, L in
            guard let text = vm.string(L, 1) else { return .error("wr.json.decode: expected a string") }
            do {
                let value = try JSONValue.parse(text)
                guard vm.push(L, json: value) else {
                    clua_pop(L, 1)
                    lua_pushnil(L)
                    vm.push(L, "invalid JSON: nested too deeply (the Lua stack cannot grow)")
                    return .values(2)
                }
                return .values(1)
            } catch {
                lua_pushnil(L)
                vm.push(L, "invalid JSON: \(error)")
                return .values(2)
            }
        }

        // wr = { ... } in the flow's global table
        _ = clua_getref(L, context.env)
        lua_createtable(L, 0, Int32(functions.count + 1))
        for (name, function) in functions {
            clua_pushhost(L, vm.register(function))
            lua_setfield(L, -2, name)
        }
        lua_createtable(L, 0, 3)
        clua_pushhost(L, encodeID)
        lua_setfield(L, -2, "encode")
        clua_pushhost(L, decodeID)
        lua_setfield(L, -2, "decode")
        lua_pushlightuserdata(L, clua_json_null())
        lua_setfield(L, -2, "null")
        lua_setfield(L, -2, "json")
        vm.push(L, "1.0")
        lua_setfield(L, -2, "version")
        lua_setfield(L, -2, "wr")
        clua_pop(L, 1)
    }
}

extension LuaVM {
    /// An `Entry` from the Lua table at `index`: `scope`, `room` (strings, required), `control`
    /// ("basic" | "section"), `token` (enqueue token) or `key` (enqueue key), `user_id`,
    /// `attributes` (string → string).
    func entry(_ L: OpaquePointer, _ index: Int32) -> Result<Entry, LuaError> {
        guard lua_type(L, index) == LUA_TTABLE else {
            return .failure(LuaError(kind: .runtime, message: "expected an entry table { scope = ..., room = ... }, got \(String(cString: clua_typename_at(L, index)))"))
        }
        guard let scope = stringField(L, index, "scope"), !scope.isEmpty else {
            return .failure(LuaError(kind: .runtime, message: "entry.scope: expected a non-empty string (NetFUNNEL projectKey, Queue-it customerId)"))
        }
        guard let room = stringField(L, index, "room"), !room.isEmpty else {
            return .failure(LuaError(kind: .runtime, message: "entry.room: expected a non-empty string (NetFUNNEL segmentKey, Queue-it waitingRoomId)"))
        }
        let controlName = stringField(L, index, "control") ?? "basic"
        guard let control = ControlMode(rawValue: controlName) else {
            return .failure(LuaError(kind: .runtime, message: "entry.control: expected \"basic\" or \"section\", got \"\(controlName)\""))
        }
        var credential: Credential?
        if let token = stringField(L, index, "token") { credential = .enqueueToken(token) }
        if let key = stringField(L, index, "key") { credential = .enqueueKey(key) }
        let userID = stringField(L, index, "user_id") ?? stringField(L, index, "userId")
        var attributes: [String: String] = [:]
        if pushField(L, index, "attributes") == LUA_TTABLE {
            if case .success(.object(let fields)) = json(L, -1, path: "entry.attributes") {
                for (key, value) in fields {
                    switch value {
                    case .string(let s): attributes[key] = s
                    case .number, .bool: attributes[key] = value.jsonText
                    default: break
                    }
                }
            }
        }
        clua_pop(L, 1)
        return .success(Entry(room: RoomKey(scope: scope, room: room), control: control, credential: credential, userId: userID, attributes: attributes))
    }

    func push(_ L: OpaquePointer, status: VendorStatus) {
        lua_createtable(L, 0, 3)
        setField(L, "vendor", status.vendor)
        setField(L, "code", status.code)
        setField(L, "message", status.message)
    }

    /// A `try_pass` answer; `handle` (a key held on the flow's behalf) becomes `pass.handle`,
    /// which `room:release` takes.
    func push(_ L: OpaquePointer, tryPass result: TryPassResult, handle: Int64? = nil) {
        lua_createtable(L, 0, 8)
        setField(L, "disposition", result.disposition.rawValue)
        setField(L, "vendor", result.status.vendor)
        setField(L, "code", result.status.code)
        setField(L, "message", result.status.message)
        if let pass = result.pass {
            var fields = pass.fields(revealSecrets: true)
            if let handle { fields["handle"] = .number(Double(handle)) }
            push(L, json: .object(fields))
            lua_setfield(L, -2, "pass")
        }
        if let page = result.queuePage {
            setField(L, "queue_url", page.queueURL)
            setField(L, "target_url", page.targetURL)
        }
        if let progress = result.progress {
            setField(L, "ahead", progress.ahead)
            setField(L, "behind", progress.behind)
            if let eta = progress.eta { setField(L, "eta", eta.seconds) }
            setField(L, "eta_text", progress.etaText)
            setField(L, "percent", progress.percent)
        }
    }
}
