import Foundation
import Synchronization
import Testing
import WaitingRoom

@testable import QueueIt
@testable import QueueItEmulator

@Suite struct EmulatorConfigurationTests {
    func error(_ json: String) -> QueueItEmulatorConfigurationError? {
        do {
            _ = try QueueItEmulatorConfiguration(document: Array(json.utf8))
            return nil
        } catch { return error }
    }

    @Test func fixtureDecodesAndIgnoresOtherVendors() throws {
        let url = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
            .appendingPathComponent("Fixtures/emulator.json")
        let c = try QueueItEmulatorConfiguration(document: Array(try Data(contentsOf: url)))
        let demo = try #require(c.customers["demo"])
        #expect(demo.secretKey == "demo-secret-key-0123456789")
        #expect(demo.rooms["sale"]?.admitPerSecond == 2)
        #expect(demo.rooms["members"]?.enqueueKeys == ["member-key"])
        #expect(demo.rooms["proxied"]?.proxyPrefix == "queue")
        #expect(Set(demo.rooms.values.map(\.state)) == Set(QueueItRoomState.allCases))
    }

    @Test func fromJSONValue() throws {
        let doc: JSONValue = .object([
            "queueit": .object([
                "customers": .object([
                    "c1": .object([
                        "secretKey": .string("k"),
                        "rooms": .object(["r": .object(["state": .string("idle"), "bindTokenToIP": .bool(true)])])
                    ])
                ])
            ]), "other": .null
        ])
        let c = try QueueItEmulatorConfiguration(json: doc)
        #expect(c.customers["c1"]?.rooms["r"]?.state == .idle && c.customers["c1"]?.rooms["r"]?.bindTokenToIP == true)
    }

    @Test func demoHasEveryState() {
        let rooms = QueueItEmulatorConfiguration.demo.customers["demo"]?.rooms ?? [:]
        #expect(Set(rooms.values.map(\.state)) == Set(QueueItRoomState.allCases))
    }

    @Test func errorsNameTheField() {
        #expect(error("nope")?.field == "$")
        #expect(error("[]")?.field == "$")
        #expect(error(#"{"netfunnel":{}}"#)?.field == "queueit")
        #expect(error(#"{"queueit":{}}"#)?.field == "queueit.customers")
        #expect(error(#"{"queueit":{"customers":{"demo":{"rooms":{}}}}}"#)?.field == "queueit.customers.demo.secretKey")
        #expect(error(#"{"queueit":{"customers":{"a.b":{"secretKey":"k","rooms":{}}}}}"#)?.field == "queueit.customers.a.b")
        #expect(
            error(#"{"queueit":{"customers":{"demo":{"secretKey":"k","rooms":{"sale":{"state":"open"}}}}}}"#)?.field
                == "queueit.customers.demo.rooms.sale.state")
        #expect(
            error(#"{"queueit":{"customers":{"demo":{"secretKey":"k","rooms":{"sale":{"state":"queue","admitPerSecond":"2"}}}}}}"#)?.field
                == "queueit.customers.demo.rooms.sale.admitPerSecond")
        #expect(
            error(#"{"queueit":{"customers":{"demo":{"secretKey":"k","rooms":{"sale":{"state":"queue","capacity":-1}}}}}}"#)?.field
                == "queueit.customers.demo.rooms.sale.capacity")
        #expect(
            error(#"{"queueit":{"customers":{"demo":{"secretKey":"k","rooms":{"sale":{"state":"queue","speed":1}}}}}}"#)?.field
                == "queueit.customers.demo.rooms.sale.speed")
        #expect(
            error(#"{"queueit":{"customers":{"demo":{"secretKey":"k","rooms":{"sale":{"state":"queue","targetUrl":"relative"}}}}}}"#)?.field
                == "queueit.customers.demo.rooms.sale.targetUrl")
    }

    @Test func admissionModel() {
        var now = Date(timeIntervalSince1970: 1_000)
        let clock = NowBox(now)
        var cfg = QueueItEmulatorConfiguration.demo
        cfg.customers["demo"]?.rooms["sale"]?.capacity = 2
        let m = QueueItEmulatorModel(configuration: cfg, now: { clock.get() })
        let body = QueueItEnqueueBody(userId: "u", userAgent: "a").encoded()
        let a = m.enqueue(customer: "demo", room: "sale", body: body, base: "http://h", prefix: nil, clientIP: nil)
        let b = m.enqueue(customer: "demo", room: "sale", body: body, base: "http://h", prefix: "p", clientIP: nil)
        #expect(a.status == 200 && b.status == 200)
        #expect(m.enqueue(customer: "demo", room: "sale", body: body, base: "http://h", prefix: nil, clientIP: nil).status == 503)
        let rb = QueueItEnqueueResponse.parse(b.body)
        #expect(rb?.queueUrl?.hasPrefix("http://h/p/queueit/queue/demo/sale?") == true)
        let qb = rb?.queueId ?? ""
        #expect(m.queuePage(customer: "demo", room: "sale", queueId: qb, selfURL: "x").status == 200)
        now.addTimeInterval(2)
        clock.set(now)
        let page = m.queuePage(customer: "demo", room: "sale", queueId: qb, selfURL: "x")
        #expect(page.status == 302)
        #expect(page.headers.first?.1.hasPrefix("http://h/p/queueit/target/demo/sale?queueittoken=e_sale~q_\(qb)~") == true)
        #expect(m.queuePage(customer: "demo", room: "sale", queueId: "unknown", selfURL: "x").status == 404)
        #expect(
            m.enqueue(customer: "demo", room: "sale", body: Array("{".utf8), base: "http://h", prefix: nil, clientIP: nil).status == 400)
    }
}

final class NowBox: Sendable {
    let value: Mutex<Date>
    init(_ d: Date) { value = Mutex(d) }
    func get() -> Date { value.withLock { $0 } }
    func set(_ d: Date) { value.withLock { $0 = d } }
}
