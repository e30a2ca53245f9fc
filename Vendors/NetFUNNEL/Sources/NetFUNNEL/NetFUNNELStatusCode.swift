import WaitingRoom

/// The one NetFUNNEL code table: every result code the server sends and every code the agent
/// reports locally, with the raw value equal to the vendor's number.
///
/// The codec (`NetFUNNELReply.status`), the session engine (which event a code becomes), the
/// `Netfunnel` facade (which delegate method fires) and `Vendors/NetFUNNEL/README.md` all read
/// this table. Codes not listed here are carried as plain integers and treated as server errors.
public enum NetFUNNELStatusCode: Int, Sendable, CaseIterable, Codable, CustomStringConvertible {
    // MARK: flow codes (server)

    /// Entry allowed (`kSuccess`); for a 5004 the key was returned.
    case success = 200
    /// Wait: poll again with 5002 after `ttl` seconds (`kContinue`); on 5003, "still alive".
    case `continue` = 201
    /// Same as 201 while the operator runs the segment in debug mode (`kContinueDebug`).
    case continueDebug = 202
    /// Server bypass (`kTsBypass`): segment deactivated, licence exceeded; may carry no key.
    /// The NF4 agent also reports 300 through `nfSuccess` when `errorBypass` turned an error into a pass.
    case bypass = 300
    /// Segment blocked (`kTsBlock`): Entry Status "Block", the block room is shown.
    case block = 301
    /// IP/ID blocked (`kTsIpBlock`): black list or Repeated Request Block ("macro block").
    case macroBlock = 302
    /// Express pass (`kTsExpressNumber`): the IP/ID is on the white list, the room is never shown.
    case express = 303

    // MARK: user closed a room (agent-local, NF4)

    /// The user closed the post-waiting room.
    case postWaitingRoomClosed = 495
    /// The user closed the pre-waiting room.
    case preWaitingRoomClosed = 496
    /// The user closed the macro (repeated-request) block room.
    case macroBlockRoomClosed = 497
    /// The user closed the block room.
    case blockRoomClosed = 498
    /// The user cancelled the standard waiting room (stop / back / task cancelled).
    case waitingRoomClosed = 499

    // MARK: server errors

    /// Unknown service id (`sid` = projectKey), or the agent was used before initialisation.
    case noService = 500
    /// Unknown action id (`aid` = segmentKey).
    case noAction = 501
    /// The key was already completed (on 5004 we treat this as a successful return).
    case alreadyCompleted = 502
    /// The key was issued by another server node ("Wrong Server ID").
    case wrongServer = 503
    /// Too many re-issues.
    case tooManyReissues = 504
    /// The key does not exist (expired or unknown).
    case noKey = 505
    /// Bad id.
    case invalidID = 506
    /// Bad key.
    case invalidKey = 507
    /// Bad id string.
    case invalidIDString = 508
    /// The id already exists.
    case duplicate = 509
    /// Error while deleting an action.
    case deleteActionFailed = 510
    /// The service already exists.
    case serviceExists = 511
    /// The action already exists.
    case actionExists = 512
    /// Request beyond the licence count.
    case licenseExceeded = 513
    /// Size limit exceeded.
    case sizeExceeded = 514
    /// No user activity.
    case noUserAction = 515
    /// Key larger than the current value.
    case keyTooBig = 516
    /// Request from an invalid IP.
    case invalidIP = 517

    // MARK: network (agent-local, NF4)

    /// The network is not connected (connection refused, host unreachable, connection dropped).
    case networkNotConnected = 1001
    /// No usable reply within `networkTimeout` after all retries (also HTTP errors and HTML pages).
    case networkTimeout = 1002

    /// What the agent does with a code.
    public enum Disposition: String, Sendable, CaseIterable {
        /// Entry granted (`nfSuccess`).
        case pass
        /// Keep waiting (`nfContinue`).
        case wait
        /// Entry refused (`nfBlock`).
        case block
        /// A room was closed by the user (`nfClose`).
        case close
        /// Server error (`nfError`).
        case serverError
        /// Network error after retries (`nfNetworkError`).
        case networkError
    }

    /// How the agent treats this code.
    public var disposition: Disposition {
        switch self {
        case .success, .bypass, .express: .pass
        case .continue, .continueDebug: .wait
        case .block, .macroBlock: .block
        case .postWaitingRoomClosed, .preWaitingRoomClosed, .macroBlockRoomClosed, .blockRoomClosed,
            .waitingRoomClosed:
            .close
        case .networkNotConnected, .networkTimeout: .networkError
        default: .serverError
        }
    }

    /// The disposition of any integer code (unknown codes are server errors).
    package static func disposition(of code: Int) -> Disposition {
        NetFUNNELStatusCode(rawValue: code)?.disposition ?? .serverError
    }

    /// True when the code came from (or could come from) the server; false for agent-local codes.
    public var isWireCode: Bool { rawValue < 495 || (rawValue >= 500 && rawValue < 1000) }

    /// The short message the agent reports with this code.
    public var message: String {
        switch self {
        case .success: "Success"
        case .continue: "Continue"
        case .continueDebug: "Continue (debug mode)"
        case .bypass: "Bypass"
        case .block: "Block"
        case .macroBlock: "Macro Block"
        case .express: "Express (white list)"
        case .postWaitingRoomClosed: "Post-waiting room closed"
        case .preWaitingRoomClosed: "Pre-waiting room closed"
        case .macroBlockRoomClosed: "Macro block room closed"
        case .blockRoomClosed: "Block room closed"
        case .waitingRoomClosed: "Waiting room closed"
        case .noService: "Unknown project (service id)"
        case .noAction: "Unknown segment (action id)"
        case .alreadyCompleted: "Key already completed"
        case .wrongServer: "Wrong Server ID"
        case .tooManyReissues: "Too many re-issues"
        case .noKey: "Key does not exist"
        case .invalidID: "Invalid id"
        case .invalidKey: "Invalid key"
        case .invalidIDString: "Invalid id string"
        case .duplicate: "Duplicate id"
        case .deleteActionFailed: "Error while deleting action"
        case .serviceExists: "Service already exists"
        case .actionExists: "Action already exists"
        case .licenseExceeded: "Licence exceeded"
        case .sizeExceeded: "Size limit exceeded"
        case .noUserAction: "No user action"
        case .keyTooBig: "Key too big"
        case .invalidIP: "Invalid IP"
        case .networkNotConnected: "Network Not Connected"
        case .networkTimeout: "Network Timeout"
        }
    }

    public var description: String { "\(rawValue) \(message)" }

    /// The message for any integer code (a code not in the table is a server error).
    package static func message(for code: Int) -> String {
        message(for: code) { "Server error \($0)" }
    }
}

extension NetFUNNELStatusCode: VendorCode {
    package static var vendorID: String { NetFUNNELConfiguration.vendorID }
}

/// NetFUNNEL request types (`opcode` query parameter of `GET /ts.wseq`).
package enum NetFUNNELOpcode: Int, Sendable, CaseIterable, Codable, CustomStringConvertible {
    /// Issue a key only (legacy).
    case getTicketID = 5001
    /// Entry check with the key held; the polling call while waiting.
    case checkEnter = 5002
    /// Alive notice while inside a section.
    case aliveNotice = 5003
    /// Return the key (complete).
    case complete = 5004
    /// Issue a key and ask for entry in one call; the first call of every flow.
    case issueAndEnter = 5101
    /// Administrative init (no client uses it).
    case initialize = 5105
    /// Administrative stop (no client uses it).
    case stop = 5106

    package var description: String {
        switch self {
        case .getTicketID: "5001 getTicketID"
        case .checkEnter: "5002 chkEnter"
        case .aliveNotice: "5003 aliveNotice"
        case .complete: "5004 setComplete"
        case .issueAndEnter: "5101 getTidChkEnter"
        case .initialize: "5105 init"
        case .stop: "5106 stop"
        }
    }
}
