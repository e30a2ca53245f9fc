import CrowdHandler
import CrowdHandlerEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP
import WaitingRoomTesting

@Suite("CrowdHandler provider over loopback", .timeLimit(.minutes(3)))
struct ProviderTests {
    @Test func openRoomPassesWithResponseIDAndStoresThePass() async throws {
        let h = try await EmulatorHarness.start()
        let store = MemoryPassStore()
        let p = h.provider(try h.configuration(), passStore: store)
        let outcome = try await p.enqueue(Entry(room: RoomKey(scope: "", room: "open"))).outcome()
        guard case .passed(let pass, let status) = outcome else {
            Issue.record("expected passed, got \(outcome)")
            return
        }
        #expect(status.code == 200)
        #expect(pass.credential.hasPrefix("tok"))
        #expect(pass.details["slug"] == "open")
        #expect(pass.details["responseID"] != nil)
        #expect(pass.expiresAt != nil)
        #expect(await store.pass(vendor: "crowdhandler", room: pass.room)?.credential == pass.credential)
        // a second provider on the same store finds the pass without an API call
        let created = h.emulator.counters.sessionsCreated
        let again = try await h.provider(try h.configuration(), passStore: store).tryPass(Entry(room: RoomKey(scope: "", room: "open")))
        #expect(again.disposition == .passed)
        #expect(again.status.code == CrowdHandlerCode.storedPass.rawValue)
        #expect(h.emulator.counters.sessionsCreated == created)
        // release records the response and forgets the pass
        let released = try await p.release(pass)
        #expect(released.code == 200)
        #expect(h.emulator.counters.responsesRecorded == 1)
        #expect(await store.pass(vendor: "crowdhandler", room: pass.room) == nil)
        await h.stop()
    }

    @Test func tokenPersistsThroughAFilePassStore() async throws {
        let h = try await EmulatorHarness.start()
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("ch-passes-\(UUID().uuidString).json").path
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = h.provider(try h.configuration(), passStore: FilePassStore(path: path))
        let r = try await first.tryPass(Entry(room: RoomKey(scope: "", room: "open")))
        let token = try #require(r.pass?.credential)
        // a new process: a new provider and store on the same file
        let second = h.provider(try h.configuration(), passStore: FilePassStore(path: path))
        let again = try await second.tryPass(Entry(room: RoomKey(scope: "", room: "open")))
        #expect(again.pass?.credential == token)
        #expect(again.status.code == CrowdHandlerCode.storedPass.rawValue)
        await h.stop()
    }

    @Test func queueReportsPositionThenPassesWhenAdmitted() async throws {
        let h = try await EmulatorHarness.start()
        let p = h.provider(try h.configuration())
        let ahead = try p.enqueue(Entry(room: RoomKey(scope: "", room: "line"), userId: "first"))
        #expect(await eventually { h.emulator.waiting()["line"] == 1 })
        let session = try p.enqueue(Entry(room: RoomKey(scope: "", room: "line"), userId: "second"))
        let events = Events(session)
        #expect(await eventually { events.all.contains { if case .progress(let q, _) = $0 { return q.ahead == 1 } else { return false } } })
        guard case .queueOpened(let page, _)? = events.all.first(where: { $0.name == .queueOpened }) else {
            Issue.record("no queueOpened")
            return
        }
        #expect(page.queueURL.hasPrefix(h.baseURL + "/line?"))
        #expect(page.queueURL.contains("ch-id=tok"))
        #expect(page.queueURL.contains("ch-public-key=test-key"))
        h.emulator.admit(slug: "line", count: 2)
        guard case .passed = await session.outcome() else {
            Issue.record("expected passed")
            return
        }
        ahead.cancel()
        await h.stop()
    }

    @Test func blockedAndClosedRooms() async throws {
        let h = try await EmulatorHarness.start()
        let p = h.provider(try h.configuration())
        let blocked = try await p.enqueue(Entry(room: RoomKey(scope: "", room: "blocked"))).outcome()
        #expect(blocked == .blocked(VendorStatus(vendor: "crowdhandler", code: 403, message: blocked.status.message)))
        let closed = try await p.enqueue(Entry(room: RoomKey(scope: "", room: "closed"))).outcome()
        guard case .disabled(nil, let s) = closed else {
            Issue.record("expected disabled, got \(closed)")
            return
        }
        #expect(s.code == 200)
        let t = try await p.tryPass(Entry(room: RoomKey(scope: "", room: "blocked")))
        #expect(t.disposition == .blocked)
        await h.stop()
    }

    @Test func fourXXBlocksEvenWithTrustOnFail() async throws {
        let h = try await EmulatorHarness.start(
            CrowdHandlerEmulator(configuration: .init(publicKeys: ["right-key"], rooms: CrowdHandlerEmulatorConfiguration.testRooms.rooms)))
        let p = h.provider(try h.configuration(trustOnFail: true, publicKey: "wrong-key"))
        let outcome = try await p.enqueue(Entry(room: RoomKey(scope: "", room: "open"))).outcome()
        #expect(outcome.status.code == 401)
        guard case .blocked = outcome else {
            Issue.record("expected blocked, got \(outcome)")
            return
        }
        h.emulator.inject(CrowdHandlerEmulatorFault(kind: .status, on: .requestsPost, status: 404))
        let ok = h.provider(try h.configuration(trustOnFail: true, publicKey: "right-key"))
        let notFound = try await ok.enqueue(Entry(room: RoomKey(scope: "", room: "open"))).outcome()
        #expect(notFound.status.code == 404)
        guard case .blocked = notFound else {
            Issue.record("expected blocked, got \(notFound)")
            return
        }
        await h.stop()
    }

    @Test func restartStartsANewSession() async throws {
        let h = try await EmulatorHarness.start()
        let p = h.provider(try h.configuration())
        let session = try p.enqueue(Entry(room: RoomKey(scope: "", room: "line")))
        let events = Events(session)
        #expect(await eventually { h.emulator.counters.sessionsCreated == 1 && events.all.contains { $0.name == .progress } })
        try await session.restart()
        #expect(await eventually { h.emulator.counters.sessionsCreated == 2 })
        #expect(events.all.contains { $0.name == .sessionRestarted })
        // Issue 25: the restart carries CrowdHandler's code 9 (`sessionRestart`), as the README says.
        let restarted = try #require(events.all.first { $0.name == .sessionRestarted })
        #expect(restarted.status.code == CrowdHandlerCode.sessionRestart.rawValue)
        h.emulator.admit(slug: "line", count: 2)
        guard case .passed = await session.outcome() else {
            Issue.record("expected passed")
            return
        }
        await h.stop()
    }

    @Test func tryPassKeepsTheTokenBetweenChecks() async throws {
        let h = try await EmulatorHarness.start()
        let p = h.provider(try h.configuration())
        let entry = Entry(room: RoomKey(scope: "", room: "line"), userId: "u1")
        let first = try await p.tryPass(entry)
        #expect(first.disposition == .queue)
        #expect(first.progress?.ahead == 0)
        let token = try #require(p.rememberedToken(for: entry))
        let second = try await p.tryPass(entry)
        #expect(second.disposition == .queue)
        #expect(p.rememberedToken(for: entry) == token)
        #expect(h.emulator.counters.sessionsCreated == 1)
        #expect(h.emulator.counters.sessionsChecked == 1)
        h.emulator.admit(slug: "line", count: 1)
        let third = try await p.tryPass(entry)
        #expect(third.disposition == .passed)
        #expect(third.pass?.credential == token)
        await h.stop()
    }

    @Test func configurationErrorsNameTheField() throws {
        #expect(throws: WaitingRoomError.self) { try CrowdHandlerConfiguration(json: .object([:])) }
        do {
            _ = try CrowdHandlerConfiguration(json: .object(["publicKey": .string("k"), "apiURL": .string("ftp://x")]))
            Issue.record("expected an error")
        } catch let e as WaitingRoomError {
            #expect(e.field == "apiURL")
        }
        let c = try CrowdHandlerConfiguration(
            json: .object(["publicKey": .string("k"), "fallbackSlug": .string("net"), "trustOnFail": .bool(false)]))
        #expect(c.safetyNetSlug == "net")
        #expect(c.trustOnFail == false)
        #expect(c.timeout == .seconds(5))
        #expect(c.responseTimeout == .milliseconds(1500))
        #expect(c.targetURL(for: RoomKey(scope: "site", room: "checkout")) == "https://example.com/checkout")
        #expect(c.targetURL(for: RoomKey(scope: "https://shop.test/", room: "/cart")) == "https://shop.test/cart")
        #expect(c.targetURL(for: RoomKey(scope: "x", room: "https://a.test/b?c=1")) == "https://a.test/b?c=1")
        let page = c.waitingRoomURL(slug: "sale", targetURL: "https://a.test/b?c=1&d=2", token: "tokA")
        #expect(page.hasPrefix("https://wait.crowdhandler.com/sale?url="))
        #expect(page.contains("ch-id=tokA") && page.contains("ch-public-key=k"))
        #expect(!page.contains("c=1&d=2"), "the target URL is encoded")
    }
}
