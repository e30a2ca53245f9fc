import CrowdHandler
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import WaitingRoom
import WaitingRoomEmulatorKit

/// A local emulator of CrowdHandler's public API and waiting room.
///
/// Routes (see `Vendors/CrowdHandler/README.md`):
/// - `POST /v1/requests`, `GET /v1/requests/{token}`, `PUT /v1/responses/{responseID}`, `GET /v1/rooms`
///   (header `x-api-key`; answers wrapped as `{"result": …}`)
/// - `GET /{slug}` — the live waiting page; `GET /site/**` — a stand-in for the protected site
/// - admin under `/_emulator/crowdhandler/`: the kit's `state`, `reset`, `faults` (GET, POST, DELETE;
///   ``EmulatedVendor``), and `rooms/{slug}` (POST settings; keys not given keep their values),
///   `rooms/{slug}/admit` (POST `{"count"}`)
package final class CrowdHandlerEmulator: EmulatedVendor, Sendable {
    let model: CrowdHandlerEmulatorModel
    package let configuration: CrowdHandlerEmulatorConfiguration

    /// - Parameter now: the time source (a virtual clock's `now()` in tests).
    package init(configuration: CrowdHandlerEmulatorConfiguration = .demo, now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        model = CrowdHandlerEmulatorModel(configuration: configuration, now: now)
    }

    static func response(_ status: Int, _ json: JSONValue) -> Response {
        response(status, Array(json.jsonText.utf8), type: "application/json")
    }

    static func response(_ status: Int, _ body: [UInt8], type: String) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = type
        fields[.cacheControl] = "no-store"
        return Response(status: .init(code: status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: body)))
    }

    static func key(_ req: Request) -> String? {
        guard let name = HTTPField.Name("x-api-key") else { return nil }
        return req.headers[name]
    }

    static func base(_ req: Request) -> String { "http://\(req.head.authority ?? "127.0.0.1")" }

    /// Reads a JSON or form body into fields.
    static func fields(_ req: Request) async -> [String: String] {
        guard let buf = try? await EmulatorHTTP.body(req, upTo: 64 * 1024) else { return [:] }
        let bytes = Array(buf.readableBytesView)
        if let json = try? JSONValue.parse(Data(bytes)), let o = json.objectValue {
            return o.compactMapValues { $0.stringValue ?? ($0 == .null ? nil : $0.jsonText) }
        }
        var out: [String: String] = [:]
        for pair in String(decoding: bytes, as: UTF8.self).split(separator: "&") {
            let kv = pair.split(separator: "=", maxSplits: 1).map {
                String($0).replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? String($0)
            }
            if kv.count == 2 { out[kv[0]] = kv[1] }
        }
        return out
    }

    // MARK: EmulatedVendor

    package static var vendorID: String { CrowdHandlerConfiguration.vendorID }
    package var faultQueue: EmulatorFaultQueue { model.faults }
    package var faultVocabulary: EmulatorFaultVocabulary { CrowdHandlerEmulatorFault.vocabulary }
    /// `POST` and `GET /v1/requests`.
    package var chaosKinds: [String] {
        [CrowdHandlerEmulatorFault.Target.requestsPost.rawValue, CrowdHandlerEmulatorFault.Target.requestsGet.rawValue]
    }
    package func stateJSON() -> JSONValue { model.snapshot() }

    /// Rooms are their slug.
    package var roomPathArity: Int { 1 }

    /// Changes a room's settings: keys not given keep their values, a key given as null goes
    /// back to its default.
    package func updateRoom(_ path: [String], with patch: JSONValue) throws -> JSONValue {
        let slug = path[0]
        guard let given = patch.objectValue else {
            throw WaitingRoomError.invalidConfiguration(field: "body", "expected a room object", vendor: Self.vendorID)
        }
        guard let current = model.room(slug: slug), case .object(var merged) = current.json else {
            throw EmulatorRoomError.unknownRoom(slug)
        }
        for (k, v) in given { merged[k] = v == .null ? nil : v }
        let c = try CrowdHandlerEmulatorConfiguration(
            json: .object(["rooms": .object([slug: .object(merged)])]), path: "room",
            now: model.now())
        guard let room = c.rooms[slug], model.update(slug: slug, room) else { throw EmulatorRoomError.unknownRoom(slug) }
        return .object(["updated": .string(slug)])
    }

    /// Lets `count` users in from the head of the room's line.
    package func admit(_ path: [String], count: Int) throws -> Int {
        guard let admitted = model.admit(slug: path[0], count: count) else { throw EmulatorRoomError.unknownRoom(path[0]) }
        return admitted
    }

    /// The response an injected fault gives a request of kind `target` instead of the API's, or
    /// nil to answer normally (also after a `delay`).
    func faulted(_ target: CrowdHandlerEmulatorFault.Target) async -> Response? {
        guard let fault = model.takeFault(for: target) else { return nil }
        return await EmulatorHTTP.apply(
            fault, errorPage: { ("<html><body>injected \($0)</body></html>", "text/html") },
            garbage: { ("<html><body>Service temporarily unavailable</body></html>", "text/html") })
    }

    /// Adds every CrowdHandler route to `router`.
    package func addRoutes(to router: Router<BasicRequestContext>) {
        router.post("/v1/requests") { [self] req, _ in
            if let r = await faulted(.requestsPost) { return r }
            let f = await Self.fields(req)
            let a = model.check(key: Self.key(req), token: nil, url: f["url"])
            return Self.response(a.status, a.json)
        }
        router.get("/v1/requests/:token") { [self] req, ctx in
            if let r = await faulted(.requestsGet) { return r }
            let url = req.uri.queryParameters["url"].map(String.init)
            let a = model.check(key: Self.key(req), token: ctx.parameters.get("token") ?? "", url: url)
            return Self.response(a.status, a.json)
        }
        router.put("/v1/responses/:id") { [self] req, ctx in
            if let r = await faulted(.responses) { return r }
            let buf = try? await EmulatorHTTP.body(req, upTo: 64 * 1024)
            let body = buf.flatMap { try? JSONValue.parse(Data($0.readableBytesView)) }
            let a = model.recordResponse(key: Self.key(req), id: ctx.parameters.get("id") ?? "", body: body)
            return Self.response(a.status, a.json)
        }
        router.get("/v1/rooms") { [self] req, _ in
            if let r = await faulted(.rooms) { return r }
            let a = model.rooms(key: Self.key(req), base: Self.base(req))
            return Self.response(a.status, a.json)
        }
        router.get("/site/**") { req, _ in
            let token = req.uri.queryParameters["ch-id"].map(String.init)
            return Self.response(
                200, Array(CrowdHandlerWaitingPageHTML.site(path: req.uri.path, token: token).utf8), type: "text/html; charset=utf-8")
        }
        // The parameter is named like Queue-it's `/:prefix/…` routes: a router node has one
        // parameter name, and the combined emulator serves both vendors on one router.
        router.get("/:prefix") { [self] _, ctx in
            let slug = ctx.parameters.get("prefix") ?? ""
            guard configuration.rooms[slug] != nil || model.state.withLockedValue({ $0.rooms[slug] != nil }) else {
                return Self.response(
                    404, Array("<html><body>No waiting room \(CrowdHandlerWaitingPageHTML.escape(slug))</body></html>".utf8),
                    type: "text/html")
            }
            let message = model.room(slug: slug)?.message ?? configuration.rooms[slug]?.message ?? ""
            return Self.response(
                200, Array(CrowdHandlerWaitingPageHTML.page(slug: slug, message: message).utf8), type: "text/html; charset=utf-8")
        }
        // Admin: the kit's state, reset and faults; CrowdHandler's rooms.
        addAdminRoutes(to: router)
    }

    // MARK: Swift admin API (the same as the admin routes)

    /// Injects a fault (CrowdHandler's older form; ``EmulatorFaultQueue/add(_:)`` takes the kit's).
    package func inject(_ fault: CrowdHandlerEmulatorFault) { model.faults.add(fault.emulatorFault) }
    /// Removes every fault not used yet.
    package func clearFaults() { model.faults.clear() }
    /// Forgets sessions, responses, counters and faults.
    package func reset() { model.reset() }
    /// Lets `count` users in from the head of `slug`'s line; how many were let in (nil: no such room).
    @discardableResult package func admit(slug: String, count: Int) -> Int? { model.admit(slug: slug, count: count) }
    /// Replaces a room's settings.
    @discardableResult package func update(slug: String, _ room: CrowdHandlerEmulatorConfiguration.Room) -> Bool {
        model.update(slug: slug, room)
    }
    /// The counters now.
    package var counters: CrowdHandlerEmulatorCounters { model.counters }
    /// Users in line, per room.
    package func waiting() -> [String: Int] { model.waiting() }
    /// The state as JSON (what `GET /_emulator/crowdhandler/state` answers).
    package func snapshot() -> JSONValue { model.snapshot() }
}
