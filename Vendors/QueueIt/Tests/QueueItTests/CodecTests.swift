import Foundation
import Testing

@testable import QueueIt

@Suite struct EnqueueCodecTests {
    @Test func defaultURL() throws {
        let e = try QueueItEndpoint(customerId: "Acme", waitingRoomId: "sale", pathPrefix: "queue")
        #expect(e.enqueueURL.absoluteString == "https://acme.queue-it.net/api/mobileapp/queue/Acme/sale/enqueue")
        #expect(e.pathPrefix == nil)  // ignored without a domain
    }

    @Test func behindProxyURLWithSanitisedPrefix() throws {
        let e = try QueueItEndpoint(
            customerId: "acme", waitingRoomId: "sale", waitingRoomDomain: "shop.example.com", pathPrefix: " /queue/ ")
        #expect(e.enqueueURL.absoluteString == "https://shop.example.com/queue/api/mobileapp/queue/acme/sale/enqueue")
        let n = try QueueItEndpoint(customerId: "acme", waitingRoomId: "sale", waitingRoomDomain: "shop.example.com", pathPrefix: "//")
        #expect(n.enqueueURL.absoluteString == "https://shop.example.com/api/mobileapp/queue/acme/sale/enqueue")
        let deep = try QueueItEndpoint(
            customerId: "acme", waitingRoomId: "sale", waitingRoomDomain: "https://shop.example.com:8443/", pathPrefix: "/a/b/")
        #expect(deep.enqueueURL.absoluteString == "https://shop.example.com:8443/a/b/api/mobileapp/queue/acme/sale/enqueue")
    }

    @Test func loopbackHttpOnly() throws {
        let l = try QueueItEndpoint(customerId: "demo", waitingRoomId: "sale", waitingRoomDomain: "127.0.0.1:8080")
        #expect(l.enqueueURL.absoluteString == "http://127.0.0.1:8080/api/mobileapp/queue/demo/sale/enqueue")
        let l2 = try QueueItEndpoint(customerId: "demo", waitingRoomId: "sale", waitingRoomDomain: "http://localhost:9")
        #expect(l2.scheme == "http")
        #expect(throws: QueueItConfigurationError.self) {
            try QueueItEndpoint(customerId: "demo", waitingRoomId: "sale", waitingRoomDomain: "http://example.com")
        }
        #expect(try QueueItEndpoint(customerId: "demo", waitingRoomId: "sale", waitingRoomDomain: "example.com:80").scheme == "https")
        #expect(try QueueItEndpoint(customerId: "demo", waitingRoomId: "sale", waitingRoomDomain: "127.0.0.1.evil.com").scheme == "https")
    }

    @Test func configurationErrorsNameTheField() {
        func field(_ c: String, _ e: String, _ d: String? = nil) -> String? {
            do {
                _ = try QueueItEndpoint(customerId: c, waitingRoomId: e, waitingRoomDomain: d)
                return nil
            } catch { return error.field }
        }
        #expect(field("", "e") == "customerId")
        #expect(field("a.b", "e") == "customerId")
        #expect(field("a", " ") == "waitingRoomId")
        #expect(field("a", "x/y") == "waitingRoomId")
        #expect(field("a", "e", "h.com/path") == "waitingRoomDomain")
        #expect(field("a", "e", "ftp://h.com") == "waitingRoomDomain")
    }

    @Test func bodyKeys() throws {
        let b = QueueItEnqueueBody(userId: "u1", userAgent: "ua/1", sdkVersion: "s", layoutName: "", language: "en-US", enqueueToken: "t")
        let json = String(decoding: b.encoded(), as: UTF8.self)
        #expect(json == #"{"enqueueToken":"t","language":"en-US","sdkVersion":"s","userAgent":"ua/1","userId":"u1"}"#)
        let k = QueueItEnqueueBody(userId: "u", userAgent: "a", enqueueKey: "k")
        #expect(String(decoding: k.encoded(), as: UTF8.self).contains(#""enqueueKey":"k""#))
        #expect(try QueueItEnqueueBody.decode(k.encoded()) == k)
        #expect(throws: QueueItConfigurationError.self) { try QueueItEnqueueBody.decode(Array("[1]".utf8)) }
        #expect(throws: QueueItConfigurationError.self) { try QueueItEnqueueBody.decode(Array(#"{"userId":1}"#.utf8)) }
        #expect(throws: QueueItConfigurationError.self) {
            try QueueItEnqueueBody.decode(
                Array(#"{"userId":"u","userAgent":"a","sdkVersion":"s","enqueueToken":"t","enqueueKey":"k"}"#.utf8))
        }
    }

    @Test func responseClassification() {
        let ok = QueueItEnqueueResult.classify(
            status: 200,
            body: Array(
                #"{"QueueId":"q","QueueUrl":"https://x/q","EventTargetUrl":"https://t/","QueueitToken":null,"QueueUrlTTLInMinutes":5}"#.utf8
            ))
        guard case .success(let r) = ok else {
            Issue.record("not success")
            return
        }
        #expect(r.queueUrl == "https://x/q" && r.queueUrlTTLInMinutes == 5 && r.redirectType == .queue && !r.isPassedThrough)
        // wrong types are ignored
        guard
            case .success(let w) = QueueItEnqueueResult.classify(
                status: 200, body: Array(#"{"QueueUrl":5,"QueueitToken":true,"QueueUrlTTLInMinutes":"x"}"#.utf8))
        else {
            Issue.record("not success")
            return
        }
        #expect(w.queueUrl == nil && w.queueitToken == nil && w.queueUrlTTLInMinutes == nil)
        #expect(
            QueueItEnqueueResult.classify(status: 200, body: Array("[]".utf8))
                == .retryable(message: "Enqueue answered 200 without a JSON object"))
        #expect(
            QueueItEnqueueResult.classify(status: 200, body: Array("<html>".utf8))
                == .retryable(message: "Enqueue answered 200 without a JSON object"))
        #expect(
            QueueItEnqueueResult.classify(status: 404, body: Array("no such room".utf8)) == .rejected(code: 404, message: "no such room"))
        #expect(QueueItEnqueueResult.classify(status: 503, body: Array(#"{"error":"busy"}"#.utf8)) == .retryable(message: "busy"))
        #expect(QueueItEnqueueResult.classify(status: 201, body: []) == .retryable(message: "Unexpected response code: 201"))
    }

    @Test func redirectTypeExtraction() {
        #expect(QueueItRedirectType(token: nil) == .queue)
        #expect(QueueItRedirectType(token: "") == .queue)
        #expect(QueueItRedirectType(token: "e_x~rt_safetynet~h_1") == .safetynet)
        #expect(QueueItRedirectType(token: "e_x~rt_safetynet") == .other(""))  // rt_ last: no match
        #expect(QueueItRedirectType(token: "rt_safetynet~h_1") == .other(""))  // rt_ first: no match
        #expect(QueueItRedirectType(token: "e_x~rt_SafetyNet~h") == .other("SafetyNet"))
        #expect(QueueItRedirectType(token: "e_x~rt_directLink~h") == .directLink)
        for (t, a) in [
            ("idle", QueueItEnqueueAction.disabled), ("afterevent", .disabled), ("disabled", .disabled),
            ("safetynet", .passed), ("queue", .showQueue), ("debug", .showQueue), ("bypass", .showQueue), ("zzz", .showQueue)
        ] {
            #expect(QueueItRedirectType(token: "a_b~rt_\(t)~h_c").action == a)
        }
    }

    @Test func codeTable() {
        #expect(QueueItErrorCode.networkUnavailable.rawValue == -100)
        #expect(QueueItErrorCode.queueUnavailable.rawValue == 3)
        #expect(QueueItErrorCode.requestAlreadyInProgress.rawValue == 10)
        #expect(Set(QueueItErrorCode.allCases.map(\.rawValue)).count == QueueItErrorCode.allCases.count)
        #expect(QueueItValidationError.eventId.rawValue == "eventid")
    }
}

@Suite struct NavigationTests {
    let c = QueueItNavigationClassifier(
        queueURL: URL(string: "https://acme.queue-it.net/?c=acme&e=sale&q=1")!,
        targetURL: URL(string: "https://shop.example.com/checkout")!)

    @Test func rules() {
        #expect(c.classify("") == .allow)
        #expect(c.classify("about:blank") == .allow)
        #expect(c.classify("queueit://close") == .close)
        #expect(c.classify("queueit://restartSession") == .restartSession)
        #expect(c.classify("https://acme.queue-it.net/what-is-this.html?x") == .blocked)
        #expect(c.classify("https://SHOP.example.com/checkout?a=1&queueittoken=e_sale~q_1~h_ab") == .passed(token: "e_sale~q_1~h_ab"))
        #expect(c.classify("http://shop.example.com/checkout?queueittoken=e_sale%7Eq_1") == .passed(token: "e_sale~q_1"))
        #expect(c.classify("https://shop.example.com/checkout") == .passed(token: nil))
        #expect(c.classify("https://shop.example.com/Checkout") == .allow)
        #expect(
            c.classify("https://shop.example.com/Checkout", kind: .linkActivated)
                == .external(URL(string: "https://shop.example.com/Checkout")!))
        #expect(
            c.classify("https://acme.queue-it.net/?c=acme&e=sale&q=2")
                == .queueURLChanged(URL(string: "https://acme.queue-it.net/?c=acme&e=sale&q=2")!))
        #expect(c.classify("mailto:x@y.z") == .external(URL(string: "mailto:x@y.z")!))
        #expect(c.classify("https://other.com/", kind: .other) == .allow)
    }

    @Test func prefixLimitsTheQueueHost() {
        let p = QueueItNavigationClassifier(
            queueURL: URL(string: "https://shop.com/queue/x")!,
            targetURL: URL(string: "https://shop.com/cart")!, pathPrefix: "queue")
        #expect(p.classify("https://shop.com/queue/y") == .queueURLChanged(URL(string: "https://shop.com/queue/y")!))
        #expect(p.classify("https://shop.com/cart?queueittoken=t") == .passed(token: "t"))
        #expect(p.classify("https://shop.com/other", kind: .linkActivated) == .external(URL(string: "https://shop.com/other")!))
    }
}
