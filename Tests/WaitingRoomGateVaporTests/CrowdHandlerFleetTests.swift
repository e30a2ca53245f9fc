#if Vapor
    import CrowdHandler
    import CrowdHandlerGateEngine
    import Foundation
    import Testing
    import WaitingRoom
    import WaitingRoomEmulators
    import WaitingRoomGate
    import WaitingRoomGateTestSupport
    import WaitingRoomHTTP

    /// CrowdHandler's full and hybrid modes through every front (issue 49): the Hummingbird and
    /// Vapor middlewares, the reverse proxy, and the auth mode behind nginx and behind Caddy, in front
    /// of the project's CrowdHandler emulator. A promoted visitor passes with the token cookie, a
    /// token in the URL becomes the cookie and leaves the URL, a waiting one is sent to the room with
    /// that token, a blocked one never reaches the app; in hybrid mode a signed cookie passes with no
    /// API call whichever front it comes through.
    @Suite struct CrowdHandlerFleetTests {
        static func configuration(_ server: EmulatorServer) throws -> CrowdHandlerConfiguration {
            try CrowdHandlerConfiguration(
                publicKey: "demo-public-key", privateKey: "emulator-private-key", apiURL: server.baseURL,
                waitURL: server.baseURL, timeout: .seconds(15), trustOnFail: true)
        }

        static func counter(_ server: EmulatorServer, _ name: String) async throws -> Int {
            let state = try await EmulatorAdmin.state(server, vendor: "crowdhandler")
            return Int(state["counters"]?[name]?.numberValue ?? state[name]?.numberValue ?? -1)
        }

        @Test func fullModeThroughEveryFront() async throws {
            try await GateFleet.run(makeEngine: { server in
                try CrowdHandlerGate(
                    configuration: Self.configuration(server), transport: AsyncHTTPTransport.shared, mode: .full,
                    options: .init(responseSampleRate: 0))
            }) { fleet in
                #expect(fleet.apps.count == GateFleet.Front.allCases.count)
                var promoted: [[GateObservation]] = []
                for app in fleet.apps {
                    let first = try await app.send("/site/demo-open")
                    #expect(
                        first.status == 200 && first.text == "upstream /site/demo-open", "\(app.adapter): \(first.status) \(first.text)")
                    let cookie = try #require(cookiePair(first, named: "crowdhandler"), "\(app.adapter)")
                    let again = try await app.send("/site/demo-open", headers: [("Cookie", cookie)])
                    #expect(again.status == 200, "\(app.adapter)")
                    let token = cookie.dropFirst("crowdhandler=".count)
                    let back = try await app.send("/site/demo-open?x=1&ch-id=\(token)&ch-code=&ch-fresh=true")
                    #expect(
                        back.status == 302 && back.headers.value(for: "Location") == "http://shop.example/site/demo-open?x=1",
                        "\(app.adapter)")
                    #expect(cookiePair(back, named: "crowdhandler") == cookie, "\(app.adapter)")
                    #expect(app.upstream.count == 2, "\(app.adapter): the URL with the token never reaches the app")
                    promoted.append([first, again, back].map(GateObservation.init))
                }
                for (app, seen) in zip(fleet.apps, promoted).dropFirst() {
                    #expect(seen == promoted[0], "\(app.adapter) \(seen); \(fleet.apps[0].adapter) \(promoted[0])")
                }

                // the line held shut: each front sends its visitor to the room with the token it sets
                let stop = try await AsyncHTTPTransport.shared.send(
                    WaitingRoom.HTTPRequest(
                        method: "POST", url: fleet.server.baseURL + "/_emulator/crowdhandler/rooms/demo-queue",
                        headers: [("Content-Type", "application/json")], body: Array(#"{"rate": 0}"#.utf8), timeout: .seconds(30)))
                #expect(stop.status == 200)
                for app in fleet.apps {
                    let queued = try await app.send("/site/demo-queue")
                    #expect(queued.status == 302, "\(app.adapter)")
                    let location = try #require(queued.headers.value(for: "Location"), "\(app.adapter)")
                    #expect(location.hasPrefix(fleet.server.baseURL + "/demo-queue?url="), "\(app.adapter): \(location)")
                    let token = try #require(cookiePair(queued, named: "crowdhandler")?.dropFirst("crowdhandler=".count), "\(app.adapter)")
                    #expect(location.contains("ch-id=\(token)"), "\(app.adapter): the room gets the token the cookie holds")
                    let blocked = try await app.send("/site/demo-blocked")
                    #expect(blocked.status == 403, "\(app.adapter)")
                    #expect(app.upstream.count == 2, "\(app.adapter): neither reached the app")
                }
            }
        }

        @Test func hybridModeThroughEveryFront() async throws {
            try await GateFleet.run(makeEngine: { server in
                try await CrowdHandlerGate.withRoomFeed(
                    configuration: Self.configuration(server), transport: AsyncHTTPTransport.shared,
                    mode: .hybrid, options: .init(responseSampleRate: 0))
            }) { fleet in
                #expect(fleet.apps.count == GateFleet.Front.allCases.count)
                for app in fleet.apps {
                    let first = try await app.send("/site/demo-open")
                    #expect(first.status == 200, "\(app.adapter)")
                    let cookie = try #require(cookiePair(first, named: "crowdhandler"), "\(app.adapter)")
                    #expect(cookie.split(separator: "~").count == 3, "\(app.adapter): the cookie keeps the promotion's signature")
                    let checked = try await Self.counter(fleet.server, "sessionsChecked")
                    for _ in 0..<3 {
                        #expect(try await app.send("/site/demo-open", headers: [("Cookie", cookie)]).status == 200, "\(app.adapter)")
                    }
                    #expect(
                        try await Self.counter(fleet.server, "sessionsChecked") == checked,
                        "\(app.adapter): a valid signature needs no API call")
                    // a promotion for demo-open opens nothing another room guards; a tampered signature goes to the API
                    #expect(try await app.send("/site/demo-blocked", headers: [("Cookie", cookie)]).status != 200, "\(app.adapter)")
                    let parts = cookie.dropFirst("crowdhandler=".count).split(separator: "~").map(String.init)
                    let tampered = "crowdhandler=\(parts[0])~\(parts[1])~\(String(repeating: "0", count: 64))"
                    #expect(try await app.send("/site/demo-blocked", headers: [("Cookie", tampered)]).status != 200, "\(app.adapter)")
                    #expect(app.upstream.count == 4, "\(app.adapter)")
                }
            }
        }
    }
#endif
