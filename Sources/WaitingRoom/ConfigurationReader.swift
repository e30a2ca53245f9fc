/// Reads typed fields out of a JSON configuration object, with errors that name the field
/// (as a path such as `netfunnel.retryCount`) and say what was expected.
package struct ConfigurationReader: Sendable {
    /// The object being read.
    package let object: [String: JSONValue]
    /// The path prefix used in error messages (`""` at the top).
    package let path: String
    /// The vendor id put on errors.
    package let vendor: String?

    /// Creates a reader over `value`, which must be an object.
    package init(_ value: JSONValue, path: String = "", vendor: String? = nil) throws {
        guard case .object(let object) = value else {
            throw WaitingRoomError.invalidConfiguration(
                field: path.isEmpty ? "configuration" : path,
                "expected a JSON object, got \(value.jsonText.prefix(40))", vendor: vendor)
        }
        self.object = object
        self.path = path
        self.vendor = vendor
    }

    /// The full name of `key` for messages.
    package func fieldName(_ key: String) -> String { path.isEmpty ? key : "\(path).\(key)" }

    /// Fails when the object has keys outside `known` (catches typos in configs).
    package func rejectUnknownKeys(_ known: Set<String>) throws {
        for key in object.keys.sorted() where !known.contains(key) {
            throw WaitingRoomError.invalidConfiguration(
                field: fieldName(key), "unknown setting; expected one of \(known.sorted().joined(separator: ", "))", vendor: vendor)
        }
    }

    /// An optional string.
    package func string(_ key: String) throws -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard case .string(let s) = value else { throw typeError(key, "a string", value) }
        return s
    }

    /// A required string.
    package func requiredString(_ key: String) throws -> String {
        guard let s = try string(key) else {
            throw WaitingRoomError.invalidConfiguration(field: fieldName(key), "is required (a string)", vendor: vendor)
        }
        return s
    }

    /// An optional bool.
    package func bool(_ key: String) throws -> Bool? {
        guard let value = object[key], value != .null else { return nil }
        guard case .bool(let b) = value else { throw typeError(key, "true or false", value) }
        return b
    }

    /// An optional integer, checked against `range` when given.
    package func int(_ key: String, range: ClosedRange<Int>? = nil, unit: String = "") throws -> Int? {
        guard let value = object[key], value != .null else { return nil }
        guard case .number(let n) = value, n.rounded() == n, abs(n) < 9e15 else { throw typeError(key, "a whole number", value) }
        let i = Int(n)
        if let range, !range.contains(i) {
            throw WaitingRoomError.outOfRange(field: fieldName(key), value: i, range: range, unit: unit, vendor: vendor)
        }
        return i
    }

    /// An optional number, checked against `range` when given.
    package func double(_ key: String, range: ClosedRange<Double>? = nil) throws -> Double? {
        guard let value = object[key], value != .null else { return nil }
        guard case .number(let n) = value, n.isFinite else { throw typeError(key, "a number", value) }
        if let range, !range.contains(n) {
            throw WaitingRoomError.outOfRange(field: fieldName(key), value: n, range: range, vendor: vendor)
        }
        return n
    }

    /// An optional object, as a nested reader.
    package func object(_ key: String) throws -> ConfigurationReader? {
        guard let value = object[key], value != .null else { return nil }
        return try ConfigurationReader(value, path: fieldName(key), vendor: vendor)
    }

    /// An optional array of strings.
    package func strings(_ key: String) throws -> [String]? {
        guard let value = object[key], value != .null else { return nil }
        guard case .array(let items) = value else { throw typeError(key, "an array of strings", value) }
        return try items.enumerated().map { index, item in
            guard case .string(let s) = item else { throw typeError("\(key)[\(index)]", "a string", item) }
            return s
        }
    }

    private func typeError(_ key: String, _ expected: String, _ got: JSONValue) -> WaitingRoomError {
        .invalidConfiguration(field: fieldName(key), "expected \(expected), got \(got.jsonText.prefix(40))", vendor: vendor)
    }
}
