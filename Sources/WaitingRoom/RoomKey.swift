/// Identifies one waiting room, independent of the vendor.
///
/// NetFUNNEL: `scope` is the project key, `room` the segment key.
/// Queue-it: `scope` is the customer id, `room` the waiting room (event) id.
public struct RoomKey: Hashable, Sendable, Codable, CustomStringConvertible {
    /// The outer name: a NetFUNNEL project key or a Queue-it customer id.
    public var scope: String
    /// The inner name: a NetFUNNEL segment key or a Queue-it waiting room id.
    public var room: String

    /// Creates a room key.
    public init(scope: String, room: String) {
        self.scope = scope
        self.room = room
    }

    /// `scope/room`.
    public var description: String { "\(scope)/\(room)" }
}
