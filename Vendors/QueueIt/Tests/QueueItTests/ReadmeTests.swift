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
        // Section numbers point at the protocol document in the repository (issue 26).
        let doc = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("docs/queueit-protocol.md")
        let protocolText = (try? String(contentsOf: doc, encoding: .utf8)) ?? ""
        #expect(text.contains("docs/queueit-protocol.md") && !protocolText.isEmpty)
        let headings = Set(
            protocolText.split(separator: "\n").compactMap { line -> String? in
                guard line.hasPrefix("#") else { return nil }
                return line.drop { $0 == "#" || $0 == " " }.split(separator: " ").first.map {
                    String($0).trimmingCharacters(in: CharacterSet(charactersIn: "."))
                }
            })
        for match in text.matches(of: /§(\d+(?:\.\d+)*)/) {
            #expect(headings.contains(String(match.1)), "§\(match.1) is not a section of docs/queueit-protocol.md")
        }
        for repo in [
            "queueit/ios-webui-sdk", "queueit/android-webui-sdk", "queueit/KnownUser.V3.Javascript",
            "queueit/QueueToken.V1.JavaScript", "queueit/QueueToken.V1.JAVA"
        ] {
            #expect(text.contains(repo), "\(repo) is not cited")
        }
    }

    @Test func everyDeliberateDifferenceHasARow() throws {
        let text = Self.readme
        let start = try #require(text.range(of: "## Where we deliberately differ"))
        let table = text[start.upperBound...]
        let section = table.range(of: "\n## ").map { table[..<$0.lowerBound] } ?? table
        for row in [
            "| `sdkVersion` default |", "| `userAgent` default |", "| `Content-Type` of enqueue |",
            "| unavailable message |", "| `queueit://close` / `queueit://restartSession` |", "| 4xx meanings |",
            "| queue page (default) |", "| headless waiting |", "| queue position |", "| cancelled navigations |",
            "| waiting-room domain for hybrid waits |", "| enqueue tokens |", "| `QueueId` in the emulator's enqueue answer |",
            "| validator: `icr`, `queueitdebug`, redirect `enqueuetoken` |"
        ] {
            #expect(section.contains(row), "missing row \(row)")
        }
        #expect(section.contains("emulator convention"))
        #expect(text.contains("(proposal)"))
    }
}
