import Foundation
import QueueIt
import QueueItGateEngine
import WaitingRoom
import WaitingRoomEmulators
import WaitingRoomGate

/// The Queue-it side of the gate's test apps (the Hummingbird middleware's, and the Vapor and
/// Hummingbird pair's): the emulator's demo customer and an integration configuration in
/// Queue-it's published form, with one integration per action.
public enum QueueItGateFixture {
    public static let customer = "demo"
    public static let secret = "demo-secret-key-0123456789"
    public static let cookieName = QueueItAcceptedCookie.name(forEvent: "sale")

    /// Ignore `/static/`, Cancel on `/logout`, queue `/shop/` and `/api/` (AJAX calls) in `sale`,
    /// the way the Go platform publishes it.
    public static func configurationJSON(queueDomain: String) -> String {
        """
        {
          "Description": "test", "CustomerId": "demo", "AccountId": "demo", "Version": 7, "PublishDate": "2026-11-25T10:00:00Z",
          "ConfigDataVersion": "1.0.0.1",
          "Integrations": [
            {"Name": "static", "ActionType": "Ignore", "EventId": "", "QueueDomain": "",
             "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
               {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/static/",
                "IsNegative": false, "IsIgnoreCase": true}]}]},
            {"Name": "logout", "ActionType": "Cancel", "EventId": "sale", "QueueDomain": "\(queueDomain)", "CookieDomain": "",
             "Triggers": [{"LogicalOperator": "And", "TriggerParts": [
               {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Equals", "ValueToCompare": "/logout",
                "IsNegative": false, "IsIgnoreCase": false}]}]},
            {"Name": "shop", "ActionType": "Queue", "EventId": "sale", "QueueDomain": "\(queueDomain)", "CookieDomain": "",
             "ExtendCookieValidity": true, "CookieValidityMinute": 10, "LayoutName": null, "Culture": "", "RedirectLogic": "AllowTParameter",
             "ForcedTargetUrl": "", "IsCookieHttpOnly": false, "IsCookieSecure": false,
             "Triggers": [{"LogicalOperator": "Or", "TriggerParts": [
               {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/shop/",
                "IsNegative": false, "IsIgnoreCase": true},
               {"ValidatorType": "UrlValidator", "UrlPart": "PagePath", "Operator": "Contains", "ValueToCompare": "/api/",
                "IsNegative": false, "IsIgnoreCase": true}]}]}
          ]
        }
        """
    }

    /// A gate for the emulator behind `server` (its queue domain is the emulator's base URL).
    public static func gate(_ server: EmulatorServer, options: QueueItGate.Options = QueueItGate.Options()) throws -> QueueItGate {
        try QueueItGate(
            customerId: customer, secretKey: secret,
            configuration: try QueueItIntegrationConfig(json: configurationJSON(queueDomain: server.baseURL)), options: options)
    }

    /// A `queueittoken` minted by the emulator (`POST /_emulator/queueit/tokens`).
    public static func token(
        _ server: EmulatorServer, room: String = "sale", expiresIn: Int = 600, clientIP: String? = nil,
        secretKey: String? = nil, eventId: String? = nil
    ) async throws -> String {
        var f: [String: JSONValue] = [
            "customerId": .string(customer), "waitingRoomId": .string(room), "expiresIn": .number(Double(expiresIn)),
            "queueId": .string(UUID().uuidString.lowercased())
        ]
        if let clientIP { f["clientIP"] = .string(clientIP) }
        if let secretKey { f["secretKey"] = .string(secretKey) }
        if let eventId { f["eventId"] = .string(eventId) }
        return try await EmulatorAdmin.token(server, route: "/_emulator/queueit/tokens", f)
    }

    /// A signed `QueueITAccepted` cookie issued `age` seconds ago.
    public static func cookie(age: Int64, queueId: String = "00000000-0000-4000-8000-00000000c00c") -> String {
        let issued = Int64(Date().timeIntervalSince1970) - age
        let c = QueueItAcceptedCookie(
            eventId: "sale", queueId: queueId, fixedValidityMinutes: nil, redirectType: "queue",
            issueTime: issued, hashedIP: nil, secretKey: secret)
        return "\(cookieName)=\(c.value)"
    }

    public static func encoded(_ s: String) -> String { QueueItPercent.encodeComponent(s) }
}
