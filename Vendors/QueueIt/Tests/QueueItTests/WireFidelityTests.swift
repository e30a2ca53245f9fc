import Foundation
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomTesting

@testable import QueueIt
@testable import QueueItEmulator

/// Issue 15: wire details and labelled differences (items 5, 6, 9, 10, 11).
struct WireFidelityTests {
    static var page: QueueItQueuePage { FidelityTests.page }
    static func context(_ t: any HTTPTransport, _ clock: VirtualClock, events: EventLog? = nil) -> QueuePageContext {
        FidelityTests.context(t, clock, events: events)
    }

    // MARK: item 5 — Content-Type

    @Test func enqueueSendsPlainApplicationJSON() throws {
        let endpoint = try QueueItEndpoint(customerId: "acme", waitingRoomId: "sale")
        let req = QueueItEnqueueCall(endpoint: endpoint, body: QueueItEnqueueBody(userId: "u", userAgent: "ua")).httpRequest(timeout: nil)
        #expect(req.headers.value(for: "Content-Type") == "application/json")
        #expect(req.headers.value(for: "Accept") == "application/json")
        #expect(req.headers.value(for: "User-Agent") == "ua")
    }

    // MARK: item 6 — the vendor's unavailable text, the detail in `details`

    @Test func unavailableCarriesTheVendorsTextAndTheDetailApart() async throws {
        let t = StubTransport { r in HTTPResponse(status: 503, body: Array("oops".utf8), url: r.url) }
        let clock = VirtualClock(autoAdvance: true)
        let client = QueueItEnqueueClient(transport: t, clock: clock)
        let call = QueueItEnqueueCall(
            endpoint: try QueueItEndpoint(customerId: "acme", waitingRoomId: "sale"),
            body: QueueItEnqueueBody(userId: "u", userAgent: "ua"))
        do {
            _ = try await client.enqueue(call)
            Issue.record("expected unavailable")
        } catch let e as WaitingRoomError {
            #expect(e.kind == .unavailable && e.vendorCode == 3)
            #expect(e.message == "Error! Queue is unavailable.")
            #expect(e.details["lastFailure"] == "Unexpected response code: 503")
        }
        #expect(t.requests.count == 5)
        // The same for a queue page whose loads keep failing.
        let pages = StubTransport { r in html("<html><body>down</body></html>", status: 502, url: r.url) }
        let result = await QueueItHTTPFollowDriver().wait(on: Self.page, context: Self.context(pages, clock))
        guard case .failed(let pe) = result else {
            Issue.record("expected failure: \(result)")
            return
        }
        #expect(pe.message == "Error! Queue is unavailable." && pe.vendorCode == 3)
        #expect(pe.details["lastFailure"]?.contains("HTTP 502") == true)
    }

    // MARK: item 9 — the special links match exactly

    @Test func specialLinksMatchCaseSensitively() {
        let c = Self.page.classifier
        #expect(c.classify("queueit://close") == .close)
        #expect(c.classify("queueit://restartSession") == .restartSession)
        #expect(c.classify("queueit://close?from=page") == .close)  // Android: the host decides
        for other in ["QUEUEIT://close", "queueit://CLOSE", "queueit://restartsession", "queueit://RESTARTSESSION", "queueit://closed"] {
            #expect(c.classify(other) == .external(URL(string: other)!), "\(other)")
        }
    }

    // MARK: item 10 — 4xx meanings are proposals

    @Test func httpStatusCodesAreNotVendorMeanings() {
        for code in [QueueItErrorCode.badRequest, .unauthorized, .forbidden, .notFound, .tooManyRequests, .ok] {
            #expect(code.origin == .httpStatus)
        }
        #expect(QueueItErrorCode.queueUnavailable.origin == .vendorSDK && QueueItErrorCode.networkUnavailable.origin == .vendorSDK)
        #expect(QueueItErrorCode.queuePageTimeout.origin == .ours && QueueItErrorCode.invalidRedirect.origin == .ours)
        // The rejection itself: the status as code, the body as message.
        #expect(QueueItEnqueueResult.classify(status: 403, body: Array("no way".utf8)) == .rejected(code: 403, message: "no way"))
    }

    // MARK: item 11 — a configured waiting-room domain wins over the redirect's host

    @Test func hybridWaitsThroughTheConfiguredDomain() throws {
        let info = try #require(
            QueueItRedirectInfo.parse(
                headerValue: QueueItPercent.encodeComponent(
                    "https://acme.queue-it.net/?c=acme&e=sale&ver=v3-javascript-3.7.10&cver=5&man=ApiRule&t=https%3A%2F%2Fapi.acme.com%2Fcart"
                )))
        let proxied = try QueueItConfiguration(customerId: "acme", waitingRoomDomain: "queue.shop.example", pathPrefix: "wr")
        let c = try QueueItHybridClient.configuration(for: info, template: proxied)
        #expect(c.waitingRoomDomain == "queue.shop.example" && c.pathPrefix == "wr")
        #expect(
            try c.endpoint(waitingRoomId: "sale").enqueueURL.absoluteString
                == "https://queue.shop.example/wr/api/mobileapp/queue/acme/sale/enqueue")
        // Without a configured domain the redirect's host is used (the Android demo's rule).
        let plain = try QueueItHybridClient.configuration(for: info, template: try QueueItConfiguration(customerId: "acme"))
        #expect(plain.waitingRoomDomain == "https://acme.queue-it.net" && plain.pathPrefix == nil)
        #expect(try QueueItHybridClient.configuration(for: info, template: nil).waitingRoomDomain == "https://acme.queue-it.net")
    }
}
