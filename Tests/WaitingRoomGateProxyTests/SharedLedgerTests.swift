import Foundation
import Testing
import WaitingRoom
import WaitingRoomBenchSupport
import WaitingRoomEmulators
import WaitingRoomGateTestSupport

@testable import WaitingRoomPostgres

/// Issue 49 §7: behind several gates, a single-use credential is used once across all of them.
/// Two `waitingroom gate --authz` processes share one PostgreSQL database (a real server this test
/// starts, its own, so it can stop it): a `queueittoken` accepted by one is refused by the other,
/// and so is an enqueue token's id; with the database stopped, each gate keeps the policy it was
/// started with (`--ledger-unavailable closed`: 503; `open`: the credential counts as unused).
@Suite(.serialized) struct SharedLedgerTests {
    static let origin = "http://shop.example"

    @Test func twoGatesOnOneDatabaseUseEachCredentialOnce() async throws {
        let cluster = PostgresThrowawayCluster()
        let server = try await EmulatorSuite.demo().start()
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("gate-ledger-\(UUID().uuidString)")
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
            let config = folder.appendingPathComponent("integrationconfig.json")
            try Data(QueueItGateFixture.configurationJSON(queueDomain: server.baseURL).utf8).write(to: config)
            // a store that stopped answering is given up on after 8 s (the URL's connect_timeout;
            // the test's client waits 20 s for an answer)
            let database = try await cluster.makeDatabase().replacingOccurrences(of: "connect_timeout=30", with: "connect_timeout=8")
            let path = config.path
            let arguments: @Sendable (String) -> [String] = { policy in
                [
                    "--authz", "--vendor", "queueit", "--customer", QueueItGateFixture.customer, "--config", path,
                    "--public-url", Self.origin, "--listen", "127.0.0.1:0", "--state", database, "--ledger-unavailable", policy
                ]
            }
            let environment = ["QUEUEIT_SECRET_KEY": QueueItGateFixture.secret]
            try await GateProcess.with(arguments("closed"), environment: environment) { closed in
                try await GateProcess.with(arguments("open"), environment: environment) { open in
                    // a token: the browser brings it back to the start route of one gate...
                    let token = QueueItGateFixture.encoded(try await QueueItGateFixture.token(server))
                    let start = "/.waitingroom/start?rd=" + QueueItGateFixture.encoded("\(Self.origin)/shop/cart?queueittoken=\(token)")
                    let accepted = try await LoopbackHTTPClient.send(port: closed.port, target: start)
                    #expect(
                        accepted.status == 302 && accepted.headers.value(for: "Location") == "\(Self.origin)/shop/cart", "\(accepted.text)")
                    #expect(cookiePair(accepted, named: QueueItGateFixture.cookieName) != nil)
                    // ...and the other gate, asked by its proxy or on its start route, refuses it
                    let preview = try await LoopbackHTTPClient.send(
                        port: open.port, target: "/.waitingroom/auth",
                        headers: [
                            ("X-Original-URI", "/shop/cart?queueittoken=\(token)"), ("X-Original-Method", "GET"),
                            ("X-Forwarded-Host", "shop.example")
                        ])
                    #expect(preview.status == 401)
                    let replayed = try await LoopbackHTTPClient.send(port: open.port, target: start)
                    #expect(
                        replayed.status == 302
                            && replayed.headers.value(for: "Location")?.hasPrefix(server.baseURL + "/?c=demo&e=sale") == true,
                        "\(replayed.headers)")
                    #expect(cookiePair(replayed, named: QueueItGateFixture.cookieName) == nil)

                    // an enqueue token's id likewise
                    let invitation = QueueItGateFixture.encoded(
                        try await EmulatorAdmin.token(
                            server, route: "/_emulator/queueit/enqueuetokens",
                            [
                                "customerId": .string("demo"), "waitingRoomId": .string("sale"), "expiresIn": .number(600),
                                "tokenIdentifier": .string("invite-\(UUID().uuidString.prefix(8))")
                            ]))
                    let invite =
                        "/.waitingroom/start?rd=" + QueueItGateFixture.encoded("\(Self.origin)/shop/cart?enqueuetoken=\(invitation)")
                    let first = try await LoopbackHTTPClient.send(port: open.port, target: invite)
                    #expect(first.status == 302 && first.headers.value(for: "Location")?.contains("enqueuetoken=") == true)
                    let second = try await LoopbackHTTPClient.send(port: closed.port, target: invite)
                    #expect(second.status == 403 && second.text.contains("already used"), "\(second.status) \(second.text)")

                    // the database goes away: a fresh token is refused by the closed gate (503),
                    // accepted by the open one; a valid cookie needs no ledger on either
                    try await cluster.stop()
                    let fresh = QueueItGateFixture.encoded(try await QueueItGateFixture.token(server))
                    let freshStart =
                        "/.waitingroom/start?rd=" + QueueItGateFixture.encoded("\(Self.origin)/shop/cart?queueittoken=\(fresh)")
                    let refused = try await LoopbackHTTPClient.send(port: closed.port, target: freshStart)
                    #expect(refused.status == 503, "\(refused.status) \(refused.text)")
                    let subrequest = try await LoopbackHTTPClient.send(
                        port: closed.port, target: "/.waitingroom/auth",
                        headers: [
                            ("X-Original-URI", "/shop/cart?queueittoken=\(fresh)"), ("X-Forwarded-Host", "shop.example")
                        ])
                    #expect(subrequest.status == 403 && subrequest.headers.value(for: "X-Waitingroom-Status") == "503")
                    let let_through = try await LoopbackHTTPClient.send(port: open.port, target: freshStart)
                    #expect(let_through.status == 302 && let_through.headers.value(for: "Location") == "\(Self.origin)/shop/cart")
                    let cookie = QueueItGateFixture.cookie(age: 30)
                    for gate in [closed, open] {
                        let passed = try await LoopbackHTTPClient.send(
                            port: gate.port, target: "/.waitingroom/auth",
                            headers: [
                                ("X-Original-URI", "/shop/cart"), ("X-Forwarded-Host", "shop.example"), ("Cookie", cookie)
                            ])
                        #expect(passed.status == 200)
                    }
                }
            }
        } catch {
            try? await cluster.stop()
            await server.stop()
            try? FileManager.default.removeItem(at: folder)
            throw error
        }
        try? await cluster.stop()
        await server.stop()
        try? FileManager.default.removeItem(at: folder)
    }
}
