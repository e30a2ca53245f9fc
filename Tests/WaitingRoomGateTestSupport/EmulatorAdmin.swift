import Foundation
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomHTTP

/// The emulators' admin routes the gate tests use.
public enum EmulatorAdmin {
    /// POSTs JSON to an emulator admin route and returns the answer's `token`.
    public static func token(_ server: EmulatorServer, route: String, _ fields: [String: JSONValue]) async throws -> String {
        let r = try await AsyncHTTPTransport.shared.send(
            WaitingRoom.HTTPRequest(
                method: "POST", url: server.baseURL + route, headers: [("Content-Type", "application/json")],
                body: Array(JSONValue.object(fields).jsonText.utf8)))
        let json = try JSONValue.parse(Data(r.body))
        guard r.status == 200, let token = json["token"]?.stringValue, !token.isEmpty else {
            throw GateTestError("the emulator minted no token: \(r.status) \(String(decoding: r.body, as: UTF8.self))")
        }
        return token
    }

    /// The emulator's state document for `vendor`.
    public static func state(_ server: EmulatorServer, vendor: String) async throws -> JSONValue {
        let r = try await AsyncHTTPTransport.shared.send(WaitingRoom.HTTPRequest(url: server.baseURL + "/_emulator/\(vendor)/state"))
        return try JSONValue.parse(Data(r.body))
    }
}
