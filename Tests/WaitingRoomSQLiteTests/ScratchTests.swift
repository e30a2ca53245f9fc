import Foundation
import Testing
import WaitingRoom
import WaitingRoomSQLite
import WaitingRoomTesting

@Suite("scratch")
struct ScratchTests {
    @Test func contention() async throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("wr-sqlite-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let path = folder.appendingPathComponent("s.sqlite").path
        let clock = VirtualClock()
        let now = clock.now()
        var handles: [SQLiteStateStore] = []
        for _ in 0..<4 { handles.append(try await SQLiteStateStore.open(path: path, clock: clock)) }
        for i in 0..<200 {
            try await handles[0].recordHeldKey(HeldKey(vendor: "v", room: RoomKey(scope: "a", room: "b"), key: "race-\(i)", takenAt: now, owner: "dead", leaseUntil: now))
        }
        let opened = handles
        let t0 = ContinuousClock.now
        try await withThrowingTaskGroup(of: Void.self) { group in
            for (index, handle) in opened.enumerated() {
                group.addTask {
                    for round in 0..<10 {
                        let s = ContinuousClock.now
                        let got = try await handle.claimHeldKeys(vendor: "v", owner: "c\(index)", now: now.addingTimeInterval(1), leaseUntil: now.addingTimeInterval(100), limit: 7)
                        print("handle \(index) round \(round) got \(got.count) in \(ContinuousClock.now - s) at \(ContinuousClock.now - t0)")
                    }
                }
            }
            try await group.waitForAll()
        }
        for h in handles { try await h.close() }
    }
}
