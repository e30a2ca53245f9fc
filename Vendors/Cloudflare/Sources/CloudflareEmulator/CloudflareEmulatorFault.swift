import Cloudflare
import Foundation
import WaitingRoom
import WaitingRoomEmulatorKit

/// The request kinds the Cloudflare emulator's faults target, and its fault vocabulary (the
/// kit's form only: this emulator has no older form).
package enum CloudflareEmulatorFault {
    /// A request to the protected site (JSON mode or a page): `page`.
    package static let page = "page"
    /// `GET …/waiting_rooms/{name}/status`: `status`.
    package static let status = "status"

    /// `overshoot`: the global-propagation overshoot. Taken by the first protected-site request
    /// after it is installed, it makes every room admit at `code` % of its `new_users_per_minute`
    /// (100…9999) for `body` seconds (1…3600, default 60), then at the rate again:
    /// `{"action": "overshoot", "code": 150, "body": "120"}`, or the checked short form
    /// `{"overshoot": 150, "seconds": 120}`.
    package static let overshoot = "overshoot"

    /// The window of an overshoot fault without a readable `body` (proposal).
    package static let overshootDefaultSeconds = 60
    /// The longest overshoot window.
    package static let overshootSeconds = 1...3600

    /// What the emulator understands in a fault.
    package static let vocabulary = EmulatorFaultVocabulary(
        vendor: "cloudflare", requestKinds: [page, status], vendorActions: [overshoot: true],
        alias: { json, path in try overshootAlias(json, path: path) })

    /// Reads the short form `{"overshoot": PERCENT, "seconds": N}` (nil: not that form).
    static func overshootAlias(_ json: JSONValue, path: String) throws -> EmulatorFault? {
        guard json.objectValue?[overshoot] != nil else { return nil }
        let r = try ConfigurationReader(json, path: path, vendor: CloudflareConfiguration.vendorID)
        try r.rejectUnknownKeys([overshoot, "seconds"])
        let percent = try r.int(overshoot, range: 100...9999, unit: "%") ?? 100
        let seconds = try r.int("seconds", range: overshootSeconds, unit: "s") ?? overshootDefaultSeconds
        return EmulatorFault(.vendor(overshoot, percent), on: page, count: 1, body: String(seconds))
    }

    /// The window of an overshoot fault: its body as whole seconds within ``overshootSeconds``,
    /// else ``overshootDefaultSeconds``.
    static func window(of fault: EmulatorFault) -> Int {
        guard let text = fault.body?.trimmingCharacters(in: .whitespaces), let n = Int(text), overshootSeconds.contains(n) else {
            return overshootDefaultSeconds
        }
        return n
    }

    /// The body of a `garbage` answer: a `cfWaitingRoom` reply cut short.
    package static let garbage = "{\"cfWaitingRoom\": {\"inWaitingRoom\": true, \"waitTi"
}
