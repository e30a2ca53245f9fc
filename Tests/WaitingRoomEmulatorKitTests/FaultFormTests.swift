import Testing
import WaitingRoom
import WaitingRoomEmulatorKit

/// Issue 26: one fault value, one JSON form, one parser with one set of bounds, one queue with
/// the chaos rotation and its counters (pure: no server).
@Suite("Emulator kit: faults")
struct FaultFormTests {
    let vocabulary = EmulatorFaultVocabulary(
        vendor: "test", requestKinds: ["a", "b"], defaultTarget: "a", vendorActions: ["loseReply": false, "code": true],
        alias: { json, path in
            guard let kind = json["kind"]?.stringValue else { return nil }
            guard kind == "nonjson" else {
                throw WaitingRoomError.invalidConfiguration(field: "\(path).kind", "expected nonjson")
            }
            return EmulatorFault(.garbage, on: "b")
        })

    @Test func theJSONFormRoundTrips() throws {
        let forms = [
            #"{"action": "delay", "delayMs": 1500, "on": "a", "count": 3}"#,
            #"{"action": "drop", "on": "any", "count": 1}"#,
            #"{"action": "status", "status": 429, "body": "slow down", "on": "b", "count": 2}"#,
            #"{"action": "garbage", "on": "a", "count": 1}"#,
            #"{"action": "code", "code": 505, "on": "a", "count": 1}"#,
            #"{"action": "loseReply", "on": "b", "count": 4}"#
        ]
        for text in forms {
            let fault = try vocabulary.parse(try JSONValue.parse(text))
            #expect(try vocabulary.parse(fault.json) == fault, "\(text)")
        }
        let defaults = try vocabulary.parse(try JSONValue.parse(#"{"action": "status"}"#))
        #expect(defaults == EmulatorFault(.status(503), on: "a", count: 1))
        #expect(try vocabulary.parse(try JSONValue.parse(#"{"action": "delay"}"#)).action == .delay(.seconds(2)))
    }

    @Test func badFaultsNameTheField() throws {
        let cases: [(String, String)] = [
            (#"{"action": "meteor"}"#, "fault.action"),
            (#"{"action": "drop", "on": "c"}"#, "fault.on"),
            (#"{"action": "drop", "count": 0}"#, "fault.count"),
            (#"{"action": "delay", "delayMs": 600001}"#, "fault.delayMs"),
            (#"{"action": "status", "status": 600}"#, "fault.status"),
            (#"{"action": "code"}"#, "fault.code"),
            (#"{"action": "drop", "colour": "red"}"#, "fault"),
            (#"{"kind": "other"}"#, "fault.kind"),
            (#"{"count": 2}"#, "fault.action"),
            (#"[1]"#, "fault")
        ]
        for (text, field) in cases {
            do {
                _ = try vocabulary.parse(try JSONValue.parse(text))
                Issue.record("accepted \(text)")
            } catch let error as WaitingRoomError {
                #expect(error.field?.hasPrefix(field) == true, "\(text): \(error)")
            }
        }
        let big = String(repeating: "x", count: EmulatorFaultBounds.bodyBytes + 1)
        #expect(throws: WaitingRoomError.self) { try vocabulary.parse(.object(["action": .string("garbage"), "body": .string(big)])) }
        // a list: the index is in the field; nothing is half-read
        do {
            _ = try vocabulary.parseList(try JSONValue.parse(#"[{"action": "drop"}, {"action": "nope"}]"#))
            Issue.record("accepted a bad list")
        } catch let error as WaitingRoomError {
            #expect(error.field == "faults[1].action")
        }
    }

    @Test func aliasesAreRead() throws {
        #expect(try vocabulary.parse(try JSONValue.parse(#"{"kind": "nonjson"}"#)) == EmulatorFault(.garbage, on: "b"))
    }

    @Test func theQueueServesInOrderThenTheChaosRotationAndCounts() {
        let queue = EmulatorFaultQueue()
        queue.add(EmulatorFault(.status(503), on: "a", count: 2))
        queue.add(EmulatorFault(.drop, on: "any", count: 1))
        #expect(queue.installChaos(perKind: 2, delay: .milliseconds(7), on: ["a"]) == 8)
        #expect(queue.pending == 11 && queue.installed == 11)
        #expect(queue.has(for: "b") && queue.has(for: "a"))
        var served: [String] = []
        while let fault = queue.take(for: "a") { served.append(fault.action.name) }
        #expect(served == ["status", "status", "drop", "delay", "drop", "status", "garbage", "delay", "drop", "status", "garbage"])
        #expect(queue.take(for: "b") == nil)
        #expect(queue.injected == 11 && queue.injectedOn == ["a": 11] && queue.pending == 0)
        #expect(queue.injectedByAction == ["status": 4, "drop": 3, "delay": 2, "garbage": 2])
        // until cleared
        queue.add(EmulatorFault(.garbage, on: "b", count: nil))
        for _ in 0..<5 { #expect(queue.take(for: "b")?.action == .garbage) }
        #expect(queue.pending == 1)
        queue.clear()
        #expect(queue.isEmpty && queue.take(for: "b") == nil)
        queue.reset()
        #expect(queue.injected == 0 && queue.installed == 0)
    }

    @Test func escapes() throws {
        #expect(EmulatorHTTP.escapeHTML(#"<a href="x">&'</a>"#) == "&lt;a href=&quot;x&quot;&gt;&amp;&#39;&lt;/a&gt;")
        #expect(EmulatorHTTP.jsonQuoted("a\"b\\c\n</script>\u{2028}\u{01}") == #""a\"b\\c\n\u003c/script\u003e\u2028\u0001""#)
        #expect(try JSONValue.parse(EmulatorHTTP.jsonQuoted("x</script>y")) == .string("x</script>y"))
    }
}
