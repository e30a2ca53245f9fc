import Foundation
import Testing

/// Issue 15 items 4 and 12 (and the labelling of every other item): the vendor README cites the
/// vendor's own sources and lists each deliberate difference in its table.
struct ReadmeTests {
    static var readme: String {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("README.md")
        return (try? String(contentsOf: url, encoding: .utf8)) ?? ""
    }

    @Test func citesTheVendorSourcesNotAnAbsentReference() {
        let text = Self.readme
        #expect(!text.isEmpty)
        #expect(!text.contains("shared/reference"), "the README cites a path that is not in the repository")
        #expect(!text.contains("§"), "section numbers of a document that is not in the repository")
        for repo in ["queueit/ios-webui-sdk", "queueit/android-webui-sdk", "queueit/KnownUser.V3.Javascript",
                     "queueit/QueueToken.V1.JavaScript", "queueit/QueueToken.V1.JAVA"] {
            #expect(text.contains(repo), "\(repo) is not cited")
        }
    }

    @Test func everyDeliberateDifferenceHasARow() throws {
        let text = Self.readme
        let start = try #require(text.range(of: "## Where we deliberately differ"))
        let table = text[start.upperBound...]
        let section = table.range(of: "\n## ").map { table[..<$0.lowerBound] } ?? table
        for row in ["| `sdkVersion` default |", "| `userAgent` default |", "| `Content-Type` of enqueue |",
                    "| unavailable message |", "| `queueit://close` / `queueit://restartSession` |", "| 4xx meanings |",
                    "| queue page (default) |", "| headless waiting |", "| queue position |", "| cancelled navigations |",
                    "| waiting-room domain for hybrid waits |", "| enqueue tokens |", "| `QueueId` in the emulator's enqueue answer |",
                    "| validator: `icr`, `queueitdebug`, redirect `enqueuetoken` |"] {
            #expect(section.contains(row), "missing row \(row)")
        }
        #expect(section.contains("emulator convention"))
        #expect(text.contains("(proposal)"))
    }
}
