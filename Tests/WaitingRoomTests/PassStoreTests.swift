import Foundation
import Testing
import WaitingRoom
import WaitingRoomTesting

@Suite("PassStore")
struct PassStoreTests {
    let clock = VirtualClock()

    func pass(_ room: String, expiresIn seconds: Double?) -> Pass {
        Pass(
            vendor: "v", room: RoomKey(scope: "s", room: room), credential: "token-\(room)", kind: .token,
            issuedAt: clock.now(), expiresAt: seconds.map { clock.now().addingTimeInterval($0) })
    }

    func temporaryPath() -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("wr-passstore-\(UUID().uuidString)")
        try? FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        return dir.appendingPathComponent("passes.json").path
    }

    @Test func memoryStoreForgetsExpiredPassesByTheInjectedClock() async throws {
        let store = MemoryPassStore(clock: clock)
        await store.save(pass("a", expiresIn: 60))
        await store.save(pass("b", expiresIn: nil))
        #expect(await store.pass(vendor: "v", room: RoomKey(scope: "s", room: "a")) != nil)
        clock.advance(by: .seconds(61))
        #expect(await store.pass(vendor: "v", room: RoomKey(scope: "s", room: "a")) == nil)
        #expect(await store.all().map(\.room.room) == ["b"])
    }

    @Test func fileStoreRoundTripsWithMode0600() async throws {
        let path = temporaryPath()
        let store = FilePassStore(path: path, clock: clock)
        try await store.save(pass("a", expiresIn: 60))
        try await store.save(pass("b", expiresIn: 120))
        let attributes = try FileManager.default.attributesOfItem(atPath: path)
        #expect((attributes[.posixPermissions] as? NSNumber)?.intValue == 0o600)
        let reopened = FilePassStore(path: path, clock: clock)
        #expect(try await reopened.all().count == 2)
        clock.advance(by: .seconds(90))
        #expect(try await reopened.pass(vendor: "v", room: RoomKey(scope: "s", room: "a")) == nil)
        #expect(try await reopened.pass(vendor: "v", room: RoomKey(scope: "s", room: "b"))?.credential == "token-b")
        // no temporary files left behind
        let folder = (path as NSString).deletingLastPathComponent
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["passes.json"])
    }

    @Test func aTruncatedFileIsReportedMovedAsideAndItsReadablePassesKept() async throws {
        let path = temporaryPath()
        let store = FilePassStore(path: path, clock: clock)
        for room in ["a", "b", "c"] { try await store.save(pass(room, expiresIn: 600)) }
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes = bytes.prefix(bytes.count - 40)  // cut into the last pass
        try bytes.write(to: URL(fileURLWithPath: path))

        let reopened = FilePassStore(path: path, clock: clock)
        let kept = try await reopened.all().map(\.room.room)
        #expect(kept == ["a", "b"])
        let problems = await reopened.problems
        #expect(problems.count == 1)
        #expect(problems.first?.contains("kept 2") == true)
        let folder = (path as NSString).deletingLastPathComponent
        let names = try FileManager.default.contentsOfDirectory(atPath: folder)
        #expect(names.contains { $0.hasPrefix("passes.json.corrupt-") })
        // the rewritten store is sound again
        let third = FilePassStore(path: path, clock: clock)
        #expect(try await third.all().count == 2)
        #expect(await third.problems.isEmpty)
    }

    @Test func garbageInTheFileNeverCrashes() async throws {
        let path = temporaryPath()
        for garbage in ["", "{", " { \"vers", "{\"version\":1,\"passes\":[{\"vendor\":1}]}", "{\"version\": 2, \"passes\": 7}"] {
            try Data(garbage.utf8).write(to: URL(fileURLWithPath: path))
            let store = FilePassStore(path: path, clock: clock)
            #expect(try await store.all().isEmpty)
            try await store.save(pass("x", expiresIn: 5))
            #expect(try await store.all().count == 1)
            try? FileManager.default.removeItem(atPath: path)
        }
    }

    /// A file that is not a store file is someone else's: refused at every call, never moved
    /// aside or written over (`--state package.json` moved it aside as damage and wrote a store
    /// in its place).
    @Test func someoneElsesFileIsRefusedAndLeftAsItIs() async throws {
        let path = temporaryPath()
        let folder = (path as NSString).deletingLastPathComponent
        for content in [
            "null", "[1,2,3]", "\u{0}\u{1}binary", #"{"name": "my-app", "version": "1.0.0"}"#, "root:x:0:0:root:/root:/bin/bash\n"
        ] {
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
            let store = FilePassStore(path: path, clock: clock)
            for _ in 0..<2 {
                let error = await #expect(throws: WaitingRoomError.self) { try await store.open() }
                #expect(error?.kind == .invalidConfiguration && error?.field == "passStore")
                #expect(error?.message.contains("nothing was changed") == true, "\(String(describing: error))")
                await #expect(throws: WaitingRoomError.self) { try await store.save(pass("x", expiresIn: 5)) }
            }
            #expect(try String(contentsOfFile: path, encoding: .utf8) == content)
            #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["passes.json"], "\(content)")
            try FileManager.default.removeItem(atPath: path)
        }
        // a path that is there but cannot be read (a directory here; a file without permission
        // for other users than root) is refused too: it was taken for a missing file, and the
        // first save replaced it
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: false)
        try Data("mine".utf8).write(to: URL(fileURLWithPath: path + "/inside.txt"))
        let store = FilePassStore(path: path, clock: clock)
        let error = await #expect(throws: WaitingRoomError.self) { try await store.open() }
        #expect(
            error?.kind == .invalidConfiguration && error?.message.contains("cannot be read (a directory)") == true,
            "\(String(describing: error))")
        await #expect(throws: WaitingRoomError.self) { try await store.save(pass("x", expiresIn: 5)) }
        #expect(try FileManager.default.contentsOfDirectory(atPath: path) == ["inside.txt"])
        #expect(try FileManager.default.contentsOfDirectory(atPath: folder) == ["passes.json"])
        // in a folder that does not exist, every save (and a held key's journal entry) would
        // fail after the key was taken: refused at once
        let nowhere = FilePassStore(path: folder + "/missing/state.json", clock: clock)
        let missing = await #expect(throws: WaitingRoomError.self) { try await nowhere.open() }
        #expect(
            missing?.kind == .invalidConfiguration && missing?.message.contains("does not exist") == true, "\(String(describing: missing))")
    }
}
