import Cloudflare
import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import WaitingRoom
import WaitingRoomEmulatorKit

/// A local emulator of a site behind Cloudflare Waiting Room, JSON mode included.
///
/// Routes (see `Vendors/Cloudflare/README.md`):
/// - `GET|POST /cf/**` — the protected site: a request carrying `Accept: application/json`
///   (exactly) and the `__cfwaitingroom` cookie gets a `cfWaitingRoom` reply while queued, the
///   stand-in origin's response once let in (`?revoke=1` makes the origin send
///   `Cf-Waiting-Room-Command: revoke`); any other request gets the HTML waiting page.
/// - `/client/v4/zones/{zone}/waiting_rooms…` — the management API in Cloudflare's v4 shape
///   (rooms, events, status, page preview; `CloudflareManagementAPI.swift`).
/// - admin under `/_emulator/cloudflare/`: the kit's `state`, `reset`, `faults`, and
///   `rooms/{name}` (POST settings by their API names) and `rooms/{name}/admit`.
package final class CloudflareEmulator: EmulatedVendor, Sendable {
    let model: CloudflareEmulatorModel
    package let configuration: CloudflareEmulatorConfiguration

    /// The path the protected site is served under.
    package static let sitePrefix = "/cf"

    /// - Parameter now: the time source (a virtual clock's `now()` in tests).
    package init(configuration: CloudflareEmulatorConfiguration = .demo, now: @escaping @Sendable () -> Date = { Date() }) {
        self.configuration = configuration
        model = CloudflareEmulatorModel(configuration: configuration, now: now)
    }

    static func response(_ a: CloudflareEmulatorAnswer) -> Response {
        var fields = HTTPFields()
        fields[.contentType] = a.contentType
        fields[.cacheControl] = "no-store"
        for (name, value) in a.headers {
            if let n = HTTPField.Name(name) { fields.append(HTTPField(name: n, value: value)) }
        }
        return Response(status: .init(code: a.status), headers: fields, body: .init(byteBuffer: ByteBuffer(bytes: a.body)))
    }

    /// The response an injected fault gives a request of kind `target`, or nil to answer normally.
    func faulted(_ target: String) async -> Response? {
        guard let fault = model.takeFault(for: target) else { return nil }
        if case .vendor(CloudflareEmulatorFault.overshoot, let percent) = fault.action {
            // not an answer of its own: the rooms admit above their rate for a while
            model.startOvershoot(percent: percent ?? 100, seconds: CloudflareEmulatorFault.window(of: fault))
            return nil
        }
        return await EmulatorHTTP.apply(
            fault, errorPage: { ("<html><body>injected \($0)</body></html>", "text/html") },
            garbage: { (CloudflareEmulatorFault.garbage, "application/json") })
    }

    func site(_ req: Request) async -> Response {
        if let r = await faulted(CloudflareEmulatorFault.page) { return r }
        let full = req.uri.path
        let path = full.hasPrefix(Self.sitePrefix) ? String(full.dropFirst(Self.sitePrefix.count)) : full
        var q = CloudflareEmulatorRequest(path: path.isEmpty ? "/" : path)
        for (k, v) in req.uri.queryParameters { q.query[String(k)] = String(v) }
        q.rawQuery = req.uri.query ?? ""
        q.method = req.method.rawValue
        q.headers = req.headers.map { (name: $0.name.canonicalName, value: $0.value) }
        let authority = req.head.authority
        q.host = authority.map { Self.hostName($0) }
        // the kit's request context does not carry the peer's address: `ip.src` is the
        // `CF-Connecting-IP` header the test or tool sends (proposal), unknown without it
        q.clientIP = q.header("cf-connecting-ip")?.trimmingCharacters(in: .whitespaces)
        return Self.response(model.request(q))
    }

    /// A `Host` value without its port, lowercased (`[::1]:8080` → `::1`).
    static func hostName(_ authority: String) -> String {
        var h = Substring(authority.lowercased())
        if h.hasPrefix("[") {
            if let close = h.firstIndex(of: "]") { return String(h[h.index(after: h.startIndex)..<close]) }
            return String(h)
        }
        if let colon = h.lastIndex(of: ":") { h = h[..<colon] }
        return String(h)
    }

    /// Adds every Cloudflare route to `router`.
    package func addRoutes(to router: Router<BasicRequestContext>) {
        router.get("\(Self.sitePrefix)/**") { [self] req, _ in await site(req) }
        router.post("\(Self.sitePrefix)/**") { [self] req, _ in await site(req) }
        addManagementRoutes(to: router)
        addAdminRoutes(to: router)
    }

    // MARK: EmulatedVendor

    package static var vendorID: String { CloudflareConfiguration.vendorID }
    package var faultQueue: EmulatorFaultQueue { model.faults }
    package var faultVocabulary: EmulatorFaultVocabulary { CloudflareEmulatorFault.vocabulary }
    /// The protected site's requests.
    package var chaosKinds: [String] { [CloudflareEmulatorFault.page] }
    package func stateJSON() -> JSONValue { model.snapshot() }
    /// Rooms are their name.
    package var roomPathArity: Int { 1 }

    /// Changes a room's settings by their API names: keys not given keep their values, a key
    /// given as null goes back to its default; relative event times (`"+SECONDS"`) count from the
    /// emulator's clock now.
    package func updateRoom(_ path: [String], with patch: JSONValue) throws -> JSONValue {
        let name = path[0]
        guard let given = patch.objectValue else {
            throw WaitingRoomError.invalidConfiguration(field: "body", "expected a room object", vendor: Self.vendorID)
        }
        guard let current = model.room(named: name), case .object(var merged) = current.json else {
            throw EmulatorRoomError.unknownRoom(name)
        }
        for (k, v) in given { merged[k] = v == .null ? nil : v }
        let room = try CloudflareEmulatorConfiguration.room(.object(merged), path: "room", now: model.now())
        guard model.update(room: name, room) else { throw EmulatorRoomError.unknownRoom(name) }
        return .object(["updated": .string(name)])
    }

    /// Lets `count` visitors in from the head of the room's line.
    package func admit(_ path: [String], count: Int) throws -> Int {
        guard let n = model.admit(room: path[0], count: count) else { throw EmulatorRoomError.unknownRoom(path[0]) }
        return n
    }

    // MARK: Swift admin API (the same as the admin routes)

    /// Forgets visitors, sessions, counters and faults.
    package func reset() { model.reset() }
    /// Lets `count` visitors in from the head of `room`'s line; how many (nil: no such room).
    @discardableResult package func admit(room: String, count: Int) -> Int? { model.admit(room: room, count: count) }
    /// Replaces a room's settings.
    @discardableResult package func update(room name: String, _ room: CloudflareEmulatorConfiguration.Room) -> Bool {
        model.update(room: name, room)
    }
    /// A room's settings now.
    package func room(named name: String) -> CloudflareEmulatorConfiguration.Room? { model.room(named: name) }
    /// The counters now.
    package var counters: CloudflareEmulatorCounters { model.counters }
    /// Visitors waiting (line and pre-queue), per room.
    package func waiting() -> [String: Int] { model.waiting() }
    /// Active sessions, per room.
    package func active() -> [String: Int] { model.active() }
    /// The status API's document for `room` (nil: no such room).
    package func status(room: String) -> JSONValue? { model.status(room: room) }
    /// The state as JSON (what `GET /_emulator/cloudflare/state` answers).
    package func snapshot() -> JSONValue { model.snapshot() }
}
