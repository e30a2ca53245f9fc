import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import WaitingRoom
import WaitingRoomEmulatorKit

/// The management API in Cloudflare's v4 shape under ``CloudflareEmulator/apiPrefix``
/// (README "Management API (v4)"), what Cloudflare's own SDKs speak when pointed at
/// `http://HOST:PORT/client/v4`:
///
/// - `GET|POST zones/{zone_id}/waiting_rooms` — list (paged: `page`, `per_page`), create;
/// - `GET|PUT|PATCH|DELETE zones/{zone_id}/waiting_rooms/{waiting_room_id}`;
/// - `POST zones/{zone_id}/waiting_rooms/preview` — a custom page's preview URL;
/// - `GET zones/{zone_id}/waiting_rooms/{waiting_room_id}/status`;
/// - `GET|POST …/{waiting_room_id}/events`, `GET|PUT|PATCH|DELETE …/events/{event_id}`,
///   `GET …/events/{event_id}/details`.
///
/// Every answer is the v4 envelope (``CloudflareV4Envelope``); bad input is a 400 naming each bad
/// field. A room is named by its id or, as before ids existed, by its name (proposal). The zone
/// id is not checked (one zone), nor is any API token (proposal).
extension CloudflareEmulator {
    /// Where the management API is served.
    package static let apiPrefix = "/client/v4"

    /// The largest management request body read.
    static let apiBodyLimit = 2 << 20

    func addManagementRoutes(to router: Router<BasicRequestContext>) {
        let rooms = "\(Self.apiPrefix)/zones/:zone/waiting_rooms"
        addRoomRoutes(to: router, rooms: rooms)
        addEventRoutes(to: router, events: rooms + "/:room/events")
        addNoRouteFallback(to: router)
        addPreviewPage(to: router)
    }

    /// The rooms (`…/waiting_rooms`, `…/waiting_rooms/:room`, its status) and the page preview upload.
    private func addRoomRoutes(to router: Router<BasicRequestContext>, rooms: String) {
        router.get(RouterPath(rooms)) { [self] req, _ in
            answer {
                let (page, perPage) = try Self.paging(req)
                return CloudflareV4Envelope.page(model.listRooms(host: Self.host(req)), page: page, perPage: perPage)
            }
        }
        router.post(RouterPath(rooms)) { [self] req, _ in
            let body = await Self.body(req)
            return answer { CloudflareV4Envelope.success(try model.createRoom(try body.get(), host: Self.host(req))) }
        }
        router.post(RouterPath(rooms + "/preview")) { [self] req, _ in
            let body = await Self.body(req)
            return answer {
                var r = try CloudflareV4BodyReader(try body.get())
                r.rejectUnknown(["custom_html"])
                r.required(["custom_html"])
                let html = r.string("custom_html", maxLength: 1 << 20)
                if !r.errors.isEmpty { throw CloudflareV4Failure.badRequest(r.errors) }
                let id = model.addPreview(html ?? "")
                let url = "http://\(req.head.authority ?? "127.0.0.1")/_emulator/cloudflare/preview/\(id)"
                return CloudflareV4Envelope.success(.object(["preview_url": .string(url)]))
            }
        }
        router.get(RouterPath(rooms + "/:room")) { [self] req, ctx in
            answer { CloudflareV4Envelope.success(try model.roomDocument(Self.parameter(ctx, "room"), host: Self.host(req))) }
        }
        for (method, replace) in [(HTTPRequest.Method.put, true), (.patch, false)] {
            router.on(RouterPath(rooms + "/:room"), method: method) { [self] req, ctx in
                let body = await Self.body(req)
                return answer {
                    CloudflareV4Envelope.success(
                        try model.updateRoom(Self.parameter(ctx, "room"), try body.get(), replace: replace, host: Self.host(req)))
                }
            }
        }
        router.delete(RouterPath(rooms + "/:room")) { [self] _, ctx in
            answer { CloudflareV4Envelope.success(try model.deleteRoom(Self.parameter(ctx, "room"))) }
        }
        router.get(RouterPath(rooms + "/:room/status")) { [self] _, ctx in
            if let r = await faulted(CloudflareEmulatorFault.status) { return r }
            return answer { try model.statusDocument(Self.parameter(ctx, "room")) }
        }
    }

    /// A room's events (`…/waiting_rooms/:room/events`, `…/events/:event`, its details).
    private func addEventRoutes(to router: Router<BasicRequestContext>, events: String) {
        router.get(RouterPath(events)) { [self] req, ctx in
            answer {
                let (page, perPage) = try Self.paging(req)
                return CloudflareV4Envelope.page(try model.listEvents(Self.parameter(ctx, "room")), page: page, perPage: perPage)
            }
        }
        router.post(RouterPath(events)) { [self] req, ctx in
            let body = await Self.body(req)
            return answer {
                CloudflareV4Envelope.success(try model.writeEvent(Self.parameter(ctx, "room"), nil, try body.get(), mode: .create))
            }
        }
        router.get(RouterPath(events + "/:event")) { [self] _, ctx in
            answer {
                CloudflareV4Envelope.success(
                    try model.eventDocument(Self.parameter(ctx, "room"), Self.parameter(ctx, "event"), details: false))
            }
        }
        router.get(RouterPath(events + "/:event/details")) { [self] _, ctx in
            answer {
                CloudflareV4Envelope.success(
                    try model.eventDocument(Self.parameter(ctx, "room"), Self.parameter(ctx, "event"), details: true))
            }
        }
        for (method, mode) in [(HTTPRequest.Method.put, CloudflareRoomResource.Mode.replace), (.patch, .patch)] {
            router.on(RouterPath(events + "/:event"), method: method) { [self] req, ctx in
                let body = await Self.body(req)
                return answer {
                    CloudflareV4Envelope.success(
                        try model.writeEvent(Self.parameter(ctx, "room"), Self.parameter(ctx, "event"), try body.get(), mode: mode))
                }
            }
        }
        router.delete(RouterPath(events + "/:event")) { [self] _, ctx in
            answer { CloudflareV4Envelope.success(try model.deleteEvent(Self.parameter(ctx, "room"), Self.parameter(ctx, "event"))) }
        }
    }

    /// Anything else under the prefix: Cloudflare's "No route for the URI".
    private func addNoRouteFallback(to router: Router<BasicRequestContext>) {
        for method in [HTTPRequest.Method.get, .post, .put, .patch, .delete] {
            router.on(RouterPath("\(Self.apiPrefix)/**"), method: method) { _, _ in
                EmulatorHTTP.json(
                    CloudflareV4Envelope.failure(CloudflareV4Failure(status: 404, [CloudflareV4Error(.noRoute, "No route for the URI")])),
                    status: 404)
            }
        }
    }

    /// The uploaded page previews, rendered with the sample values the query sets.
    private func addPreviewPage(to router: Router<BasicRequestContext>) {
        router.get("/_emulator/cloudflare/preview/:id") { [self] req, ctx in
            let id = Self.parameter(ctx, "id")
            guard let html = model.preview(id) else {
                return EmulatorHTTP.text(
                    "no preview \(id): upload the page with POST \(Self.apiPrefix)/zones/{zone}/waiting_rooms/preview\n", status: 404)
            }
            var query: [String: String] = [:]
            for (k, v) in req.uri.queryParameters { query[String(k)] = String(v) }
            return EmulatorHTTP.text(
                CloudflarePageTemplate.render(html, CloudflarePagePreview.values(query: query, now: model.now())),
                contentType: "text/html; charset=utf-8")
        }
    }

    /// The v4 answer of `work`: its envelope with 200, or the failure's envelope and status.
    func answer(_ work: () throws -> JSONValue) -> Response {
        do {
            return EmulatorHTTP.json(try work())
        } catch let failure as CloudflareV4Failure {
            return EmulatorHTTP.json(CloudflareV4Envelope.failure(failure), status: failure.status)
        } catch {
            return EmulatorHTTP.json(CloudflareV4Envelope.failure(.badRequest([CloudflareV4Error(.invalidBody, "\(error)")])), status: 400)
        }
    }

    /// The request's JSON body, or the v4 failure that says why there is none.
    static func body(_ req: Request) async -> Result<JSONValue, CloudflareV4Failure> {
        let buffer: ByteBuffer
        do { buffer = try await EmulatorHTTP.body(req, upTo: apiBodyLimit) } catch {
            return .failure(
                CloudflareV4Failure(status: 413, [CloudflareV4Error(.invalidBody, "the body is larger than \(apiBodyLimit) bytes")]))
        }
        do { return .success(try JSONValue.parse(String(buffer: buffer))) } catch {
            return .failure(.badRequest([CloudflareV4Error(.invalidBody, "the body is not JSON (\(error)); send a JSON object")]))
        }
    }

    /// `page` (from 1) and `per_page` (5 to 1000, a multiple of 5, default 25) of a list request.
    static func paging(_ req: Request) throws(CloudflareV4Failure) -> (page: Int, perPage: Int) {
        var errors: [CloudflareV4Error] = []
        func number(_ key: String, default value: Int, _ range: ClosedRange<Int>) -> Int {
            guard let text = req.uri.queryParameters[Substring(key)] else { return value }
            // the SDKs send floats (`page=2.0` is possible)
            guard let d = Double(String(text)), d.rounded() == d, d >= Double(range.lowerBound), d <= Double(range.upperBound) else {
                errors.append(
                    CloudflareV4Error(
                        .invalidField,
                        "\(key): expected an integer from \(range.lowerBound) to \(range.upperBound), got \"\(text.prefix(40))\"",
                        pointer: "/" + key))
                return value
            }
            return Int(d)
        }
        let page = number("page", default: 1, 1...1_000_000)
        let perPage = number("per_page", default: 25, 5...1000)
        if perPage % 5 != 0 {
            errors.append(CloudflareV4Error(.invalidField, "per_page: must be a multiple of 5, got \(perPage)", pointer: "/per_page"))
        }
        if !errors.isEmpty { throw .badRequest(errors) }
        return (page, perPage)
    }

    /// A path parameter, percent-decoded.
    static func parameter(_ ctx: BasicRequestContext, _ name: String) -> String { EmulatorHTTP.pathParameter(ctx.parameters, name) }

    /// The host a configured room reports (the request's, without its port; proposal).
    static func host(_ req: Request) -> String {
        let authority = req.head.authority ?? "127.0.0.1"
        if authority.hasPrefix("[") { return String(authority.prefix { $0 != "]" }) + "]" }
        return String(authority.prefix { $0 != ":" })
    }
}
