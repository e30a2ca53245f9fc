import CrowdHandler
import CrowdHandlerEmulator
import Foundation
import Testing
import WaitingRoom
import WaitingRoomHTTP

@Suite("CrowdHandler hybrid (local) validation", .timeLimit(.minutes(2)))
struct HybridTests {
    let signer = CrowdHandlerSignature(privateKey: "private-key")
    let room = CrowdHandlerRoom(slug: "sale", queueActivatesOn: "1700000000000", timeout: 20)
    let requested = "2026-01-01T12:00:00Z"

    var at: Date { CrowdHandlerSignature.parseRequested(requested) ?? Date() }

    @Test func validTamperedExpiredMalformed() {
        let sig = signer.sign(slug: "sale", queueActivatesOn: "1700000000000", token: "tokA", requested: requested)
        #expect(sig.count == 64)
        #expect(signer.hashedPrivateKey == CrowdHandlerSignature.sha256Hex("private-key"))
        #expect(signer.validate(signature: sig, token: "tokA", requested: requested, room: room, now: at.addingTimeInterval(60)) == .valid)
        #expect(
            signer.validate(signature: sig.uppercased(), token: "tokA", requested: requested, room: room, now: at.addingTimeInterval(60))
                == .valid)
        var tampered = Array(sig)
        tampered[0] = tampered[0] == "a" ? "b" : "a"
        #expect(signer.validate(signature: String(tampered), token: "tokA", requested: requested, room: room, now: at) == .invalid)
        #expect(signer.validate(signature: sig, token: "tokB", requested: requested, room: room, now: at) == .invalid)
        #expect(signer.validate(signature: sig, token: "tokA", requested: "2026-01-01T12:00:01Z", room: room, now: at) == .invalid)
        #expect(
            CrowdHandlerSignature(privateKey: "other").validate(signature: sig, token: "tokA", requested: requested, room: room, now: at)
                == .invalid)
        #expect(
            signer.validate(signature: sig, token: "tokA", requested: requested, room: room, now: at.addingTimeInterval(20 * 60 + 1))
                == .expired)
        #expect(signer.validate(signature: sig, token: "tokA", requested: "yesterday", room: room, now: at) == .malformed)
        #expect(CrowdHandlerSignature.formatRequested(at) == requested)
        #expect(at.timeIntervalSince1970 == 1_767_268_800)
        for text in ["2024-02-29T23:59:59Z", "1999-12-31T00:00:00Z", "2026-07-04T08:09:10Z"] {
            let date = CrowdHandlerSignature.parseRequested(text)
            #expect(date.map(CrowdHandlerSignature.formatRequested) == text)
        }
        for bad in ["", "2026-01-01 12:00:00Z", "2026-13-01T12:00:00Z", "2026-01-01T12:00:00+01:00", "２026-01-01T12:00:00Z"] {
            #expect(CrowdHandlerSignature.parseRequested(bad) == nil, "\(bad)")
        }
    }

    @Test func theEmulatorSignsWhatTheValidatorAccepts() async throws {
        let h = try await EmulatorHarness.start(
            CrowdHandlerEmulator(configuration: .init(privateKey: "emu-private", rooms: CrowdHandlerEmulatorConfiguration.testRooms.rooms)))
        let config = try h.configuration(privateKey: "emu-private")
        let rooms = try await CrowdHandlerClient(configuration: config, transport: AsyncHTTPTransport.shared).rooms()
        let open = try #require(rooms.first { $0.slug == "open" })
        #expect(open.timeout == 20)
        let gk = try CrowdHandlerGatekeeper(configuration: config, transport: AsyncHTTPTransport.shared, mode: .hybrid, rooms: rooms)
        let first = await gk.validateRequest(url: h.baseURL + "/site/open")
        #expect(first.promoted)
        #expect(first.code == CrowdHandlerCode.ok.rawValue)
        let hash = try #require(first.hash)
        let requested = try #require(first.requested)
        let token = try #require(first.token)
        let checks = h.emulator.counters.sessionsCreated + h.emulator.counters.sessionsChecked
        // a return from the waiting room with a valid signature: no API call
        let fresh = try CrowdHandlerGatekeeper(configuration: config, transport: AsyncHTTPTransport.shared, mode: .hybrid, rooms: rooms)
        let local = await fresh.validateRequest(
            url: h.baseURL + "/site/open", token: token, signature: hash, requested: requested, slug: "open")
        #expect(local.promoted)
        // Issue 25: a signature accepted locally reports CrowdHandler's code 7 (`signatureValid`).
        #expect(local.code == CrowdHandlerCode.signatureValid.rawValue)
        #expect(h.emulator.counters.sessionsCreated + h.emulator.counters.sessionsChecked == checks)
        // a tampered signature goes to the API
        let api = await fresh.validateRequest(
            url: h.baseURL + "/site/open", token: token, signature: String(hash.reversed()), requested: requested, slug: "open")
        #expect(api.code == CrowdHandlerCode.ok.rawValue)
        #expect(h.emulator.counters.sessionsCreated + h.emulator.counters.sessionsChecked == checks + 1)
        // hybrid mode needs the private key
        #expect(throws: WaitingRoomError.self) {
            try CrowdHandlerGatekeeper(configuration: try h.configuration(), transport: AsyncHTTPTransport.shared, mode: .hybrid)
        }
        await h.stop()
    }
}
