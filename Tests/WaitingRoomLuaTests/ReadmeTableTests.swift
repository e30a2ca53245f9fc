import CrowdHandler
import Foundation
import NetFUNNEL
import QueueIt
import Testing
import WaitingRoom

@testable import WaitingRoomLua

/// Issue 25: each vendor README's tables match the code: its code table lists every case of the
/// vendor's code enum (and no code the enum lacks), and its signals table maps every core event
/// to the Lua handler and `wr.on` name the Lua host really uses.
@Suite("Vendor READMEs match the code")
struct ReadmeTableTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func readme(_ vendor: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent("Vendors/\(vendor)/README.md"), encoding: .utf8)
    }

    /// The table rows (cells, trimmed) of the section whose heading starts with `heading`.
    static func rows(_ text: String, section heading: String) -> [[String]] {
        var inSection = false
        var rows: [[String]] = []
        for line in text.split(separator: "\n", omittingEmptySubsequences: false) {
            if line.hasPrefix("#") {
                if inSection, !rows.isEmpty { break }
                inSection = line.replacingOccurrences(of: "#", with: "").trimmingCharacters(in: .whitespaces).hasPrefix(heading)
                continue
            }
            guard inSection, line.hasPrefix("|") else {
                if inSection, !rows.isEmpty, !line.hasPrefix("|") { break }
                continue
            }
            let cells = line.split(separator: "|", omittingEmptySubsequences: false).dropFirst().dropLast()
                .map { $0.trimmingCharacters(in: .whitespaces) }
            rows.append(cells)
        }
        // header and separator
        return Array(rows.dropFirst(2))
    }

    static func unquoted(_ cell: String) -> String { cell.replacingOccurrences(of: "`", with: "") }

    @Test("Signals tables: every core event, its Lua handler and wr.on name", arguments: ["NetFUNNEL", "QueueIt", "CrowdHandler"])
    func signals(_ vendor: String) throws {
        let rows = Self.rows(try Self.readme(vendor), section: "Signals")
        try #require(!rows.isEmpty, "\(vendor)/README.md has no Signals table")
        var seen = Set<EventName>()
        for row in rows {
            try #require(row.count == 4, "\(vendor): row \(row)")
            let event = try #require(EventName(rawValue: Self.unquoted(row[1])), "\(vendor): unknown core event \(row[1])")
            #expect(seen.insert(event).inserted, "\(vendor): \(event) listed twice")
            #expect(
                Self.unquoted(row[2]) == LuaEventNames.handlers[event],
                "\(vendor): \(event) is handled by \(LuaEventNames.handlers[event] ?? "none"), the README says \(row[2])")
            #expect(LuaEventNames.listenerAliases[Self.unquoted(row[3])] == event, "\(vendor): wr.on(\"\(row[3])\") is not \(event)")
        }
        let expected = Set(EventName.allCases).subtracting([.stateChanged])
        #expect(seen == expected, "\(vendor): missing \(expected.subtracting(seen)), extra \(seen.subtracting(expected))")
        // Every handler a flow may define is some event's.
        #expect(Set(LuaEventNames.handlerNames) == Set(LuaEventNames.handlers.values))
    }

    /// The codes in a code table's first column (`200`, `-100`, `506–517`).
    static func codes(_ rows: [[String]]) -> [(ClosedRange<Int>, row: [String])] {
        rows.compactMap { row in
            let first = row[0].replacingOccurrences(of: "−", with: "-")
            let parts = first.split(separator: "–").map { Int($0.trimmingCharacters(in: .whitespaces)) }
            if parts.count == 1, let a = parts[0] { return (a...a, row) }
            if parts.count == 2, let a = parts[0], let b = parts[1] { return (a...b, row) }
            return nil
        }
    }

    func check(_ vendor: String, section: String, cases: [Int], allowedExtra: Set<Int> = []) throws {
        let table = Self.codes(Self.rows(try Self.readme(vendor), section: section))
        try #require(!table.isEmpty, "\(vendor): no code table under \(section)")
        for code in cases {
            #expect(table.contains { $0.0.contains(code) }, "\(vendor): code \(code) of the enum is not in the README's table")
        }
        for (range, row) in table where range.count == 1 {
            #expect(
                cases.contains(range.lowerBound) || allowedExtra.contains(range.lowerBound),
                "\(vendor): the README lists \(range.lowerBound) (\(row)) but the code table has no such case")
        }
    }

    @Test func codeTables() throws {
        try check("NetFUNNEL", section: "The code table", cases: NetFUNNELStatusCode.allCases.map(\.rawValue))
        // 499 is the core's cancel status, listed for completeness.
        try check("QueueIt", section: "Codes", cases: QueueItErrorCode.allCases.map(\.rawValue), allowedExtra: [499])
        try check("CrowdHandler", section: "Status codes", cases: CrowdHandlerCode.allCases.map(\.rawValue))
    }
}
