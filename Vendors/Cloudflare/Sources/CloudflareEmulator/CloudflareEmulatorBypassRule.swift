import Cloudflare
import WaitingRoom

extension CloudflareEmulatorConfiguration {
    /// A Waiting Room rule with the action `bypass_waiting_room`: a request its expression matches
    /// goes to the origin as if no room covered it (no cookie, not counted, no queue_all, event or
    /// reject applies). The expression is read once, when the room is read
    /// (``CloudflareRuleExpressionParser``: the emulator's subset of the Rules language).
    package struct BypassRule: Sendable, Hashable {
        /// The only action Cloudflare documents for waiting-room rules.
        package static let action = "bypass_waiting_room"

        /// The rule's id (the emulator numbers rules `rule-1`, … when none is given).
        package var id: String
        /// The expression, as written.
        package var expression: String
        package var description: String
        package var enabled: Bool
        let parsed: CloudflareRuleExpression

        /// Reads `expression`; a bad one is `.invalidConfiguration` naming `field`, the column and
        /// what was expected.
        package init(
            id: String, expression: String, description: String = "", enabled: Bool = true,
            field: String = "expression"
        ) throws(WaitingRoomError) {
            self.id = id
            self.expression = expression
            self.description = description
            self.enabled = enabled
            do { parsed = try CloudflareRuleExpressionParser.parse(expression) } catch {
                throw .invalidConfiguration(
                    field: field, "not an expression this emulator reads, \(error.description)",
                    vendor: CloudflareConfiguration.vendorID)
            }
        }

        /// Whether the rule is enabled and `request` matches it.
        func matches(_ request: CloudflareEmulatorRequest) -> Bool { enabled && parsed.matches(request) }

        /// The JSON form.
        package var json: JSONValue {
            .object([
                "id": .string(id), "action": .string(Self.action), "expression": .string(expression),
                "description": .string(description), "enabled": .bool(enabled)
            ])
        }
    }
}
