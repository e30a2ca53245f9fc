import Foundation
import Testing
import WaitingRoom
import WaitingRoomEmulators

/// Issue 28 §4: `load --json` and `--report` carry the operators' figures, on the embedded emulator
/// (the pure functions: WaitingRoomLoadTests).
@Suite("load operators' figures from the command", .serialized, .timeLimit(.minutes(3)))
struct LoadCommandFiguresTests {
    static func json(_ text: String) throws -> [String: Any] {
        try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [String: Any], "not a JSON object: \(text)")
    }

    @Test func loadWithStateGivesEveryUserItsOwnVisit() async throws {
        let state = CLIProcess.temporaryDirectory() + "/state.sqlite"
        let result = try await CLIProcess.run(
            [
                "load", "--vendor", "queueit", "--emulator", "--scope", "demo", "--room", "sale", "--users", "8", "--hold", "0",
                "--arrivals", "uniform:4", "--state", state, "--json"
            ], timeout: .seconds(90))
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try Self.json(result.stdout)
        #expect((summary["outcomes"] as? [String: Any])?["passed"] as? Int == 8, "\(summary)")
        #expect((summary["requests"] as? [String: Any])?["enqueue (served)"] as? Int == 8, "every user enqueued: \(summary)")
        #expect((summary["replies"] as? [String: Any])?["queueittoken answers"] as? Int == 8, "\(summary)")
        #expect(FileManager.default.fileExists(atPath: state))
    }

    /// Against an emulator that is not embedded (here one in the test's process, reached only
    /// over loopback), fairness comes from the users' own times. A burst of users started
    /// together reached it, once, mostly in reverse start order: 87 % of pairs counted as order
    /// violations when arrival was each user's start. Arrival is now the vendor's first answer,
    /// and the emulator admits in the order it answered.
    @Test func aBurstAgainstAnEmulatorElsewhereIsMeasuredInTheOrderTheVendorSawIt() async throws {
        let suite = try EmulatorSuite(document: .object([:]))
        let server = try await suite.start(host: "127.0.0.1", port: 0)
        let defaults = try #require(EmulatorSuite.clientDefaults(for: server)["netfunnel"]?.objectValue)
        let serverURL = try #require(defaults["serverUrl"]?.stringValue)
        let clientID = try #require(defaults["clientId"]?.stringValue)
        let result = try await CLIProcess.run(
            [
                "load", "--vendor", "netfunnel", "--set", "serverUrl=\(serverURL)", "--set", "clientId=\(clientID)",
                "--set", "networkTimeout=10000", "--set", "retryCount=5",
                "--scope", "service_1", "--room", "act_10", "--users", "40", "--hold", "0.3", "--json"
            ], timeout: .seconds(120))
        await server.stop()
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try Self.json(result.stdout)
        #expect((summary["outcomes"] as? [String: Any])?["passed"] as? Int == 40, "\(summary)")
        let fairness = try #require(summary["fairness"] as? [String: Any])
        #expect((fairness["source"] as? String ?? "").contains("first answered"), "\(fairness)")
        let post = try #require(fairness["postStart"] as? [String: Any])
        let pairs = try #require(post["pairs"] as? Int)
        let violations = try #require(post["orderViolations"] as? Int)
        #expect(pairs == 40 * 39 / 2)
        // users let in within one poll of each other may see their passes out of order: a bound, not 0
        #expect(Double(violations) < 0.25 * Double(pairs), "\(violations) of \(pairs) pairs out of order: \(fairness)")
    }

    /// A run whose users do not pass says why: each outcome and vendor code with the vendor's
    /// message, in the summary, `--json` (`notPassed`) and the report (it said only "failed 2").
    @Test func usersWhoDoNotPassAreCountedByTheVendorsCodeWithItsMessage() async throws {
        let report = CLIProcess.temporaryDirectory() + "/not-passed.html"
        let result = try await CLIProcess.run(
            [
                "load", "--vendor", "queueit", "--emulator", "--scope", "demo", "--room", "nosuchroom", "--users", "3", "--hold", "0",
                "--json", "--report", report
            ], timeout: .seconds(90))
        #expect(result.status == 4, "\(result.stderr)")
        let summary = try Self.json(result.stdout)
        let groups = try #require(summary["notPassed"] as? [[String: Any]], "\(summary)")
        #expect(groups.count == 1, "\(groups)")
        #expect(
            groups.first?["outcome"] as? String == "failed" && groups.first?["code"] as? Int == 404 && groups.first?["users"] as? Int == 3)
        let message = (groups.first?["message"] as? String) ?? ""
        #expect(message.contains("unknown waiting room"), "\(groups)")
        let html = try String(contentsOfFile: report, encoding: .utf8)
        #expect(html.contains("Not passed, by the vendor") && html.contains("unknown waiting room"))
        let text = try await CLIProcess.run(
            [
                "load", "--vendor", "netfunnel", "--emulator", "--scope", "service_1", "--room", "segKey_block", "--users", "2", "--hold",
                "0"
            ], timeout: .seconds(90))
        #expect(text.stdout.contains("blocked 301 ×2: Block"), "\(text.stdout)")
        let passing = try await CLIProcess.run(
            [
                "load", "--vendor", "netfunnel", "--emulator", "--scope", "service_1", "--room", "act_10", "--users", "2", "--hold", "0",
                "--json"
            ], timeout: .seconds(90))
        #expect((try Self.json(passing.stdout)["notPassed"] as? [Any])?.isEmpty == true, "a run where all pass lists nothing")
    }

    @Test func queueItLoadReportsFlowsWaitAndAccuracy() async throws {
        let result = try await CLIProcess.run(
            [
                "load", "--vendor", "queueit", "--emulator", "--scope", "demo", "--room", "sale", "--users", "6", "--hold", "0", "--json"
            ], timeout: .seconds(90))
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try Self.json(result.stdout)
        let passed = try #require((summary["outcomes"] as? [String: Any])?["passed"] as? Int)
        #expect(passed == 6, "\(summary)")
        let inflow = try #require(summary["inflow"] as? [String: Any])
        let outflow = try #require(summary["outflow"] as? [String: Any])
        #expect(inflow["total"] as? Int == 6, "inflow total = users")
        #expect(outflow["total"] as? Int == passed, "outflow total = passed")
        #expect((inflow["perSecond"] as? [Int])?.reduce(0, +) == 6)
        #expect((outflow["perSecond"] as? [Int])?.reduce(0, +) == passed)
        #expect((inflow["meanPerSecond"] as? Double ?? 0) > 0 && (outflow["meanPerSecond"] as? Double ?? 0) > 0)
        let wait = try #require(summary["expectedWait"] as? [String: Any])
        #expect(wait["usersWithExpectation"] as? Int ?? 0 > 0, "Queue-it's queue page shows an expected wait: \(wait)")
        #expect((wait["compared"] as? Int ?? 0) <= passed)
        if wait["compared"] as? Int ?? 0 > 0 {
            let error = try #require(wait["error"] as? [String: Any])
            for key in ["p50", "p90", "p99", "mean"] { #expect(error[key] is Double, "error \(key)") }
        }
        let accuracy = try #require(summary["admissionAccuracy"] as? [String: Any])
        let perMinute = try #require(accuracy["configuredPerMinute"] as? Double, "the emulator configures sale's rate: \(accuracy)")
        #expect(perMinute > 0)
        let minutes = try #require(accuracy["perMinute"] as? [[String: Any]])
        #expect(!minutes.isEmpty)
        #expect(minutes.compactMap { $0["admitted"] as? Int }.reduce(0, +) == passed, "every admission in some minute")
        for minute in minutes {
            let admitted = try #require(minute["admitted"] as? Double)
            let expected = try #require(minute["expected"] as? Double)
            #expect(abs(try #require(minute["accuracy"] as? Double) - admitted / expected) < 0.01, "accuracy = admitted ÷ rate: \(minute)")
        }
        #expect(accuracy["overall"] as? Double ?? 0 > 0)
    }

    @Test func netfunnelLoadSaysNAForAccuracyAndWritesTheSectionIntoTheReport() async throws {
        let report = CLIProcess.temporaryDirectory() + "/report.html"
        let result = try await CLIProcess.run(
            [
                "load", "--vendor", "netfunnel", "--emulator", "--scope", "service_1", "--room", "act_10", "--users", "20",
                "--hold", "0.2", "--json", "--report", report
            ], timeout: .seconds(90))
        #expect(result.status == 0, "\(result.stderr)")
        let summary = try Self.json(result.stdout)
        #expect((summary["inflow"] as? [String: Any])?["total"] as? Int == 20)
        #expect((summary["outflow"] as? [String: Any])?["total"] as? Int == (summary["outcomes"] as? [String: Any])?["passed"] as? Int)
        let wait = try #require(summary["expectedWait"] as? [String: Any])
        #expect(wait["usersWithExpectation"] as? Int ?? 0 > 0, "NetFUNNEL's 201 replies carry an ETA: \(wait)")
        let accuracy = try #require(summary["admissionAccuracy"] as? [String: Any])
        #expect(accuracy["configuredPerMinute"] is NSNull && accuracy["overall"] is NSNull, "\(accuracy)")
        #expect((accuracy["source"] as? String)?.hasPrefix("n/a") == true, "NetFUNNEL limits users inside; no rate: \(accuracy)")
        let html = try String(contentsOfFile: report, encoding: .utf8)
        for part in ["Operators' view", "id=\"chart-flow\"", "id=\"op-wait\"", "id=\"op-minutes\"", "\"inflow\"", "n/a"] {
            #expect(html.contains(part), "the report has \(part)")
        }
    }
}
