#if Vapor
    import CrowdHandler
    import Foundation
    import Testing
    import WaitingRoom
    import WaitingRoomEmulators
    import CrowdHandlerGateEngine
    import WaitingRoomGate
    import WaitingRoomGateTestSupport
    import WaitingRoomHTTP

    /// CrowdHandler's full mode (an API call per request) through both adapters, against the
    /// project's CrowdHandler emulator: a promoted visitor passes with the token cookie and the
    /// handler's answer is recorded; a waiting one is sent to the room; blocked and malformed
    /// requests never reach the handler.
    @Suite struct CrowdHandlerAdapterTests {
        static func fullGate(_ server: EmulatorServer) throws -> CrowdHandlerGate {
            let configuration = try CrowdHandlerConfiguration(
                publicKey: "demo-public-key", privateKey: "emulator-private-key", apiURL: server.baseURL, waitURL: server.baseURL,
                timeout: .seconds(5), trustOnFail: true)
            return try CrowdHandlerGate(
                configuration: configuration, transport: AsyncHTTPTransport.shared, mode: .full,
                options: .init(responseSampleRate: 1))
        }

        /// The emulator's count of `PUT /v1/responses` calls.
        static func responsesRecorded(_ server: EmulatorServer) async throws -> Int {
            let r = try await AsyncHTTPTransport.shared.send(WaitingRoom.HTTPRequest(url: server.baseURL + "/_emulator/crowdhandler/state"))
            let state = try JSONValue.parse(Data(r.body))
            return Int(state["counters"]?["responsesRecorded"]?.numberValue ?? state["responsesRecorded"]?.numberValue ?? -1)
        }

        @Test func fullModePassesAPromotedVisitorThroughBoth() async throws {
            try await GateAdapterPair.run(makeEngine: { try Self.fullGate($0) }) { pair in
                var seen: [[GateObservation]] = []
                for app in pair.both {
                    let r = try await app.send("/site/demo-open")
                    #expect(r.status == 200 && r.text == "upstream /site/demo-open", "\(app.adapter)")
                    let cookie = try #require(cookiePair(r, named: "crowdhandler"), "\(app.adapter)")
                    #expect(cookie.hasPrefix("crowdhandler=tok"))
                    let again = try await app.send("/site/demo-open", headers: [("Cookie", cookie)])
                    #expect(again.status == 200 && cookiePair(again, named: "crowdhandler")?.hasPrefix(String(cookie.prefix(20))) == true)
                    #expect(app.upstream.count == 2)
                    seen.append([GateObservation(r), GateObservation(again)])
                }
                #expect(seen[0] == seen[1], "Hummingbird \(seen[0]); Vapor \(seen[1])")
                // Both adapters report the handler's answer (`PUT /v1/responses/{id}`, sampled at 1.0):
                // four passes. Polled: the report is sent after the answer, off the request's path.
                var recorded = 0
                for _ in 0..<100 {
                    recorded = try await Self.responsesRecorded(pair.server)
                    if recorded >= 4 { break }
                    try await Task.sleep(for: .milliseconds(100))
                }
                #expect(recorded == 4)
            }
        }

        @Test func fullModeQueuesAndRefusesTheSameWayInBoth() async throws {
            try await GateAdapterPair.run(makeEngine: { try Self.fullGate($0) }) { pair in
                // The demo line promotes 30 a minute: hold it shut so each visitor must wait.
                let stop = try await AsyncHTTPTransport.shared.send(
                    WaitingRoom.HTTPRequest(
                        method: "POST", url: pair.server.baseURL + "/_emulator/crowdhandler/rooms/demo-queue",
                        headers: [("Content-Type", "application/json")], body: Array(#"{"rate": 0}"#.utf8), timeout: .seconds(30)))
                #expect(stop.status == 200, "\(stop.text)")
                var seen: [[GateObservation]] = []
                for app in pair.both {
                    let queued = try await app.send("/site/demo-queue")
                    #expect(queued.status == 302, "\(app.adapter)")
                    let location = try #require(queued.value("Location"))
                    #expect(location.hasPrefix(pair.server.baseURL + "/demo-queue?url="))
                    let token = try #require(cookiePair(queued, named: "crowdhandler")?.dropFirst("crowdhandler=".count))
                    #expect(location.contains("ch-id=\(token)") && location.contains("ch-public-key=demo-public-key"))
                    #expect(queued.value("Cache-Control") == "no-cache, no-store, must-revalidate")
                    let blocked = try await app.send("/site/demo-blocked")
                    #expect(blocked.status == 403)
                    let malformed = try await app.send("/site/demo-open?ch-id=a%3Bb")
                    #expect(malformed.status == 400)
                    let oversize = try await app.send("/site/demo-open", headers: [("X-Big", String(repeating: "b", count: 9000))])
                    #expect(oversize.status == 431)
                    let free = try await app.send("/site/free")
                    #expect(free.status == 200)
                    #expect(app.upstream.count == 1, "only /site/free reaches the \(app.adapter) handler")
                    seen.append([queued, blocked, malformed, oversize, free].map(GateObservation.init))
                }
                #expect(seen[0] == seen[1], "Hummingbird \(seen[0]); Vapor \(seen[1])")
            }
        }
    }
#endif
