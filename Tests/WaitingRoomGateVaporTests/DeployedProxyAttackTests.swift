#if Vapor
    import Foundation
    import Testing
    import WaitingRoom
    import WaitingRoomGateTestSupport

    /// Attacks on the auth mode as shipped (issue 49): requests a visitor writes byte by byte to
    /// Debian's nginx and Caddy started with the files in `deploy/`, the gate in auth mode behind
    /// them, and an app that counts what reached it. None of them may bring a protected path
    /// (`/shop/`) to the app without a pass.
    @Suite struct DeployedProxyAttackTests {
        /// Each attack: a request target and the headers the visitor adds.
        static let attacks: [(name: String, target: String, headers: [(String, String)])] = [
            (
                "forged subrequest headers", "/shop/cart",
                [
                    ("X-Original-URI", "/static/app.js"), ("X-Original-URL", "http://shop.example/static/app.js"),
                    ("X-Forwarded-Uri", "/static/app.js"), ("X-Original-Method", "OPTIONS"), ("X-Forwarded-Method", "OPTIONS")
                ]
            ),
            ("dot segments", "/static/../shop/cart", []),
            ("an escaped letter", "/%73hop/cart", []),
            ("repeated slashes", "//shop//cart", []),
            ("an encoded slash", "/static%2F..%2Fshop/cart", []),
            ("a backslash", "/static/..%5Cshop/cart", []),
            ("the auth route asked directly", "/.waitingroom/auth", [("X-Original-URI", "/static/app.js")]),
            ("the auth route behind a dot segment", "/.waitingroom/start/../auth", [("X-Original-URI", "/static/app.js")]),
            ("nginx's internal location", "/_waitingroom_auth", [("X-Original-URI", "/static/app.js")]),
            ("another host", "/shop/cart", [("Host", "evil.example")]),
            (
                "a forwarded address", "/shop/cart",
                [("X-Forwarded-For", "127.0.0.1"), ("X-Real-IP", "127.0.0.1"), ("Forwarded", "for=127.0.0.1")]
            )
        ]

        @Test func noAttackBringsAProtectedPathToTheApp() async throws {
            try await GateFleet.run(fronts: [.nginx, .caddy], makeEngine: { try QueueItGateFixture.gate($0) }) { fleet in
                #expect(fleet.apps.count == 2, "nginx and Caddy (Scripts/setup installs them)")
                for app in fleet.apps {
                    for attack in Self.attacks {
                        let headers =
                            attack.headers.contains { $0.0 == "Host" } ? attack.headers : [("Host", "shop.example")] + attack.headers
                        let answer = try await LoopbackHTTPClient.send(port: app.port, target: attack.target, headers: headers)
                        #expect(!answer.text.hasPrefix("upstream /shop"), "\(app.adapter), \(attack.name): reached the app")
                        if answer.status == 302, let location = answer.headers.value(for: "Location") {
                            // sent on to the start route: it may only send the browser to the queue or to shop.example
                            let start = try await LoopbackHTTPClient.send(port: app.port, target: location, headers: headers)
                            let next = start.headers.value(for: "Location") ?? ""
                            #expect(
                                start.status == 400 || next.hasPrefix(fleet.server.baseURL + "/") || next.hasPrefix("http://shop.example/"),
                                "\(app.adapter), \(attack.name): the start route answered \(start.status) \(next)")
                            #expect(!start.text.hasPrefix("upstream"))
                        }
                    }
                    #expect(!app.upstream.paths.contains { $0.hasPrefix("/shop") }, "\(app.adapter): \(app.upstream.paths)")
                    // the open path still opens: the attacks did not just break the front
                    let open = try await LoopbackHTTPClient.send(
                        port: app.port, target: "/static/app.js", headers: [("Host", "shop.example")])
                    #expect(open.status == 200 && open.text == "upstream /static/app.js", "\(app.adapter): \(open.status)")
                }
            }
        }

        @Test func theStartRouteIsNoOpenRedirect() async throws {
            try await GateFleet.run(fronts: [.nginx, .caddy], makeEngine: { try QueueItGateFixture.gate($0) }) { fleet in
                for app in fleet.apps {
                    for rd in [
                        "https://evil.example/", "https%3A%2F%2Fevil.example%2F", "//evil.example/", "http://shop.example@evil.example/"
                    ] {
                        let r = try await LoopbackHTTPClient.send(
                            port: app.port, target: "/.waitingroom/start?rd=\(rd)", headers: [("Host", "shop.example")])
                        #expect(r.status == 400, "\(app.adapter), rd=\(rd): \(r.status) \(r.headers.value(for: "Location") ?? "")")
                    }
                }
            }
        }
    }
#endif
