import HTTPTypes
import Hummingbird
import NIOCore
import WaitingRoom

/// One vendor's emulator as the kit and the combined emulator see it: its wire routes and
/// model are its own; faults, state, reset and the dashboard go through this protocol, so a
/// combined emulator serves any list of them and adding a vendor to it is one line.
///
/// Shared admin routes (``addAdminRoutes(to:)``), under `/_emulator/<vendorID>/`:
/// - `GET state`: ``stateJSON()`` (the vendor's own figures) with the fault counters
///   (``EmulatorFaultQueue/json``) under `"faultQueue"`;
/// - `POST reset`: ``reset()``;
/// - `GET faults`: the fault counters and the faults waiting; `POST faults`: one fault or an
///   array in the kit's JSON form or the vendor's older form (``EmulatorFaultVocabulary``), 400
///   naming the field for a bad one; `DELETE faults`: clears them;
/// - `POST rooms/{room…}`: changes a room's settings (keys not given keep their values;
///   ``updateRoom(_:with:)``); `POST rooms/{room…}/admit` (`?count=N` or `{"count": N}`, default
///   1): lets users in (``admit(_:count:)``). A room is one path component (a CrowdHandler slug)
///   or two (scope and room) (``roomPathArity``); 404 for an unknown room, 405 when the vendor
///   admits by its own rule, 400 naming the field for a bad setting.
package protocol EmulatedVendor: EmulatorStatusSource {
    /// The vendor id: the admin path segment and the key of its section in shared documents.
    static var vendorID: String { get }
    /// Makes the emulator from its section of a shared emulator document (`{"<vendorID>": …}`;
    /// nil or null: its demo rooms), on `clock`. Errors name the field (`<vendorID>.…`).
    static func make(section: JSONValue?, clock: any WaitingRoomClock) throws -> Self
    /// The same, as an existential (what a list of emulator types calls); default: ``make(section:clock:)``.
    static func makeEmulator(section: JSONValue?, clock: any WaitingRoomClock) throws -> any EmulatedVendor
    /// The vendor id, on the type (what a list of emulator types reads); default: ``vendorID``.
    static var emulatedVendorID: String { get }
    /// A client configuration (the vendor's JSON options) that points at an emulator served on
    /// `server`: what `waitingroom … --emulator` and the demo use.
    static func clientDefaults(server: EmulatorAddress) -> JSONValue
    /// The options that say where the vendor's servers are (URLs and domains; not tenant ids or
    /// timings): `waitingroom run --emulator` gives these the values of ``clientDefaults(server:)``
    /// over a flow's own configuration, and drops those it has no value for (the client derives
    /// them from the others), so a flow written for the real service reaches the emulator, never
    /// the service.
    static var clientAddressKeys: Set<String> { get }
    /// Its faults.
    var faultQueue: EmulatorFaultQueue { get }
    /// What its faults may say.
    var faultVocabulary: EmulatorFaultVocabulary { get }
    /// The request kinds `waitingroom load --chaos` targets.
    var chaosKinds: [String] { get }
    /// The vendor's own state document.
    func stateJSON() -> JSONValue
    /// Forgets its sessions, counters and faults.
    func reset()
    /// Adds its wire routes and its own admin routes (rooms, admit) to `router`.
    func addRoutes(to router: Router<BasicRequestContext>)
    /// How many path components name a room after `rooms/`: 1 (a slug) or 2 (scope and room).
    var roomPathArity: Int { get }
    /// Changes the settings of the room `path` names; returns the answer's JSON.
    /// - Throws: ``EmulatorRoomError`` or a `WaitingRoomError` naming the bad field.
    func updateRoom(_ path: [String], with patch: JSONValue) throws -> JSONValue
    /// Lets `count` users in from the head of the room's line; returns how many were let in.
    /// - Throws: ``EmulatorRoomError``.
    func admit(_ path: [String], count: Int) throws -> Int
    /// The reply to one of its hot requests when it can be given on the server's event loop,
    /// exactly as its route would give it (``EmulatorInlineReply``); nil: the route answers.
    /// Default nil.
    func inlineAnswer(_ head: HTTPTypes.HTTPRequest, body: ByteBuffer?) -> EmulatorInlineReply?
    /// What `waitingroom load` reports from it after a run.
    func loadFigures() -> EmulatorLoadFigures
    /// Appends its figures for the combined emulator's `GET /metrics`, read at the moment of the
    /// call. Default: ``standardMetrics(into:)`` (every room of its status, its keys, faults,
    /// requests and replies); a vendor adds figures of its own by calling it and appending more.
    func metrics(into samples: inout [EmulatorMetricSample])
    /// What it serves on `server`, as JSON (rooms, keys a client needs): `waitingroom emulate --json`.
    func describe(server: EmulatorAddress) -> JSONValue
    /// The same as lines for people (`waitingroom emulate`).
    func summary(server: EmulatorAddress) -> [String]
}

/// Why a room admin call cannot be carried out.
package enum EmulatorRoomError: Error, Sendable, Equatable {
    /// No such room (404).
    case unknownRoom(String)
    /// The vendor does not do this (405), and why.
    case unsupported(String)
}

/// Where an emulator is served.
package struct EmulatorAddress: Sendable, Hashable {
    package var host: String
    package var port: Int
    package init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
    /// `http://host:port`.
    package var baseURL: String { "http://\(host):\(port)" }
    /// `host:port`.
    package var authority: String { "\(host):\(port)" }
}

extension EmulatedVendor {
    package static func makeEmulator(section: JSONValue?, clock: any WaitingRoomClock) throws -> any EmulatedVendor {
        try make(section: section, clock: clock)
    }

    package static var emulatedVendorID: String { vendorID }

    /// No inline answers.
    package func inlineAnswer(_ head: HTTPTypes.HTTPRequest, body: ByteBuffer?) -> EmulatorInlineReply? { nil }

    /// The vendor id (``vendorID``).
    package var vendorID: String { Self.vendorID }

    /// Adds the shared admin routes (state, reset, faults) for this vendor.
    package func addAdminRoutes(to router: Router<BasicRequestContext>) {
        let base = "/_emulator/\(vendorID)"
        router.get("\(base)/state") { _, _ -> Response in
            var state = self.stateJSON().objectValue ?? [:]
            state["faultQueue"] = self.faultQueue.json
            return EmulatorHTTP.json(.object(state))
        }
        router.post("\(base)/reset") { _, _ -> Response in
            self.reset()
            return EmulatorHTTP.json(.object(["reset": .bool(true)]))
        }
        router.get("\(base)/faults") { _, _ -> Response in
            EmulatorHTTP.json(self.faultQueue.json)
        }
        router.post("\(base)/faults") { request, _ -> Response in
            do {
                let installed = try self.installFaults(try await EmulatorHTTP.jsonBody(request))
                return EmulatorHTTP.json(
                    .object(["installed": .number(Double(installed)), "pending": .number(Double(self.faultQueue.pending))]))
            } catch let error as WaitingRoomError {
                return EmulatorHTTP.badRequest(error)
            }
        }
        router.delete("\(base)/faults") { _, _ -> Response in
            self.faultQueue.clear()
            return EmulatorHTTP.json(.object(["cleared": .bool(true)]))
        }
        let room = roomPathArity == 1 ? "rooms/:room" : "rooms/:scope/:room"
        let path: @Sendable (BasicRequestContext) -> [String] = { context in
            (self.roomPathArity == 1 ? ["room"] : ["scope", "room"]).map { EmulatorHTTP.pathParameter(context.parameters, $0) }
        }
        router.post("\(base)/\(room)") { request, context -> Response in
            do {
                return EmulatorHTTP.json(try self.updateRoom(path(context), with: try await EmulatorHTTP.jsonBody(request)))
            } catch {
                return Self.roomFailure(error)
            }
        }
        router.post("\(base)/\(room)/admit") { request, context -> Response in
            var count: Int?
            if let query = request.uri.queryParameters["count"] {
                // `?count=abc`, `2.5` or a number past Int admitted 1 without a word
                guard let value = Int(query) else {
                    return EmulatorHTTP.badRequest(
                        .invalidConfiguration(field: "count", "count: expected a whole number, got \(String(query.prefix(40)))"))
                }
                count = value
            } else if let body = try? await EmulatorHTTP.jsonBody(request), let value = body["count"] {
                // a whole number (or its text); 1e300 or 2.5 is refused (the conversion trapped)
                count = value.numberValue.flatMap { Int(exactly: $0) } ?? value.stringValue.flatMap { Int($0) }
                guard count != nil else {
                    return EmulatorHTTP.badRequest(
                        .invalidConfiguration(field: "count", "count: expected a whole number, got \(value.jsonText.prefix(40))"))
                }
            }
            do {
                let admitted = try self.admit(path(context), count: max(0, min(count ?? 1, 1_000_000)))
                return EmulatorHTTP.json(.object(["admitted": .number(Double(admitted))]))
            } catch {
                return Self.roomFailure(error)
            }
        }
    }

    static func roomFailure(_ error: any Error) -> Response {
        switch error {
        case EmulatorRoomError.unknownRoom(let name):
            return EmulatorHTTP.json(.object(["error": .string("no room \(name)")]), status: 404)
        case EmulatorRoomError.unsupported(let why):
            return EmulatorHTTP.json(.object(["error": .string(why)]), status: 405)
        case let error as WaitingRoomError:
            return EmulatorHTTP.badRequest(error)
        default:
            return EmulatorHTTP.json(.object(["error": .string("\(error)")]), status: 400)
        }
    }

    /// Installs one fault or an array of them (the kit's form or the vendor's older one);
    /// returns how many fault entries were installed.
    /// - Throws: `.invalidConfiguration` naming the field of the first bad one (none is installed then).
    @discardableResult
    package func installFaults(_ json: JSONValue, path: String = "faults") throws -> Int {
        let faults = try faultVocabulary.parseList(json, path: path)
        faultQueue.add(faults)
        return faults.count
    }

    /// The chaos rotation on ``chaosKinds`` (see ``EmulatorFaultQueue/installChaos(perKind:delay:on:)``).
    @discardableResult
    package func installChaos(perKind: Int, delay: Duration = .milliseconds(1500)) -> Int {
        faultQueue.installChaos(perKind: perKind, delay: delay, on: chaosKinds)
    }
}
