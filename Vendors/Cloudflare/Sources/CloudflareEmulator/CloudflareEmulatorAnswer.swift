/// One answer of the emulator's protected site: status, content type, headers and body.
struct CloudflareEmulatorAnswer: Sendable {
    var status: Int
    var contentType: String
    var headers: [(String, String)]
    var body: [UInt8]
    /// How the answer is counted (``CloudflareEmulatorCounters/replies``).
    var kind: String
}
