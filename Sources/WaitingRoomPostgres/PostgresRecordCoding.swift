import Foundation
import WaitingRoom

/// How records are written to and read from the JSON columns: the SDK's own `Codable` forms
/// (dates as the default `JSONEncoder` writes them), so a record reads back exactly as it was
/// written; the `double precision` columns beside them only serve the queries.
package enum PostgresRecordCoding {
    /// `value` as JSON text.
    package static func encode<Value: Encodable>(_ value: Value) throws -> String {
        let data = try JSONEncoder().encode(value)
        guard let text = String(data: data, encoding: .utf8) else {
            throw WaitingRoomError(.invalidUse, message: "PostgreSQL state store: a record did not encode as UTF-8")
        }
        return text
    }

    /// A record read back from a JSON column.
    static func decode<Value: Decodable>(_ type: Value.Type, from text: String, table: String) throws -> Value {
        do {
            return try JSONDecoder().decode(type, from: Data(text.utf8))
        } catch {
            throw WaitingRoomError(.invalidResponse, message: "PostgreSQL state store: a row of \(table) is not a valid \(type): \(error)")
        }
    }

    /// `date` as JSON exactly as it appears inside an encoded record (for `jsonb_set`).
    static func jsonFragment(_ date: Date) throws -> String { try encode(date) }
}

extension Date {
    /// Seconds since 1970: the form of the date columns.
    package var postgresSeconds: Double { timeIntervalSince1970 }

    /// A date read from a date column.
    init(postgresSeconds seconds: Double) { self.init(timeIntervalSince1970: seconds) }
}
