import WaitingRoomEmulatorKit

/// The request kinds the Cloudflare emulator's faults target, and its fault vocabulary (the
/// kit's form only: this emulator has no older form).
public enum CloudflareEmulatorFault {
    /// A request to the protected site (JSON mode or a page): `page`.
    public static let page = "page"
    /// `GET …/waiting_rooms/{name}/status`: `status`.
    public static let status = "status"

    /// What the emulator understands in a fault.
    public static let vocabulary = EmulatorFaultVocabulary(vendor: "cloudflare", requestKinds: [page, status])

    /// The body of a `garbage` answer: a `cfWaitingRoom` reply cut short.
    public static let garbage = "{\"cfWaitingRoom\": {\"inWaitingRoom\": true, \"waitTi"
}
