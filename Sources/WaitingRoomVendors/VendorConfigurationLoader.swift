import Foundation
import WaitingRoom

/// Reads a vendor configuration for the CLI and the gate: a JSON file (the vendor's object, or a document
/// with a member named after the vendor), then `KEY=VALUE` overrides.
package enum VendorConfigurationLoader {
    package static func load(vendor: String, file: String?, settings: [String]) throws -> JSONValue {
        var object: [String: JSONValue] = [:]
        if let file {
            let document = try readJSON(file)
            guard case .object(let top) = document else {
                throw WaitingRoomError.invalidConfiguration(field: file, "expected a JSON object")
            }
            if case .object(let member)? = top[vendor] { object = member } else { object = top }
        }
        for setting in settings {
            guard let eq = setting.firstIndex(of: "="), eq != setting.startIndex else {
                throw WaitingRoomError.invalidConfiguration(field: "--set", "expected KEY=VALUE, got \"\(setting)\"")
            }
            let key = String(setting[..<eq])
            let raw = String(setting[setting.index(after: eq)...])
            object[key] = typed(raw)
        }
        return .object(object)
    }

    /// `VENDOR.KEY=VALUE` settings (`run --set`) as a document with one member per vendor.
    /// - Throws: `.invalidConfiguration` (field `--set`) for a setting without `=`, without a
    ///   vendor prefix, or naming a vendor that is not registered.
    package static func vendorSettings(_ settings: [String], vendors: [String]) throws -> JSONValue {
        var document: [String: [String: JSONValue]] = [:]
        for setting in settings {
            guard let eq = setting.firstIndex(of: "="), let dot = setting[..<eq].firstIndex(of: "."),
                dot != setting.startIndex, setting.index(after: dot) < eq
            else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "--set", "expected VENDOR.KEY=VALUE (for example netfunnel.retryCount=3), got \"\(setting)\"")
            }
            let vendor = String(setting[..<dot])
            guard vendors.contains(vendor) else {
                throw WaitingRoomError.invalidConfiguration(
                    field: "--set", "no vendor \"\(vendor)\" in \"\(setting)\"; registered: \(vendors.joined(separator: ", "))")
            }
            let key = String(setting[setting.index(after: dot)..<eq])
            document[vendor, default: [:]][key] = typed(String(setting[setting.index(after: eq)...]))
        }
        return .object(document.mapValues { .object($0) })
    }

    /// `true`/`false`, numbers, JSON literals; anything else is a string.
    package static func typed(_ raw: String) -> JSONValue {
        if raw == "true" { return .bool(true) }
        if raw == "false" { return .bool(false) }
        if let n = Double(raw), !raw.isEmpty, raw.first != "+" { return .number(n) }
        if raw.hasPrefix("{") || raw.hasPrefix("["), let v = try? JSONValue.parse(raw) { return v }
        return .string(raw)
    }

    /// The most of a JSON file the CLI reads (configurations, fault lists).
    package static let jsonFileLimit = 16 * 1024 * 1024

    /// A file's bytes, at most `limit`: a larger regular file is refused before it is read (a
    /// 300 MB file was read whole, then refused).
    /// - Throws: `.invalidConfiguration` naming the file: missing, unreadable or too large.
    package static func contents(_ path: String, limit: Int) throws -> Data {
        if let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            attributes[.type] as? FileAttributeType == .typeRegular,
            let size = (attributes[.size] as? NSNumber)?.intValue, size > limit
        {
            throw WaitingRoomError.invalidConfiguration(field: path, "the file is \(size) bytes; at most \(limit) are read")
        }
        guard let data = FileManager.default.contents(atPath: path) else {
            throw WaitingRoomError.invalidConfiguration(field: path, "cannot read the file (missing or not readable)")
        }
        guard data.count <= limit else {
            throw WaitingRoomError.invalidConfiguration(field: path, "the file is \(data.count) bytes; at most \(limit) are read")
        }
        return data
    }

    /// Reads and parses a JSON file; errors name the file and say what is wrong.
    package static func readJSON(_ path: String) throws -> JSONValue {
        let data = try contents(path, limit: jsonFileLimit)
        do {
            return try JSONValue.parse(data)
        } catch let error as WaitingRoomError {
            throw WaitingRoomError.invalidConfiguration(field: path, error.message)
        }
    }
}
