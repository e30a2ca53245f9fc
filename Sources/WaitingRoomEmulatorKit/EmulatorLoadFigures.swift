/// What `waitingroom load` reports from an emulator after a run, in the vendor's own words:
/// its key figures (the text summary's "keys" line and `--json`), and requests and replies per
/// kind as the report names them.
public struct EmulatorLoadFigures: Sendable {
    /// Key figures, by name, in the order they are shown.
    public var keys: [(String, Int)]
    /// Whether the client's background key returns belong with them (a vendor whose passes hold
    /// keys: NetFUNNEL).
    public var holdsKeys: Bool
    /// Requests per kind.
    public var requests: [(String, Int)]
    /// Replies per result.
    public var replies: [(String, Int)]

    public init(keys: [(String, Int)], holdsKeys: Bool = false, requests: [(String, Int)] = [], replies: [(String, Int)] = []) {
        self.keys = keys
        self.holdsKeys = holdsKeys
        self.requests = requests
        self.replies = replies
    }
}
