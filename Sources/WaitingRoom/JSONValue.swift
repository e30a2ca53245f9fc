import Foundation

/// A JSON document as a value: what Lua tables, CLI config files and dictionaries become
/// before a vendor configuration reads them.
public enum JSONValue: Hashable, Sendable, Codable, CustomStringConvertible {
    case null
    case bool(Bool)
    case number(Double)
    case string(String)
    case array([JSONValue])
    case object([String: JSONValue])

    public init(from decoder: any Decoder) throws {
        let c = try decoder.singleValueContainer()
        if c.decodeNil() { self = .null }
        else if let b = try? c.decode(Bool.self) { self = .bool(b) }
        else if let n = try? c.decode(Double.self) { self = .number(n) }
        else if let s = try? c.decode(String.self) { self = .string(s) }
        else if let a = try? c.decode([JSONValue].self) { self = .array(a) }
        else if let o = try? c.decode([String: JSONValue].self) { self = .object(o) }
        else { throw DecodingError.dataCorruptedError(in: c, debugDescription: "not a JSON value") }
    }

    public func encode(to encoder: any Encoder) throws {
        var c = encoder.singleValueContainer()
        switch self {
        case .null: try c.encodeNil()
        case .bool(let b): try c.encode(b)
        case .number(let n):
            if n.rounded() == n, abs(n) < 1e15 { try c.encode(Int64(n)) } else { try c.encode(n) }
        case .string(let s): try c.encode(s)
        case .array(let a): try c.encode(a)
        case .object(let o): try c.encode(o)
        }
    }

    /// Parses JSON text; the error says where the text is malformed.
    public static func parse(_ data: Data) throws -> JSONValue {
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw WaitingRoomError(.invalidResponse, message: "not valid JSON: \(JSONValue.describe(error))")
        }
    }

    /// Parses JSON text from a string.
    public static func parse(_ text: String) throws -> JSONValue { try parse(Data(text.utf8)) }

    /// Compact JSON text (keys sorted, so output is stable).
    public var jsonText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    public var description: String { jsonText }

    /// The object's members, or nil.
    public var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o } else { return nil } }
    /// The string, or nil.
    public var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The number, or nil.
    public var numberValue: Double? { if case .number(let n) = self { return n } else { return nil } }
    /// The bool, or nil.
    public var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    /// The array, or nil.
    public var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }

    /// Member lookup on objects (nil otherwise).
    public subscript(key: String) -> JSONValue? { objectValue?[key] }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let ctx):
            return ctx.underlyingError.map { "\($0.localizedDescription)" } ?? ctx.debugDescription
        default:
            return "\(error)"
        }
    }
}
