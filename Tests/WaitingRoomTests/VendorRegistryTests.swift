import Foundation
import ScriptedVendor
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@Suite("VendorRegistry and configuration")
struct VendorRegistryTests {
    func registry() -> VendorRegistry {
        let registry = VendorRegistry()
        registry.register(ScriptedConfiguration.self, summary: "plays a script")
        return registry
    }

    @Test func unknownVendorIsATypedErrorListingTheKnownOnes() {
        do {
            _ = try registry().makeProvider(vendor: "nobody", configuration: .object([:]))
            Issue.record("expected an error")
        } catch let error as WaitingRoomError {
            #expect(error.kind == .invalidConfiguration)
            #expect(error.field == "vendor")
            #expect(error.message.contains("scripted"))
        } catch { Issue.record("wrong error \(error)") }
    }

    @Test func badFieldsAreNamed() throws {
        let cases: [(String, String)] = [
            (#"{"steps": "nope"}"#, "scripted.steps"),
            (#"{"steps": [{"outcome": "maybe"}]}"#, "scripted.steps[0].outcome"),
            (#"{"steps": [{"progress": {"ahead": "three"}}]}"#, "scripted.steps[0].progress.ahead"),
            (#"{"steps": [], "tryPas": "queue"}"#, "scripted.tryPas"),
            (#"[1]"#, "scripted")
        ]
        for (text, field) in cases {
            do {
                _ = try registry().makeProvider(vendor: "scripted", configuration: try JSONValue.parse(text))
                Issue.record("expected an error for \(text)")
            } catch let error as WaitingRoomError {
                #expect(error.field == field, "\(text) → \(error)")
            }
        }
    }

    @Test func providersFromJSONBehave() async throws {
        let json = try JSONValue.parse(#"{"steps": [{"progress": {"ahead": 1}}, {"outcome": "passed", "key": "K1"}]}"#)
        let provider = try registry().makeProvider(vendor: "scripted", configuration: json)
        let session = try provider.enqueue(Fixture.entry)
        let outcome = await session.outcome()
        #expect(outcome.pass?.credential == "K1")
        #expect(try await session.complete().code == 200)
        #expect(registry().vendorIDs == ["scripted"])
    }

    @Test func malformedJSONTextIsATypedError() {
        #expect(throws: WaitingRoomError.self) { try JSONValue.parse("{not json") }
    }

    @Test func secretsAreRedactedUnlessRevealed() {
        let key = String(repeating: "K", count: 600)
        #expect(ProviderEnvironment(transport: AsyncHTTPTransport.shared).redact(key) == "KKKK…(600 chars)")
        #expect(ProviderEnvironment(transport: AsyncHTTPTransport.shared, revealSecrets: true).redact(key) == key)
    }
}
