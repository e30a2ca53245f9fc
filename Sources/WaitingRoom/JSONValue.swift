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
        if c.decodeNil() {
            self = .null
        } else if let b = try? c.decode(Bool.self) {
            self = .bool(b)
        } else if let n = try? c.decode(Double.self) {
            self = .number(n)
        } else if let s = try? c.decode(String.self) {
            self = .string(s)
        } else if let a = try? c.decode([JSONValue].self) {
            self = .array(a)
        } else if let o = try? c.decode([String: JSONValue].self) {
            self = .object(o)
        } else {
            throw DecodingError.dataCorruptedError(in: c, debugDescription: "not a JSON value")
        }
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

    /// The deepest nesting ``parse(_:)-(Data)`` accepts: arrays and objects inside each other.
    /// Vendor answers, configurations and flow data nest a few levels; the bound keeps a hostile
    /// document cheap (decoding cost grows with the cube of the depth: 500 levels in 1 KB took
    /// 1.3 s), and matches how deep a Lua table may nest on its way to JSON.
    package static let maximumDepth = 64

    /// Parses JSON text; the error says where the text is malformed, or that it nests deeper
    /// than ``maximumDepth``.
    package static func parse(_ data: Data) throws -> JSONValue {
        if nestsTooDeeply(data) {
            throw WaitingRoomError(
                .invalidResponse, message: "not valid JSON: arrays and objects nested more than \(maximumDepth) levels deep")
        }
        do {
            return try JSONDecoder().decode(JSONValue.self, from: data)
        } catch {
            throw WaitingRoomError(.invalidResponse, message: "not valid JSON: \(JSONValue.describe(error))")
        }
    }

    /// Parses JSON text from a string.
    package static func parse(_ text: String) throws -> JSONValue { try parse(Data(text.utf8)) }

    /// Whether `data` opens more than ``maximumDepth`` arrays or objects inside each other
    /// (brackets inside strings do not count). One pass over the bytes; whether the text is
    /// otherwise JSON is the decoder's to say.
    static func nestsTooDeeply(_ data: Data) -> Bool {
        var depth = 0
        var inString = false
        var escaped = false
        for byte in data {
            if inString {
                if escaped {
                    escaped = false
                } else if byte == UInt8(ascii: "\\") {
                    escaped = true
                } else if byte == UInt8(ascii: "\"") {
                    inString = false
                }
                continue
            }
            switch byte {
            case UInt8(ascii: "\""): inString = true
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                depth += 1
                if depth > maximumDepth { return true }
            case UInt8(ascii: "]"), UInt8(ascii: "}"): depth -= 1
            default: break
            }
        }
        return false
    }

    /// Compact JSON text (keys sorted, so output is stable).
    package var jsonText: String {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let data = try? encoder.encode(self) else { return "null" }
        return String(decoding: data, as: UTF8.self)
    }

    public var description: String { jsonText }

    /// The object's members, or nil.
    package var objectValue: [String: JSONValue]? { if case .object(let o) = self { return o } else { return nil } }
    /// The string, or nil.
    package var stringValue: String? { if case .string(let s) = self { return s } else { return nil } }
    /// The number, or nil.
    package var numberValue: Double? { if case .number(let n) = self { return n } else { return nil } }
    /// The bool, or nil.
    package var boolValue: Bool? { if case .bool(let b) = self { return b } else { return nil } }
    /// The array, or nil.
    package var arrayValue: [JSONValue]? { if case .array(let a) = self { return a } else { return nil } }

    /// Member lookup on objects (nil otherwise).
    package subscript(key: String) -> JSONValue? { objectValue?[key] }

    static func describe(_ error: any Error) -> String {
        switch error {
        case DecodingError.dataCorrupted(let ctx):
            return ctx.underlyingError.map { "\($0.localizedDescription)" } ?? ctx.debugDescription
        default:
            return "\(error)"
        }
    }
}
