import Foundation
import NetFUNNEL
import WaitingRoom

/// The emulator's counters, read by tests and the admin endpoint. "Taken" keys are keys that
/// were admitted (hold a slot); a taken key is *never returned* when the server dropped it by
/// timeout/expiry or it is still held. Every count is per ticket (one user's 5101), never per
/// key string: the keys that replace each other on 5002 are one ticket.
public struct NetFUNNELEmulatorCounters: Sendable, Equatable, Codable {
    /// Requests per opcode (`"5101"`, …, `"other"`).
    package var requests: [String: Int] = [:]
    /// Replies per result code.
    package var replies: [String: Int] = [:]
    /// Keys issued by 5101 (each starts a ticket).
    package var keysIssued = 0
    /// Tickets admitted (a slot taken).
    package var keysTaken = 0
    /// Taken keys returned with 5004.
    package var keysReturned = 0
    /// Taken keys the server returned itself (segment timeout, missing alive notice, alive expiry).
    package var keysAutoReturned = 0
    /// Taken keys held right now.
    package var keysHeld = 0
    /// Waiting users right now.
    package var waiting = 0
    /// Waiting users who left with 5004.
    package var waitersLeft = 0
    /// Waiting users dropped after the retention window.
    package var waitersDropped = 0
    /// Faults injected so far.
    public var faultsInjected = 0
    /// Delayed requests whose client gave up (closed the connection) before they reached the
    /// server; they changed nothing.
    package var requestsAbandoned = 0

    /// Taken keys never returned with 5004: auto-returned ones plus those still held.
    public var keysNeverReturned: Int { keysAutoReturned + keysHeld }

    package init() {}

    enum CodingKeys: String, CodingKey {
        case requests, replies, keysIssued, keysTaken, keysReturned, keysAutoReturned, keysHeld, waiting, waitersLeft,
            waitersDropped, faultsInjected, requestsAbandoned, keysNeverReturned
    }

    public init(from decoder: any Decoder) throws {
        let c = try decoder.container(keyedBy: CodingKeys.self)
        requests = try c.decodeIfPresent([String: Int].self, forKey: .requests) ?? [:]
        replies = try c.decodeIfPresent([String: Int].self, forKey: .replies) ?? [:]
        keysIssued = try c.decodeIfPresent(Int.self, forKey: .keysIssued) ?? 0
        keysTaken = try c.decodeIfPresent(Int.self, forKey: .keysTaken) ?? 0
        keysReturned = try c.decodeIfPresent(Int.self, forKey: .keysReturned) ?? 0
        keysAutoReturned = try c.decodeIfPresent(Int.self, forKey: .keysAutoReturned) ?? 0
        keysHeld = try c.decodeIfPresent(Int.self, forKey: .keysHeld) ?? 0
        waiting = try c.decodeIfPresent(Int.self, forKey: .waiting) ?? 0
        waitersLeft = try c.decodeIfPresent(Int.self, forKey: .waitersLeft) ?? 0
        waitersDropped = try c.decodeIfPresent(Int.self, forKey: .waitersDropped) ?? 0
        faultsInjected = try c.decodeIfPresent(Int.self, forKey: .faultsInjected) ?? 0
        requestsAbandoned = try c.decodeIfPresent(Int.self, forKey: .requestsAbandoned) ?? 0
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.container(keyedBy: CodingKeys.self)
        try c.encode(requests, forKey: .requests)
        try c.encode(replies, forKey: .replies)
        try c.encode(keysIssued, forKey: .keysIssued)
        try c.encode(keysTaken, forKey: .keysTaken)
        try c.encode(keysReturned, forKey: .keysReturned)
        try c.encode(keysAutoReturned, forKey: .keysAutoReturned)
        try c.encode(keysHeld, forKey: .keysHeld)
        try c.encode(waiting, forKey: .waiting)
        try c.encode(waitersLeft, forKey: .waitersLeft)
        try c.encode(waitersDropped, forKey: .waitersDropped)
        try c.encode(faultsInjected, forKey: .faultsInjected)
        try c.encode(requestsAbandoned, forKey: .requestsAbandoned)
        try c.encode(keysNeverReturned, forKey: .keysNeverReturned)
    }
}
