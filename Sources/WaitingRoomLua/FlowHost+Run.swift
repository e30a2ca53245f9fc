import CLua
import CLuaShim
import Foundation
import Logging
import WaitingRoom

/// What a flow table gives (each may instead come from `FlowOptions`).
package struct FlowSpec {
    var entry: Entry?
    var vendor: String?
    var config: JSONValue?
    var maxRetries: Int?
    var autoComplete: Bool?
}

extension FlowContext {
    /// The flow's file or name, for messages.
    var displayName: String {
        chunkName.hasPrefix("@") || chunkName.hasPrefix("=") ? String(chunkName.dropFirst()) : chunkName
    }
}

extension FlowHost {
    /// Run the flow's chunk, read its table, run the entry, dispatch every event, apply decisions;
    /// then give back every key the flow still holds, however it ended (finished, a Lua error,
    /// an abort, a cancelled task).
    func run(_ context: FlowContext, on runtime: isolated FlowRuntime) async -> FlowResult {
        var result = await runFlow(context, on: runtime)
        result.keysReturnedByHost = await giveBackKeys(of: context, on: runtime)
        result.actions = context.actions
        return result
    }

    /// Gives back the keys flow `context` still holds: passes from `room:try_pass` without
    /// `room:release`, and sessions it started with `room:enqueue` that passed and were not
    /// completed (completed) or are still waiting (cancelled, which returns a waiting key).
    /// Each is counted and reported as a `key_returned` action (and, for a `try_pass` key, a
    /// `completed` event to ``FlowOptions/eventObserver``). The returns run in tasks of their
    /// own, so a cancelled flow still gives its keys back.
    func giveBackKeys(of context: FlowContext, on runtime: isolated FlowRuntime) async -> Int {
        var count = 0
        for held in objects.held.takeAll(context: context.id) {
            let status = await Self.ownTask { await Self.release(held) }.value
            report(status, pass: held.pass, reason: "try_pass key not released", in: context)
            options.eventObserver?(
                context.name,
                .completed(
                    VendorStatus(
                        vendor: status.vendor, code: status.code,
                        message: "returned by the flow host (the flow ended holding it): \(status.message)")))
            count += 1
        }
        let started = objects.enqueuedBy.filter { $0.value == context.id }.keys.sorted()
        for id in started {
            objects.enqueuedBy[id] = nil
            guard let session = objects.sessions[id] else { continue }
            if let pass = session.currentOutcome?.pass, pass.requiresCompletion, session.state == .passed || session.state == .disabled {
                let status = await Self.ownTask { () -> VendorStatus in
                    do { return try await session.complete() } catch { return Self.status(of: error, vendor: session.vendorID) }
                }.value
                report(status, pass: pass, reason: "session passed and not completed", in: context)
                count += 1
            } else if !session.state.hasOutcome {
                session.cancel()
                let status = await Self.ownTask { await session.outcome().status }.value
                report(status, pass: nil, room: session.entry.room, reason: "session still waiting", in: context)
                count += 1
            }
        }
        if count > 0 { context.logger.notice("the flow ended holding \(count) key(s); the host gave them back") }
        return count
    }

    /// Runs `body` in a task of its own: not cancelled with the flow's task.
    static func ownTask(_ body: @escaping @Sendable () async -> VendorStatus) -> Task<VendorStatus, Never> {
        Task.detached { await body() }
    }

    /// Returns one `try_pass` key; a failure is a status, not an error (the vendor keeps
    /// retrying a failed return in the background, see ``PendingReturns``).
    static func release(_ held: HeldKeys.Held) async -> VendorStatus {
        do { return try await held.provider.release(held.pass) } catch { return status(of: error, vendor: held.pass.vendor) }
    }

    static func status(of error: any Error, vendor: String) -> VendorStatus {
        (error as? WaitingRoomError)?.status ?? VendorStatus(vendor: vendor, code: 0, message: "\(error)")
    }

    /// A `key_returned` action on the flow's actions and the runtime's `actions` stream.
    private func report(_ status: VendorStatus, pass: Pass?, room: RoomKey? = nil, reason: String, in context: FlowContext) {
        let key = pass?.room ?? room
        let action = FlowAction(
            flow: context.name, name: "key_returned",
            payload: .object([
                "vendor": .string(status.vendor), "scope": .string(key?.scope ?? ""), "room": .string(key?.room ?? ""),
                "code": .number(Double(status.code)), "message": .string(status.message), "reason": .string(reason)
            ]))
        context.actions.append(action)
        actionSink.yield(action)
    }

    private func runFlow(_ context: FlowContext, on runtime: isolated FlowRuntime) async -> FlowResult {
        var result = FlowResult(
            outcome: .flowError(LuaError(kind: .invalidFlow, message: "not run")), actions: [], attempts: 0, handlerErrors: [],
            completion: nil)
        defer { _ = result }
        let spec: FlowSpec
        switch await loadSpec(context, on: runtime) {
        case .success(let value): spec = value
        case .failure(let error):
            result.outcome = .flowError(error)
            result.actions = context.actions
            return result
        }
        let file = context.displayName
        guard let vendor = options.vendor ?? spec.vendor else {
            result.outcome = .flowError(
                LuaError(
                    kind: .invalidFlow,
                    message:
                        "\(file): no vendor: the flow table has no 'vendor' field and the host gave none; expected one of \(options.registry.vendorIDs.joined(separator: ", "))"
                ))
            return result
        }
        guard let entry = options.entry ?? spec.entry else {
            result.outcome = .flowError(
                LuaError(
                    kind: .invalidFlow,
                    message: "\(file): no entry: the flow table has no 'entry' field ({ scope = ..., room = ... }) and the host gave none"))
            return result
        }
        let config: JSONValue
        switch (options.config, spec.config) {
        case (.object(let host)?, .object(let flow)?):
            // host keys win, the flow's other keys stay (e.g. --emulator only sets serverUrl)
            config = .object(flow.merging(host) { _, hostValue in hostValue })
        case (let host?, _): config = host
        case (nil, let flow?): config = flow
        case (nil, nil): config = .object([:])
        }
        let provider: any WaitingRoomProvider
        do {
            provider = try options.registry.makeProvider(vendor: vendor, configuration: config, environment: options.environment)
        } catch {
            result.outcome = .flowError(LuaError(kind: .invalidFlow, message: "\(file): vendor '\(vendor)': \(error)"))
            return result
        }
        publish(vendor: vendor, config: options.registry.configuration(vendor: vendor, given: config), entry: entry, in: context)
        let maxRetries = max(0, spec.maxRetries ?? options.maxRetries)
        let autoComplete = spec.autoComplete ?? options.autoComplete

        while true {
            result.attempts += 1
            let attempt = await runAttempt(
                entry: entry, provider: provider, context: context, autoComplete: autoComplete, result: &result, on: runtime)
            switch attempt.decision {
            case .retry(let after)?:
                if result.attempts <= maxRetries {
                    context.logger.info("retrying in \(after) s (retry \(result.attempts) of \(maxRetries))")
                    do {
                        try await options.environment.clock.sleep(for: .saturating(seconds: after))
                        continue
                    } catch {
                        result.outcome = attempt.outcome.map { .vendor($0) } ?? .aborted(reason: "cancelled", after: nil)
                    }
                } else {
                    context.logger.warning("retry limit reached (\(maxRetries)); the outcome stands")
                    result.outcome = attempt.outcome.map { .vendor($0) } ?? .aborted(reason: "retry limit reached", after: nil)
                }
            case .bypass(let reason)?:
                result.outcome = .bypassed(reason: reason, after: attempt.outcome)
            case .abort(let reason)?:
                result.outcome = .aborted(reason: reason, after: attempt.outcome)
            case nil:
                result.outcome = attempt.outcome.map { .vendor($0) } ?? .aborted(reason: "cancelled", after: nil)
            }
            result.actions = context.actions
            return result
        }
    }

    /// One enqueue: returns the outcome and the decision that ends the attempt.
    private func runAttempt(
        entry: Entry, provider: any WaitingRoomProvider, context: FlowContext, autoComplete: Bool,
        result: inout FlowResult, on runtime: isolated FlowRuntime
    ) async -> (outcome: Outcome?, decision: FlowDecision?) {
        let session: WaitingSession
        do {
            session = try provider.enqueue(entry)
        } catch {
            let failure = (error as? WaitingRoomError) ?? WaitingRoomError(.invalidUse, message: "\(error)")
            let event = WaitingRoomEvent.failed(failure)
            options.eventObserver?(context.name, event)
            let (decision, errors) = await dispatch(event, session: nil, to: context, useHandler: true, on: runtime)
            result.handlerErrors += errors
            return (.failed(failure), decision)
        }
        // The operation names `runtime`, so it runs on the runtime's actor. (A closure that does not
        // capture the isolated parameter runs on the global executor, and `#isolation` inside it is
        // nil: that is how the flow loop once ran off the actor and raced other flows on one lua_State.)
        return await withTaskCancellationHandler {
            await drive(session, context: context, autoComplete: autoComplete, result: &result, on: runtime)
        } onCancel: {
            session.cancel()
        }
    }

    private func drive(
        _ session: WaitingSession, context: FlowContext, autoComplete: Bool,
        result: inout FlowResult, on runtime: isolated FlowRuntime
    ) async -> (outcome: Outcome?, decision: FlowDecision?) {
        var outcome: Outcome?
        var endDecision: FlowDecision?
        for await event in session.events {
            options.eventObserver?(context.name, event)
            if case .stateChanged = event {
                if !context.listeners.isEmpty {
                    result.handlerErrors += await dispatch(event, session: session, to: context, useHandler: false, on: runtime).errors
                }
                continue
            }
            let (decision, errors) = await dispatch(event, session: session, to: context, useHandler: true, on: runtime)
            result.handlerErrors += errors
            switch event {
            case .stateChanged, .keyReturnedLate, .connection, .queuePageChanged, .userExited:
                continue
            case .progress, .queueOpened, .sessionRestarted:
                switch decision {
                case .abort?, .bypass?:
                    session.cancel()
                    return (await session.outcome(), decision)
                case .retry?:
                    do { try await session.restart() } catch { context.logger.warning("restart failed: \(error)") }
                case nil:
                    break
                }
            case .passed(let pass, let status):
                outcome = .passed(pass, status)
                if case .abort = decision { endDecision = decision }
                if session.state == .completed { continue }
                if pass.requiresCompletion && (autoComplete || endDecision != nil) {
                    do { _ = try await session.complete() } catch { context.logger.error("returning the key failed: \(error)") }
                    if session.state == .completed { continue }
                }
                return (outcome, endDecision)
            case .disabled(let pass, let status):
                outcome = .disabled(pass, status)
                if case .abort = decision { endDecision = decision }
                if session.state == .completed { continue }
                if pass?.requiresCompletion == true && (autoComplete || endDecision != nil) {
                    do { _ = try await session.complete() } catch { context.logger.error("returning the key failed: \(error)") }
                    if session.state == .completed { continue }
                }
                return (outcome, endDecision)
            case .completed(let status):
                result.completion = status
                return (outcome ?? session.currentOutcome, endDecision)
            case .blocked, .closed, .failed:
                return (session.currentOutcome ?? terminalOutcome(of: event), decision)
            }
        }
        return (outcome ?? session.currentOutcome, endDecision)
    }

    /// Make the resolved vendor, config and entry visible to handlers as `wr.vendor`,
    /// `wr.config` and `wr.entry` (host-given values included).
    private func publish(vendor: String, config: JSONValue, entry: Entry, in context: FlowContext) {
        let L = vm.L
        _ = clua_getref(L, context.env)
        vm.pushField(L, -1, "wr")
        if lua_type(L, -1) == LUA_TTABLE {
            vm.setField(L, "vendor", vendor)
            vm.push(L, json: config)
            lua_setfield(L, -2, "config")
            lua_createtable(L, 0, 6)
            vm.setField(L, "scope", entry.room.scope)
            vm.setField(L, "room", entry.room.room)
            vm.setField(L, "control", entry.control.rawValue)
            vm.setField(L, "user_id", entry.userId)
            switch entry.credential {
            case .enqueueToken(let token)?: vm.setField(L, "token", token)
            case .enqueueKey(let key)?: vm.setField(L, "key", key)
            case nil: break
            }
            lua_setfield(L, -2, "entry")
        }
        clua_pop(L, 2)
    }

    private func terminalOutcome(of event: WaitingRoomEvent) -> Outcome? {
        switch event {
        case .blocked(let status): return .blocked(status)
        case .closed(let status): return .closed(status)
        case .failed(let error): return .failed(error)
        default: return nil
        }
    }

    // MARK: the flow table

    /// Run the chunk and check what it returned (the flow contract).
    package func loadSpec(_ context: FlowContext, on runtime: isolated FlowRuntime) async -> Result<FlowSpec, LuaError> {
        let file = context.displayName
        guard context.chunkRef != LUA_NOREF else {
            return .failure(LuaError(kind: .invalidFlow, message: "\(file): no flow chunk loaded"))
        }
        let co = vm.acquireThread()
        _ = clua_getref(co.thread, context.chunkRef)
        switch await vm.run(co.thread, nargs: 0, on: runtime) {
        case .failed(let error):
            vm.releaseThread(co, finished: false)
            return .failure(error)
        case .finished(let count):
            defer { vm.releaseThread(co) }
            guard count > 0, lua_type(co.thread, -count) == LUA_TTABLE else {
                let got = count > 0 ? "a \(String(cString: clua_typename_at(co.thread, -count))) value" : "nothing"
                return .failure(
                    LuaError(
                        kind: .invalidFlow,
                        message: "\(file): the flow must return a table (entry, vendor, config and on_* handlers); it returned \(got)"))
            }
            return readSpec(co.thread, lua_absindex(co.thread, -count), context: context)
        }
    }

    private func readSpec(_ L: OpaquePointer, _ index: Int32, context: FlowContext) -> Result<FlowSpec, LuaError> {
        let file = context.displayName
        func invalid(_ message: String) -> Result<FlowSpec, LuaError> { Self.invalidFlow(file, message) }
        var spec = FlowSpec()
        let handlers: [String: Int32]
        switch readHandlers(L, index, file: file) {
        case .success(let read): handlers = read
        case .failure(let error): return .failure(error)
        }
        for (_, ref) in context.handlers { clua_unref(L, ref) }
        context.handlers = handlers

        switch lua_type(
            L,
            {
                vm.pushField(L, index, "vendor")
                return -1
            }())
        {
        case LUA_TNIL: break
        case LUA_TSTRING:
            let vendor = vm.string(L, -1) ?? ""
            guard options.registry.vendorIDs.contains(vendor) else {
                clua_pop(L, 1)
                return invalid("unknown vendor '\(vendor)'; expected one of \(options.registry.vendorIDs.joined(separator: ", "))")
            }
            spec.vendor = vendor
        default:
            clua_pop(L, 1)
            return invalid("'vendor' must be a vendor id string (one of \(options.registry.vendorIDs.joined(separator: ", ")))")
        }
        clua_pop(L, 1)

        vm.pushField(L, index, "entry")
        if lua_type(L, -1) != LUA_TNIL {
            switch vm.entry(L, -1) {
            case .success(let entry): spec.entry = entry
            case .failure(let error):
                clua_pop(L, 1)
                return invalid(error.message)
            }
        }
        clua_pop(L, 1)

        vm.pushField(L, index, "config")
        switch lua_type(L, -1) {
        case LUA_TNIL: break
        case LUA_TTABLE:
            switch vm.json(L, -1, path: "config") {
            case .success(let config): spec.config = config
            case .failure(let error):
                clua_pop(L, 1)
                return invalid(error.message)
            }
        default:
            clua_pop(L, 1)
            return invalid("'config' must be a table of vendor options")
        }
        clua_pop(L, 1)

        vm.pushField(L, index, "max_retries")
        if lua_type(L, -1) != LUA_TNIL {
            guard let value = vm.integer(L, -1), value >= 0 else {
                clua_pop(L, 1)
                return invalid("'max_retries' must be an integer >= 0")
            }
            spec.maxRetries = value
        }
        clua_pop(L, 1)

        vm.pushField(L, index, "auto_complete")
        if lua_type(L, -1) == LUA_TBOOLEAN { spec.autoComplete = lua_toboolean(L, -1) != 0 }
        clua_pop(L, 1)
        return .success(spec)
    }

    /// The flow's `on_*` handlers (references into the registry), or why one is not a known
    /// handler function (the references taken so far released).
    private func readHandlers(_ L: OpaquePointer, _ index: Int32, file: String) -> Result<[String: Int32], LuaError> {
        var handlers: [String: Int32] = [:]
        lua_pushnil(L)
        while lua_next(L, index) != 0 {
            defer { clua_pop(L, 1) }
            guard let key = vm.string(L, -2) else { continue }
            guard key.hasPrefix("on_") else { continue }
            var line: Int32?
            if clua_isfunction(L, -1) != 0 {
                var info = lua_Debug()
                lua_pushvalue(L, -1)
                if lua_getinfo(L, ">S", &info) != 0, info.linedefined > 0 { line = info.linedefined }
            }
            guard LuaEventNames.handlerNames.contains(key) else {
                clua_pop(L, 2)
                for ref in handlers.values { clua_unref(L, ref) }
                return Self.invalidFlow(
                    file, "unknown handler '\(key)'; expected one of \(LuaEventNames.handlerNames.joined(separator: ", "))", line: line)
            }
            guard clua_isfunction(L, -1) != 0 else {
                let type = String(cString: clua_typename_at(L, -1))
                clua_pop(L, 2)
                for ref in handlers.values { clua_unref(L, ref) }
                return Self.invalidFlow(file, "'\(key)' must be a function(event, session), got a \(type) value")
            }
            lua_pushvalue(L, -1)
            handlers[key] = clua_ref(L)
        }
        return .success(handlers)
    }

    /// A flow that cannot run: `message` at `file` (and `line`, when known).
    static func invalidFlow<T>(_ file: String, _ message: String, line: Int32? = nil) -> Result<T, LuaError> {
        let place = line.map { "\(file):\($0)" } ?? file
        return .failure(LuaError(kind: .invalidFlow, message: "\(place): \(message)"))
    }
}
