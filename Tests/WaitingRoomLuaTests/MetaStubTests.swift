import Foundation
import Testing

@testable import WaitingRoomLua

/// Issue 26: `Scripts/wr.meta.lua` (the editor stubs) and the Lua bindings name the same
/// functions, methods and handlers.
@Suite("wr.meta.lua matches the bindings")
struct MetaStubTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()

    static func text(_ path: String) throws -> String {
        try String(contentsOf: root.appendingPathComponent(path), encoding: .utf8)
    }

    static func matches(_ pattern: String, in text: String) throws -> Set<String> {
        let regex = try NSRegularExpression(pattern: pattern, options: [.anchorsMatchLines])
        let range = NSRange(text.startIndex..., in: text)
        return Set(regex.matches(in: text, range: range).compactMap { Range($0.range(at: 1), in: text).map { String(text[$0]) } })
    }

    /// What `pairs(t)` lists in a fresh runtime.
    static func keys(_ table: String) async throws -> Set<String> {
        let runtime = try FlowRuntime()
        let result = await runtime.evaluate(
            "local t = {} for k in pairs(\(table)) do t[#t + 1] = k end table.sort(t) return table.concat(t, ' ')")
        guard case .values(let values) = result, let first = values.first else {
            Issue.record("\(result)")
            return []
        }
        return Set(first.trimmingCharacters(in: CharacterSet(charactersIn: "\"")).split(separator: " ").map(String.init))
    }

    @Test func theStubsNameWhatTheHostDefines() async throws {
        let meta = try Self.text("Scripts/wr.meta.lua")
        let roomAPI = try Self.text("Sources/WaitingRoomLua/FlowHost+RoomMethods.swift")
        let sessionAPI = try Self.text("Sources/WaitingRoomLua/FlowHost+SessionMethods.swift")

        // wr.* and wr.json.*: what a fresh runtime has
        // `wr.vendor`, `wr.config` and `wr.entry` are set while a flow runs (nil at a prompt)
        let wrKeys = try await Self.keys("wr").union(["vendor", "config", "entry"])
        let stubbed = try Self.matches(#"^function wr\.([a-z_]+)\("#, in: meta).union(try Self.matches(#"^wr\.([a-z_]+) ="#, in: meta))
        #expect(wrKeys == stubbed, "host only: \(wrKeys.subtracting(stubbed)); stubs only: \(stubbed.subtracting(wrKeys))")
        let jsonKeys = try await Self.keys("wr.json")
        let jsonStubs = try Self.matches(#"^function wr\.json\.([a-z_]+)\("#, in: meta).union(
            try Self.matches(#"^wr\.json\.([a-z_]+) ="#, in: meta))
        #expect(jsonKeys == jsonStubs, "host only: \(jsonKeys.subtracting(jsonStubs)); stubs only: \(jsonStubs.subtracting(jsonKeys))")

        // room and session methods, from the bindings' tables
        // an entry is `("name", closure)` on one line, or `(` with the name on the next (swift-format)
        let entry = #"^ {12}\((?:\n {16})?"([a-z_]+)","#
        let roomMethods = try Self.matches(entry, in: roomAPI)
        let sessionMethods = try Self.matches(entry, in: sessionAPI)
        #expect(roomMethods == ["try_pass", "release", "complete", "enqueue"])
        #expect(roomMethods == (try Self.matches(#"^function Room:([a-z_]+)\("#, in: meta)))
        #expect(sessionMethods == (try Self.matches(#"^function Session:([a-z_]+)\("#, in: meta)), "\(sessionMethods)")

        // the flow's handlers
        let handlers = try Self.matches(#"^---@field (on_[a-z_]+)\?"#, in: meta)
        #expect(handlers == Set(LuaEventNames.handlerNames), "stubs: \(handlers), host: \(LuaEventNames.handlerNames)")
        // every wr.on name the host knows is in the stub's list
        let onDoc = try #require(meta.range(of: "---Listen to an event of every session of this flow:"))
        let onText = String(meta[onDoc.lowerBound...].prefix(600))
        for name in LuaEventNames.listenerAliases.keys
        where name.contains("_")
            || ["success", "block", "error", "close", "restart", "complete", "state", "progress", "connection", "disabled"].contains(name)
        {
            #expect(onText.contains("\"\(name)\""), "wr.on(\"\(name)\") is not in the stub's list")
        }
    }
}
