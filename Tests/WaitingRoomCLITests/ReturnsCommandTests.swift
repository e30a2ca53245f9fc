import Foundation
import Testing
import WaitingRoom

@testable import WaitingRoomCLI

/// `waitingroom returns` run as a child process against SQLite files the test writes.
@Suite("waitingroom returns", .timeLimit(.minutes(3)))
struct ReturnsCommandTests {
    /// A journal with one key of a process that died a minute ago (its lease lapsed).
    static func storeWithADeadProcessKey() async throws -> String {
        let path = CLIProcess.temporaryDirectory() + "/state.sqlite"
        let store = try await StateOptions.open(path)
        let now = Date()
        try await store.recordHeldKey(
            HeldKey(
                vendor: "netfunnel", room: RoomKey(scope: "service_1", room: "segKey_basic"), key: "0000DEADKEY",
                takenAt: now.addingTimeInterval(-60),
                expiresAt: now.addingTimeInterval(600), owner: "host/1/dead", leaseUntil: now.addingTimeInterval(-50)))
        try await store.close()
        return path
    }

    @Test func aMistypedStorePathIsABadUsageAndCreatesNothing() async throws {
        let path = CLIProcess.temporaryDirectory() + "/no-such-state.sqlite"
        let result = try await CLIProcess.run(["returns", "--state", path, "--vendor", "netfunnel", "--list"])
        #expect(result.status == 64, "\(result.stdout)\n\(result.stderr)")
        #expect(result.stderr.contains("no state store at \(path)"), "\(result.stderr)")
        #expect(!FileManager.default.fileExists(atPath: path), "listing created no store")
    }

    @Test func listShowsTheJournalWithoutClaimingIt() async throws {
        let path = try await Self.storeWithADeadProcessKey()
        let result = try await CLIProcess.run(["returns", "--state", path, "--vendor", "netfunnel", "--list", "--json"])
        #expect(result.status == 0, "\(result.stderr)")
        let keys = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [[String: Any]], "\(result.stdout)")
        #expect(keys.count == 1)
        #expect(keys.first?["owner"] as? String == "host/1/dead")
        #expect(keys.first?["vendor"] as? String == "netfunnel")
        // still the dead process's: listing claims nothing
        let store = try await StateOptions.open(path)
        #expect(try await store.heldKeys().map(\.owner) == ["host/1/dead"])
        try await store.close()
    }

    @Test func theKeysOfADeadProcessAreClaimedAndLeaveTheJournal() async throws {
        let path = try await Self.storeWithADeadProcessKey()
        let result = try await CLIProcess.run(
            ["returns", "--state", path, "--vendor", "netfunnel", "--emulator", "--bound", "5", "--wait", "0", "--json"],
            timeout: .seconds(60))
        #expect(result.status == 0, "\(result.stdout)\n\(result.stderr)")
        let report = try #require(try JSONSerialization.jsonObject(with: Data(result.stdout.utf8)) as? [String: Any], "\(result.stdout)")
        #expect(report["claimed"] as? Int == 1, "\(report)")
        #expect(report["left_in_journal"] as? Int == 0, "\(report)")
        #expect(report["gave_up"] as? Int == 0, "\(report)")
        // The embedded emulator never handed this key out: its 5004 says the key does not exist.
        #expect(report["already_gone"] as? Int == 1, "\(report)")
        #expect((report["keys"] as? [[String: Any]])?.first?["result"] as? String == "alreadyGone", "\(report)")
        let store = try await StateOptions.open(path)
        #expect(try await store.heldKeys().isEmpty)
        try await store.close()
    }
}
