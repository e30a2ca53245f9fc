import WaitingRoom

extension FlowResult {
    /// The result as `waitingroom run` prints it (`--json`): `outcome`, `attempts`, `actions`,
    /// the vendor outcome's fields (or the `reason` of a bypass or abort, or the flow's `error`),
    /// the key return's `completion`, and `handler_errors` when a handler failed.
    package var fields: [String: JSONValue] {
        var fields: [String: JSONValue] = [
            "outcome": .string(outcome.name),
            "attempts": .number(Double(attempts)),
            "actions": .array(actions.map { .object(["name": .string($0.name), "payload": $0.payload]) })
        ]
        if !handlerErrors.isEmpty { fields["handler_errors"] = .number(Double(handlerErrors.count)) }
        switch outcome {
        case .vendor(let outcome): fields.merge(outcome.fields(), uniquingKeysWith: { current, _ in current })
        case .bypassed(let reason, _), .aborted(let reason, _): fields["reason"] = .string(reason)
        case .flowError(let error): fields["error"] = .string(error.description)
        }
        if let completion {
            fields["completion"] = .object(["code": .number(Double(completion.code)), "message": .string(completion.message)])
        }
        return fields
    }
}
