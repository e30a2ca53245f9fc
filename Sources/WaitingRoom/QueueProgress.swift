/// Where the user stands in line. Every field is optional: Queue-it reports none of them to a
/// headless client, NetFUNNEL reports all.
public struct QueueProgress: Hashable, Sendable, Codable {
    /// People ahead of the user (NetFUNNEL `nwait`).
    public var ahead: Int?
    /// People behind the user (NetFUNNEL `nnext`).
    package var behind: Int?
    /// Estimated time until admission.
    public var eta: Duration?
    /// The estimate formatted as the vendor shows it (NetFUNNEL `HH:mm:ss`).
    package var etaText: String?
    /// Progress towards admission, 0…100.
    package var percent: Double?

    /// Creates a progress report.
    public init(ahead: Int? = nil, behind: Int? = nil, eta: Duration? = nil, etaText: String? = nil, percent: Double? = nil) {
        self.ahead = ahead
        self.behind = behind
        self.eta = eta
        self.etaText = etaText
        self.percent = percent
    }
}

/// A vendor-hosted queue page the user can be shown (Queue-it `QueueUrl`, NetFUNNEL `vwr_html`).
public struct QueuePage: Hashable, Sendable, Codable {
    /// The page to show while waiting.
    public var queueURL: String
    /// Where the page sends the user after passing, if known.
    package var targetURL: String?

    /// Creates a queue page description.
    public init(queueURL: String, targetURL: String? = nil) {
        self.queueURL = queueURL
        self.targetURL = targetURL
    }
}
