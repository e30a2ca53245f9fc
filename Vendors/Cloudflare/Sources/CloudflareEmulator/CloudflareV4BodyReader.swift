import WaitingRoom

/// Reads a management request's JSON body field by field, collecting an error for every field
/// that is missing, of the wrong type or out of range (Cloudflare names each bad field), instead
/// of stopping at the first. A field given as JSON `null` reads as absent.
struct CloudflareV4BodyReader {
    let object: [String: JSONValue]
    private(set) var errors: [CloudflareV4Error] = []

    /// - Throws: ``CloudflareV4Failure`` (400) when `body` is not a JSON object.
    init(_ body: JSONValue) throws(CloudflareV4Failure) {
        guard let object = body.objectValue else {
            throw .badRequest([CloudflareV4Error(.invalidBody, "the body must be a JSON object")])
        }
        self.object = object
    }

    /// Whether `key` is given with a value other than null.
    func has(_ key: String) -> Bool { object[key].map { $0 != .null } ?? false }

    mutating func fail(_ key: String, _ problem: String) { errors.append(.field(key, problem)) }

    /// An error for every key not in `allowed`.
    mutating func rejectUnknown(_ allowed: Set<String>) {
        for key in object.keys.sorted() where !allowed.contains(key) {
            fail(key, "is not a field of this resource (the emulator names unknown fields rather than ignore them)")
        }
    }

    mutating func required(_ keys: [String]) {
        for key in keys where !has(key) { fail(key, "is required") }
    }

    mutating func string(_ key: String, maxLength: Int = 100_000, check: ((String) -> String?)? = nil) -> String? {
        guard let value = object[key], value != .null else { return nil }
        guard let s = value.stringValue else {
            fail(key, "expected a string, got \(Self.kind(value))")
            return nil
        }
        if s.utf8.count > maxLength {
            fail(key, "longer than \(maxLength) bytes")
            return nil
        }
        if let problem = check?(s) {
            fail(key, problem)
            return nil
        }
        return s
    }

    mutating func int(_ key: String, range: ClosedRange<Int>) -> Int? {
        guard let value = object[key], value != .null else { return nil }
        guard let n = value.numberValue, n.rounded() == n, abs(n) < 1e15 else {
            fail(key, "expected an integer, got \(Self.kind(value))")
            return nil
        }
        guard range.contains(Int(n)) else {
            fail(key, "expected \(range.lowerBound) to \(range.upperBound), got \(Int(n))")
            return nil
        }
        return Int(n)
    }

    mutating func bool(_ key: String) -> Bool? {
        guard let value = object[key], value != .null else { return nil }
        guard let b = value.boolValue else {
            fail(key, "expected true or false, got \(Self.kind(value))")
            return nil
        }
        return b
    }

    mutating func oneOf(_ key: String, _ allowed: [String]) -> String? {
        string(key) { allowed.contains($0) ? nil : "expected one of \(allowed.joined(separator: ", ")), got \"\($0.prefix(80))\"" }
    }

    /// What kind of JSON value `value` is, for messages.
    static func kind(_ value: JSONValue) -> String {
        switch value {
        case .null: "null"
        case .bool(let b): "\(b)"
        case .number(let n): n.rounded() == n && abs(n) < 1e15 ? "\(Int(n))" : "\(n)"
        case .string(let s): "the string \"\(s.prefix(40))\""
        case .array: "an array"
        case .object: "an object"
        }
    }

    /// Whether `name` is 1 to 255 letters, digits, `-` or `_` (Cloudflare: "Only alphanumeric
    /// characters, hyphens and underscores are allowed"; the length bound is the emulator's).
    static func nameProblem(_ name: String) -> String? {
        let ok =
            !name.isEmpty && name.utf8.count <= 255
            && name.utf8.allSatisfy { b in
                switch b {
                case UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
                    UInt8(ascii: "-"), UInt8(ascii: "_"):
                    true
                default: false
                }
            }
        return ok ? nil : "expected 1 to 255 letters, digits, hyphens or underscores, got \"\(name.prefix(80))\""
    }
}
