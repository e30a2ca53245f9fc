import Hummingbird
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
///   naming the field for a bad one; `DELETE faults`: clears them.
public protocol EmulatedVendor: EmulatorStatusSource {
    /// The vendor id: the admin path segment and the key of its section in shared documents.
    static var vendorID: String { get }
    /// A client configuration (the vendor's JSON options) that points at an emulator served on
    /// `server`: what `waitingroom … --emulator` and the demo use.
    static func clientDefaults(server: EmulatorAddress) -> JSONValue
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
    /// What it serves on `server`, as JSON (rooms, keys a client needs): `waitingroom emulate --json`.
    func describe(server: EmulatorAddress) -> JSONValue
    /// The same as lines for people (`waitingroom emulate`).
    func summary(server: EmulatorAddress) -> [String]
}

/// Where an emulator is served.
public struct EmulatorAddress: Sendable, Hashable {
    public var host: String
    public var port: Int
    public init(host: String, port: Int) {
        self.host = host
        self.port = port
    }
    /// `http://host:port`.
    public var baseURL: String { "http://\(host):\(port)" }
    /// `host:port`.
    public var authority: String { "\(host):\(port)" }
}

extension EmulatedVendor {
    /// The vendor id (``vendorID``).
    public var vendorID: String { Self.vendorID }

    /// Adds the shared admin routes (state, reset, faults) for this vendor.
    public func addAdminRoutes(to router: Router<BasicRequestContext>) {
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
                return EmulatorHTTP.json(.object(["installed": .number(Double(installed)), "pending": .number(Double(self.faultQueue.pending))]))
            } catch let error as WaitingRoomError {
                return EmulatorHTTP.badRequest(error)
            }
        }
        router.delete("\(base)/faults") { _, _ -> Response in
            self.faultQueue.clear()
            return EmulatorHTTP.json(.object(["cleared": .bool(true)]))
        }
    }

    /// Installs one fault or an array of them (the kit's form or the vendor's older one);
    /// returns how many fault entries were installed.
    /// - Throws: `.invalidConfiguration` naming the field of the first bad one (none is installed then).
    @discardableResult
    public func installFaults(_ json: JSONValue, path: String = "faults") throws -> Int {
        let faults = try faultVocabulary.parseList(json, path: path)
        faultQueue.add(faults)
        return faults.count
    }

    /// The chaos rotation on ``chaosKinds`` (see ``EmulatorFaultQueue/installChaos(perKind:delay:on:)``).
    @discardableResult
    public func installChaos(perKind: Int, delay: Duration = .milliseconds(1500)) -> Int {
        faultQueue.installChaos(perKind: perKind, delay: delay, on: chaosKinds)
    }
}
