import Foundation
import Testing
import WaitingRoom
import WaitingRoomTesting

@testable import QueueIt
@testable import QueueItEmulator

/// Enqueue tokens (issue 15 item 2): the `QueueToken.V1` format, minted and verified, and the
/// emulator refusing garbage, tampered, expired and other-room tokens.
struct EnqueueTokenTests {
    // Known-answer vectors published in queueit/QueueToken.V1.JavaScript `tests/EnqueueToken.ts`
    // @ 60f0134 (secret, ids and times of its "should sign a token …" cases).
    static let vendorSecret = "5ebbf794-1665-4d48-80d6-21ac34be7faedf9e10b3-551a-4682-bb77-fee59d6355d6"
    static let ti = "a21d423a-43fd-4821-84fa-4390f6a2fd3e"
    static let issued: Int64 = 1_534_723_200_000  // 2018-08-20T00:00:00Z
    static let expires: Int64 = 1_539_129_600_000  // 2018-10-10T00:00:00Z
    static let minimalVector =
        "eyJ0eXAiOiJRVDEiLCJlbmMiOiJBRVMyNTYiLCJpc3MiOjE1MzQ3MjMyMDAwMDAsInRpIjoiYTIxZDQyM2EtNDNmZC00ODIxLTg0ZmEtNDM5MGY2YTJmZDNlIiwiYyI6InRpY2tldGFuaWEifQ..ChCRF4bTbt4zlOcvXLjQYouhgqgiNNNZqcci8VWoZIU"
    static let noPayloadVector =
        "eyJ0eXAiOiJRVDEiLCJlbmMiOiJBRVMyNTYiLCJpc3MiOjE1MzQ3MjMyMDAwMDAsImV4cCI6MTUzOTEyOTYwMDAwMCwidGkiOiJhMjFkNDIzYS00M2ZkLTQ4MjEtODRmYS00MzkwZjZhMmZkM2UiLCJjIjoidGlja2V0YW5pYSIsImUiOiJteWV2ZW50IiwiaXAiOiI1LjcuOC42IiwieGZmIjoiNDUuNjcuMi40LDM0LjU2LjMuMiJ9..wUOdVDIKlrIqumpU33bShDPdvTkicRk3q4Z-Vs8epFc"
    static let payloadVector =
        "eyJ0eXAiOiJRVDEiLCJlbmMiOiJBRVMyNTYiLCJpc3MiOjE1MzQ3MjMyMDAwMDAsImV4cCI6MTUzOTEyOTYwMDAwMCwidGkiOiJhMjFkNDIzYS00M2ZkLTQ4MjEtODRmYS00MzkwZjZhMmZkM2UiLCJjIjoidGlja2V0YW5pYSIsImUiOiJteWV2ZW50In0.0rDlI69F1Dx4Twps5qD4cQrbXbCRiezBd6fH1PVm6CnVY456FALkAhN3rgVrh_PGCJHcEXN5zoqFg65MH8WZc_CQdD63hJre3Sedu0-9zIs.aZgzkJm57etFaXjjME_-9LjOgPNTTqkp1aJ057HuEiU"

    static let inWindow = Date(timeIntervalSince1970: 1_535_000_000)

    @Test func minterReproducesTheVendorsVectors() {
        let m = QueueItEnqueueTokenMinter(secretKey: Self.vendorSecret)
        #expect(
            m.mint(header: QueueItEnqueueTokenHeader(issuedMillis: Self.issued, tokenIdentifier: Self.ti, customerId: "ticketania"))
                == Self.minimalVector)
        #expect(
            m.mint(
                header: QueueItEnqueueTokenHeader(
                    issuedMillis: Self.issued, expiresMillis: Self.expires, tokenIdentifier: Self.ti,
                    customerId: "ticketania", eventId: "myevent", ipAddress: "5.7.8.6",
                    xForwardedFor: "45.67.2.4,34.56.3.2")) == Self.noPayloadVector)
        let payload = QueueItEnqueueTokenPayload(
            key: "somekey", relativeQuality: 0.45678663514, customData: ["color": "blue", "size": "medium"])
        #expect(
            m.mint(
                header: QueueItEnqueueTokenHeader(
                    issuedMillis: Self.issued, expiresMillis: Self.expires, tokenIdentifier: Self.ti,
                    customerId: "ticketania", eventId: "myevent"), payload: payload) == Self.payloadVector)
    }

    @Test func validatorReadsTheVendorsVectors() throws {
        let v = QueueItEnqueueTokenValidator(secretKey: Self.vendorSecret, customerId: "ticketania", eventId: "myevent")
        let t = try v.validate(Self.payloadVector, now: Self.inWindow)
        #expect(t.header.tokenIdentifier == Self.ti && t.header.eventId == "myevent" && t.header.expiresMillis == Self.expires)
        #expect(
            t.payload
                == QueueItEnqueueTokenPayload(
                    key: "somekey", relativeQuality: 0.45678663514, customData: ["color": "blue", "size": "medium"]))
        #expect(try v.validate(Self.noPayloadVector, now: Self.inWindow).header.xForwardedFor == "45.67.2.4,34.56.3.2")
        // No `exp`: never expires; no `e`: any room of the customer.
        let other = QueueItEnqueueTokenValidator(secretKey: Self.vendorSecret, customerId: "ticketania", eventId: "other")
        #expect(try other.validate(Self.minimalVector, now: Date(timeIntervalSince1970: 4_000_000_000)).payload == nil)
    }

    @Test func refusals() {
        let v = QueueItEnqueueTokenValidator(secretKey: Self.vendorSecret, customerId: "ticketania", eventId: "myevent")
        func code(_ token: String, now: Date = Self.inWindow) -> QueueItEnqueueTokenError? {
            do throws(QueueItEnqueueTokenError) {
                try v.validate(token, now: now)
                return nil
            } catch { return error }
        }
        #expect(code("") == .malformed)
        #expect(code("any-enqueue-token") == .malformed)
        #expect(code("a.b") == .malformed)
        #expect(code("a.b.c.d") == .malformed)
        #expect(code("..sig") == .malformed)
        // Tampered: a header byte, the payload, the signature; another secret key.
        let parts = Self.payloadVector.split(separator: ".").map(String.init)
        let header = String(decoding: QueueItBase64URL.decode(parts[0]) ?? [], as: UTF8.self)
        let forged = QueueItBase64URL.encode(Array(header.replacingOccurrences(of: "myevent", with: "myevenu").utf8))
        #expect(code([forged, parts[1], parts[2]].joined(separator: ".")) == .signature)
        #expect(code([parts[0], String(parts[1].dropLast()) + "A", parts[2]].joined(separator: ".")) == .signature)
        #expect(code([parts[0], parts[1], String(parts[2].reversed())].joined(separator: ".")) == .signature)
        #expect(code([parts[0], parts[1], ""].joined(separator: ".")) == .malformed)
        let wrongKey = QueueItEnqueueTokenMinter(secretKey: "another-secret").mint(
            customerId: "ticketania", eventId: "myevent", issuedAt: Self.inWindow)
        #expect(code(wrongKey) == .signature)
        // Signed but wrong: expired, other room, other customer, not a QT1 header, undecryptable payload.
        #expect(code(Self.payloadVector, now: Date(timeIntervalSince1970: 1_539_129_601)) == .expired)
        let m = QueueItEnqueueTokenMinter(secretKey: Self.vendorSecret)
        #expect(code(m.mint(customerId: "ticketania", eventId: "otherevent", issuedAt: Self.inWindow)) == .event)
        #expect(code(m.mint(customerId: "acme", eventId: "myevent", issuedAt: Self.inWindow)) == .customer)
        var h = QueueItEnqueueTokenHeader(issuedMillis: 1, tokenIdentifier: "x", customerId: "ticketania")
        h.version = "QT2"
        #expect(code(m.mint(header: h)) == .header)
        let garbagePayload = QueueItBase64URL.encode(Array(repeating: 7, count: 32))
        let unsigned =
            QueueItBase64URL.encode(
                Array(QueueItEnqueueTokenHeader(issuedMillis: 1, tokenIdentifier: "x", customerId: "ticketania").json.utf8)) + "."
            + garbagePayload
        #expect(code(unsigned + "." + QueueItEnqueueTokenMinter.signature(unsigned, secretKey: Self.vendorSecret)) == .payload)
    }

    /// The emulator's token-only room takes only tokens the customer's key signed for it, unexpired.
    @Test func emulatorRefusesGarbageTamperedAndExpiredTokens() async throws {
        var config = QueueItEmulatorConfiguration.demo
        var room = QueueItEmulatorConfiguration.Room(state: .queue, admitPerSecond: 0)
        room.enqueueTokenRequired = true
        config.customers["demo"]?.rooms["invite"] = room
        let h = try await Harness.start(config)
        defer { Task { await h.stop() } }
        var c = try h.configuration(room: "invite")
        c.queuePage = .follow
        let p = QueueItProvider(configuration: c, environment: h.environment)
        func attempt(_ token: String) async -> Int? {
            do {
                _ = try await p.tryPass(h.entry("invite", credential: .enqueueToken(token)))
                return 200
            } catch let e as WaitingRoomError {
                return e.vendorCode
            } catch { return nil }
        }
        let good = try #require(
            h.emulator.mintEnqueueToken(customerId: "demo", waitingRoomId: "invite", expiresIn: .seconds(60), key: "k1"))
        #expect(await attempt(good) == 200)
        #expect(await attempt("any-enqueue-token") == 403)
        let parts = good.split(separator: ".").map(String.init)
        #expect(await attempt([parts[0], parts[1], String(parts[2].reversed())].joined(separator: ".")) == 403)
        let otherKey = try #require(h.emulator.mintEnqueueToken(customerId: "demo", waitingRoomId: "invite", secretKey: "not-the-key"))
        #expect(await attempt(otherKey) == 403)
        let otherRoom = try #require(h.emulator.mintEnqueueToken(customerId: "demo", waitingRoomId: "sale"))
        #expect(await attempt(otherRoom) == 403)
        h.clock.advance(by: .seconds(61))
        #expect(await attempt(good) == 403)
        // The refusal names the reason (the enqueue answer's body is the message).
        do { _ = try await p.tryPass(h.entry("invite", credential: .enqueueToken(good))) } catch let e as WaitingRoomError {
            #expect(e.message.contains("expired"), "\(e.message)")
        }
    }
}
