import Foundation
import WaitingRoom

/// JSON configuration of ``ScriptedProvider`` (vendor id `"scripted"`), so Lua flows and the
/// CLI can use a scripted room.
///
/// - `steps`: array of objects, each one of
///   - `{"progress": {"ahead": 3, "behind": 1, "eta": 2.5, "percent": 40}}`
///   - `{"queueOpened": "https://queue.example/page"}`
///   - `{"restart": true}`
///   - `{"connection": "reconnecting" | "offline" | "connected", "attempt": N, "retryIn": SECONDS}`
///   - `{"queuePageChanged": "https://queue.example/page?step=2"}`, `{"userExited": true}`
///   - `{"sleep": SECONDS}`
///   - `{"outcome": "passed" | "disabled" | "blocked" | "closed" | "failed", "code": N, "message": "…",
///      "key": "…" (passed: a key to return with complete), "token": "…" (passed/disabled: a token),
///      "error": "networkOffline" | … (failed: the error kind)}`
/// - `tryPass`: `"passed" | "queue" | "disabled" | "blocked"` (default `"queue"`).
package struct ScriptedConfiguration: ProviderConfiguration {
    package static let vendorID = "scripted"
    /// The parsed steps.
    package var steps: [ScriptedProvider.Step]
    /// What `tryPass` answers.
    package var tryPass: TryPassResult.Disposition

    package init(steps: [ScriptedProvider.Step], tryPass: TryPassResult.Disposition = .queue) {
        self.steps = steps
        self.tryPass = tryPass
    }

    package init(json: JSONValue) throws {
        let vendor = Self.vendorID
        let reader = try ConfigurationReader(json, path: vendor, vendor: vendor)
        try reader.rejectUnknownKeys(["steps", "tryPass"])
        if let disposition = try reader.string("tryPass") {
            guard let value = TryPassResult.Disposition(rawValue: disposition) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: reader.fieldName("tryPass"), "expected passed, queue, disabled or blocked", vendor: vendor)
            }
            tryPass = value
        } else {
            tryPass = .queue
        }
        guard case .array(let items)? = json["steps"] else {
            throw WaitingRoomError.invalidConfiguration(field: reader.fieldName("steps"), "is required (an array of steps)", vendor: vendor)
        }
        let room = RoomKey(scope: "scripted", room: "room")
        steps = try items.enumerated().map { index, item in
            let step = try ConfigurationReader(item, path: "\(vendor).steps[\(index)]", vendor: vendor)
            let status = { (code: Int, message: String) in
                VendorStatus(
                    vendor: vendor, code: (try? step.int("code")).flatMap { $0 } ?? code,
                    message: (try? step.string("message")).flatMap { $0 } ?? message)
            }
            if let progress = try step.object("progress") {
                let eta = try progress.double("eta", range: 0...1e9)
                return .emit(
                    .progress(
                        QueueProgress(
                            ahead: try progress.int("ahead"), behind: try progress.int("behind"),
                            eta: eta.map { .milliseconds(Int64($0 * 1000)) }, etaText: try progress.string("etaText"),
                            percent: try progress.double("percent", range: 0...100)), status(201, "waiting")))
            }
            if let url = try step.string("queueOpened") {
                return .emit(.queueOpened(QueuePage(queueURL: url), status(0, "queue page")))
            }
            if let url = try step.string("queuePageChanged") {
                return .emit(.queuePageChanged(QueuePage(queueURL: url), status(0, "queue URL changed")))
            }
            if try step.bool("userExited") == true {
                return .emit(.userExited(status(0, "user exited")))
            }
            if let name = try step.string("connection") {
                let state: ConnectionState
                switch name {
                case "connected": state = .connected
                case "offline": state = .offline
                case "reconnecting":
                    let retryIn = try step.double("retryIn", range: 0...86_400)
                    state = .reconnecting(
                        attempt: try step.int("attempt") ?? 1, nextRetryIn: retryIn.map { .milliseconds(Int64($0 * 1000)) })
                default:
                    throw WaitingRoomError.invalidConfiguration(
                        field: step.fieldName("connection"), "expected connected, reconnecting or offline", vendor: vendor)
                }
                return .emit(.connection(state, status(0, name)))
            }
            if try step.bool("restart") == true {
                return .emit(.sessionRestarted(status(0, "restarted by the script")))
            }
            if let seconds = try step.double("sleep", range: 0...86_400) {
                return .sleep(.milliseconds(Int64(seconds * 1000)))
            }
            if let outcome = try step.string("outcome") {
                return .finish(try Self.outcome(outcome, step: step, room: room, status: status))
            }
            throw WaitingRoomError.invalidConfiguration(
                field: "\(vendor).steps[\(index)]", "expected one of progress, queueOpened, restart, sleep, outcome", vendor: vendor)
        }
    }

    /// The outcome a step's `outcome` names (`passed` with `key` or `token`, `disabled` with
    /// `token`, `blocked`, `closed`, `failed` with `error`); `status` gives the step's status.
    static func outcome(
        _ outcome: String, step: ConfigurationReader, room: RoomKey,
        status: (Int, String) -> VendorStatus
    ) throws -> Outcome {
        let vendor = vendorID
        let now = Date()
        switch outcome {
        case "passed":
            let key = try step.string("key")
            let token = try step.string("token")
            let pass = Pass(
                vendor: vendor, room: room, credential: key ?? token ?? "scripted-token",
                kind: key == nil ? .token : .key, issuedAt: now, requiresCompletion: key != nil)
            return .passed(pass, status(200, "passed"))
        case "disabled":
            let pass = try step.string("token").map { Pass(vendor: vendor, room: room, credential: $0, kind: .token, issuedAt: now) }
            return .disabled(pass, status(0, "disabled"))
        case "blocked": return .blocked(status(301, "blocked"))
        case "closed": return .closed(status(499, "closed"))
        case "failed":
            let kindName = try step.string("error") ?? "server"
            guard let kind = WaitingRoomError.Kind(rawValue: kindName) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: step.fieldName("error"), "unknown error kind \(kindName)", vendor: vendor)
            }
            let s = status(500, "scripted failure")
            return .failed(WaitingRoomError(kind, vendor: vendor, vendorCode: s.code, message: s.message))
        default:
            throw WaitingRoomError.invalidConfiguration(
                field: step.fieldName("outcome"), "expected passed, disabled, blocked, closed or failed", vendor: vendor)
        }
    }

    package func makeProvider(environment: ProviderEnvironment) throws -> any WaitingRoomProvider {
        let status = VendorStatus(vendor: Self.vendorID, code: tryPass == .passed ? 200 : 201, message: "scripted tryPass")
        var pass: Pass?
        if tryPass == .passed {
            pass = Pass(
                vendor: Self.vendorID, room: RoomKey(scope: "scripted", room: "room"), credential: "scripted-token", kind: .token,
                issuedAt: environment.clock.now())
        }
        return ScriptedProvider(
            steps: steps, tryPassResult: TryPassResult(disposition: tryPass, status: status, pass: pass), environment: environment)
    }
}
