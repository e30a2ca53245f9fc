import Foundation
import Testing
import WaitingRoom

@testable import WaitingRoomLua

/// Issue 25 §3–4: connection states and the queue page's signals reach flows (`on_connection`,
/// `on_queue_page_changed`, `on_user_exited`, and `wr.on` listeners).
@Suite("Signals in flows")
struct SignalFlowTests {
    @Test("on_connection and wr.on(\"connection\") see every connection change")
    func signalsReachHandlersAndListeners() async throws {
        let runtime = try FlowRuntime(
            source: """
                wr.on("connection", function(event) wr.emit("listener", { connection = event.connection }) end)
                return {
                  vendor = "scripted",
                  entry = { scope = "shop", room = "checkout" },
                  config = { steps = {
                    { connection = "reconnecting", attempt = 1, retryIn = 2 },
                    { connection = "offline" },
                    { progress = { ahead = 1 } },
                    { outcome = "passed", token = "T" } } },
                  on_connection = function(event)
                    wr.emit("connection", { connection = event.connection, attempt = event.attempt, retry_in = event.retry_in })
                  end,
                }
                """, name: "signals.lua", options: scriptedOptions())
        let result = await runtime.run()
        #expect(result.outcome.name == "passed", "\(result.outcome)")
        #expect(result.handlerErrors.isEmpty, "\(result.handlerErrors)")
        let connections = result.actions.filter { $0.name == "connection" }.map(\.payload)
        #expect(
            connections == [
                .object(["connection": .string("reconnecting"), "attempt": .number(1), "retry_in": .number(2)]),
                .object(["connection": .string("offline")]),
                .object(["connection": .string("connected")])
            ], "\(connections)")
        #expect(result.actions.filter { $0.name == "listener" }.count == 3)
    }

    @Test("on_queue_page_changed and on_user_exited see the queue page's signals")
    func pageSignals() async throws {
        let runtime = try FlowRuntime(
            source: """
                return {
                  vendor = "scripted",
                  entry = { scope = "shop", room = "checkout" },
                  config = { steps = {
                    { queueOpened = "https://queue.example/page" },
                    { queuePageChanged = "https://queue.example/page?step=2" },
                    { userExited = true },
                    { outcome = "passed", token = "T" } } },
                  on_queue_page_changed = function(event) wr.emit("moved", { url = event.queue_url }) end,
                  on_user_exited = function(event) wr.emit("exited", { code = event.code }) end,
                }
                """, name: "page.lua", options: scriptedOptions())
        let result = await runtime.run()
        #expect(result.handlerErrors.isEmpty, "\(result.handlerErrors)")
        #expect(
            result.actions.contains { $0.name == "moved" && $0.payload == .object(["url": .string("https://queue.example/page?step=2")]) })
        #expect(result.actions.contains { $0.name == "exited" })
    }
}
