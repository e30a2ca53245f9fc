import CLua
import CLuaShim
import Foundation
import Logging
import WaitingRoom

extension LuaVM {
    /// An `Entry` from the Lua table at `index`: `scope`, `room` (strings, required), `control`
    /// ("basic" | "section"), `token` (enqueue token) or `key` (enqueue key), `user_id`,
    /// `attributes` (string → string).
    func entry(_ L: OpaquePointer, _ index: Int32) -> Result<Entry, LuaError> {
        guard lua_type(L, index) == LUA_TTABLE else {
            return .failure(
                LuaError(
                    kind: .runtime,
                    message: "expected an entry table { scope = ..., room = ... }, got \(String(cString: clua_typename_at(L, index)))"))
        }
        guard let scope = stringField(L, index, "scope"), !scope.isEmpty else {
            return .failure(
                LuaError(kind: .runtime, message: "entry.scope: expected a non-empty string (NetFUNNEL projectKey, Queue-it customerId)"))
        }
        guard let room = stringField(L, index, "room"), !room.isEmpty else {
            return .failure(
                LuaError(kind: .runtime, message: "entry.room: expected a non-empty string (NetFUNNEL segmentKey, Queue-it waitingRoomId)"))
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
        return .success(
            Entry(room: RoomKey(scope: scope, room: room), control: control, credential: credential, userId: userID, attributes: attributes)
        )
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
