import NIOCore
import PostgresNIO
import WaitingRoom

/// What a PostgreSQL failure says, without what it must not: PostgresNIO's own description is
/// a fixed placeholder (to keep SQL and values out of logs), and its debug description
/// repeats the query with its values (passes' credentials), so the store describes errors
/// itself: the server's message and SQLSTATE, or the client-side code and network cause.
package enum PostgresFailure {
    /// A one-line reason for `error`.
    static func reason(_ error: any Error) -> String {
        if let error = error as? PostgresTransactionError {
            if let inner = error.beginError ?? error.closureError ?? error.commitError { return reason(inner) }
            return "the transaction failed"
        }
        if let error = error as? WaitingRoomError { return error.message }
        if error is CancellationError { return "cancelled" }
        if let error = error as? PSQLError {
            if let info = error.serverInfo, let message = info[.message] {
                let state = info[.sqlState].map { " (SQLSTATE \($0))" } ?? ""
                let detail = info[.detail].map { ": \($0)" } ?? ""
                return message + detail + state
            }
            if let underlying = error.underlying { return "\(error.code): \(reason(underlying))" }
            return "\(error.code)"
        }
        if let error = error as? PostgresDecodingError {
            return "unexpected \(error.postgresType) in column \(error.columnName)"
        }
        return String(describing: error)
    }

    /// A store operation's failure: `.unavailable`, naming the operation and the reason.
    package static func unavailable(_ operation: String, _ error: any Error) -> any Error {
        if error is CancellationError { return error }
        if let error = error as? WaitingRoomError { return error }
        return WaitingRoomError(.unavailable, message: "PostgreSQL state store: \(operation) failed: \(reason(error))")
    }

    /// A failure to connect or prepare the tables: `.invalidConfiguration` on `stateStore`.
    static func cannotConnect(_ url: PostgresConnectionString, _ error: any Error) -> WaitingRoomError {
        if let error = error as? WaitingRoomError, error.kind == .invalidConfiguration { return error }
        return .invalidConfiguration(field: PostgresConnectionString.field, "cannot use PostgreSQL at \(url): \(reason(error))")
    }
}
