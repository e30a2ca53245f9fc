/// What `waitingroom load` reports from an emulator after a run, in the vendor's own words:
/// its key figures (the text summary's "keys" line and `--json`), and requests and replies per
/// kind as the report names them.
package struct EmulatorLoadFigures: Sendable {
    /// Key figures, by name, in the order they are shown.
    package var keys: [(String, Int)]
    /// Whether the client's background key returns belong with them (a vendor whose passes hold
    /// keys: NetFUNNEL).
    package var holdsKeys: Bool
    /// Requests per kind.
    package var requests: [(String, Int)]
    /// Replies per result.
    package var replies: [(String, Int)]

    package init(keys: [(String, Int)], holdsKeys: Bool = false, requests: [(String, Int)] = [], replies: [(String, Int)] = []) {
        self.keys = keys
        self.holdsKeys = holdsKeys
        self.requests = requests
        self.replies = replies
    }
}
