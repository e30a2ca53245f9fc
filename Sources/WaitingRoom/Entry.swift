/// How a vendor controls admission to a room.
public enum ControlMode: String, Sendable, Codable, CaseIterable {
    /// Admission control: wait once, pass, return the key when the protected step is done.
    case basic
    /// Section control: the key is held (with alive notices) for the whole protected section.
    case section
}

/// A credential that proves the user may enter a room that requires one (Queue-it).
public enum Credential: Hashable, Sendable, Codable {
    /// A signed enqueue token minted by the customer's backend.
    case enqueueToken(String)
    /// An enqueue key, a unique identifier handed out to invited users.
    case enqueueKey(String)
}

/// What a user asks for: to enter one room, in one control mode, as one user.
public struct Entry: Hashable, Sendable, Codable {
    /// The room to enter.
    public var room: RoomKey
    /// Basic or section control.
    public var control: ControlMode
    /// Enqueue token or key, when the room requires one.
    public var credential: Credential?
    /// The user's id as the vendor should see it (NetFUNNEL `user_data`, Queue-it `userId`).
    public var userId: String?
    /// Vendor-specific extras (for example Queue-it `layoutName`, `language`).
    public var attributes: [String: String]

    /// Creates an entry.
    public init(
        room: RoomKey,
        control: ControlMode = .basic,
        credential: Credential? = nil,
        userId: String? = nil,
        attributes: [String: String] = [:]
    ) {
        self.room = room
        self.control = control
        self.credential = credential
        self.userId = userId
        self.attributes = attributes
    }
}
