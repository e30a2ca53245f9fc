import CrowdHandler
import CrowdHandlerEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP

/// The gatekeeper facade, as a CrowdHandler user would call it.
@Suite("CrowdHandler gatekeeper facade", .timeLimit(.minutes(2)))
struct FacadeTests {
    @Test func checkRedirectRecord() async throws {
        let h = try await EmulatorHarness.start()
        let gk = try CrowdHandlerGatekeeper(configuration: try h.configuration(), transport: AsyncHTTPTransport.shared)
        let waiting = await gk.validateRequest(url: h.baseURL + "/site/line")
        #expect(!waiting.promoted)
        #expect(waiting.slug == "line")
        #expect(waiting.position == 1)
        let redirect = try #require(await gk.redirectIfNotPromoted())
        #expect(redirect.hasPrefix(h.baseURL + "/line?url="))
        #expect(redirect.contains("ch-id=\(waiting.token ?? "-")"))
        #expect(redirect.contains("ch-public-key=test-key"))
        #expect(try await gk.recordPerformance(sample: 1) == nil, "nothing to record before promotion")

        h.emulator.admit(slug: "line", count: 1)
        let promoted = await gk.validateRequest(url: h.baseURL + "/site/line")
        #expect(promoted.promoted)
        #expect(promoted.token == waiting.token, "the token is kept between requests")
        #expect(await gk.redirectIfNotPromoted() == nil)
        let recorded = try await gk.recordPerformance(statusCode: 200, sample: 1, elapsed: .milliseconds(42))
        #expect(recorded?.code == 200)
        #expect(h.emulator.counters.responsesRecorded == 1)
        #expect(try await gk.recordPerformance(sample: 0) == nil)
        await h.stop()
    }

    @Test func failuresFollowTrustOnFailAndTheFallbackSlug() async throws {
        let h = try await EmulatorHarness.start()
        h.emulator.inject(CrowdHandlerEmulatorFault(kind: .status, on: .any, count: 2, status: 502))
        let trusting = try CrowdHandlerGatekeeper(
            configuration: try h.configuration(trustOnFail: true), transport: AsyncHTTPTransport.shared)
        let let1 = await trusting.validateRequest(url: h.baseURL + "/site/line")
        #expect(let1.promoted)
        #expect(let1.error?.vendorCode == 502)
        let strict = try CrowdHandlerGatekeeper(
            configuration: try h.configuration(trustOnFail: false, safetyNetSlug: "safety"), transport: AsyncHTTPTransport.shared)
        let sent = await strict.validateRequest(url: h.baseURL + "/site/line")
        #expect(!sent.promoted)
        #expect(sent.slug == "safety")
        #expect(await strict.redirectIfNotPromoted()?.hasPrefix(h.baseURL + "/safety?") == true)
        let blocked = await strict.validateRequest(url: h.baseURL + "/site/blocked")
        #expect(!blocked.promoted)
        #expect(blocked.error?.vendorCode == 403)
        await h.stop()
    }
}
