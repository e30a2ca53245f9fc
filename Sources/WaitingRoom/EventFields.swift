/// Flat, named fields of events and outcomes: the one mapping used for `--json` output, Lua
/// event tables and logs, so every front shows the same names.
///
/// Names: `event`, `vendor`, `code`, `message`, and where they apply `state`, `ahead`,
/// `behind`, `eta` (seconds), `eta_text`, `percent`, `queue_url`, `target_url`, `pass`
/// (object), `error` (object: `kind`, `code`, `message`, `field`), `connection`
/// (`connected` | `reconnecting` | `offline`) with `attempt` and `retry_in` (seconds).
extension WaitingRoomEvent {
    /// The event as named fields (credentials redacted unless `revealSecrets`).
    package func fields(revealSecrets: Bool = false) -> [String: JSONValue] {
        var f: [String: JSONValue] = [
            "event": .string(name.rawValue),
            "vendor": .string(status.vendor),
            "code": .number(Double(status.code)),
            "message": .string(status.message)
        ]
        switch self {
        case .stateChanged(let state, _):
            f["state"] = .string(state.rawValue)
        case .queueOpened(let page, _):
            f["queue_url"] = .string(page.queueURL)
            if let target = page.targetURL { f["target_url"] = .string(target) }
        case .progress(let p, _):
            f.merge(p.fields, uniquingKeysWith: { $1 })
        case .passed(let pass, _):
            f["pass"] = .object(pass.fields(revealSecrets: revealSecrets))
        case .disabled(let pass, _):
            if let pass { f["pass"] = .object(pass.fields(revealSecrets: revealSecrets)) }
        case .failed(let error):
            f["error"] = .object(error.fields)
        case .connection(let state, _):
            f["connection"] = .string(state.name)
            if case .reconnecting(let attempt, let next) = state {
                f["attempt"] = .number(Double(attempt))
                if let next { f["retry_in"] = .number(next.seconds) }
            }
        case .queuePageChanged(let page, _):
            f["queue_url"] = .string(page.queueURL)
            if let target = page.targetURL { f["target_url"] = .string(target) }
        case .blocked, .closed, .sessionRestarted, .completed, .keyReturnedLate, .userExited:
            break
        }
        return f
    }
}

extension QueueProgress {
    /// `ahead`, `behind`, `eta`, `eta_text`, `percent` (only those known).
    package var fields: [String: JSONValue] {
        var f: [String: JSONValue] = [:]
        if let ahead { f["ahead"] = .number(Double(ahead)) }
        if let behind { f["behind"] = .number(Double(behind)) }
        if let eta { f["eta"] = .number(eta.seconds) }
        if let etaText { f["eta_text"] = .string(etaText) }
        if let percent { f["percent"] = .number(percent) }
        return f
    }
}

extension Pass {
    /// The pass as named fields; the credential is redacted unless `revealSecrets`.
    package func fields(revealSecrets: Bool = false) -> [String: JSONValue] {
        var f: [String: JSONValue] = [
            "vendor": .string(vendor),
            "scope": .string(room.scope),
            "room": .string(room.room),
            "kind": .string(kind.rawValue),
            "credential": .string(Redaction.redact(credential, reveal: revealSecrets)),
            "issued_at": .number(issuedAt.timeIntervalSince1970),
            "requires_completion": .bool(requiresCompletion)
        ]
        if let expiresAt { f["expires_at"] = .number(expiresAt.timeIntervalSince1970) }
        if let targetURL { f["target_url"] = .string(targetURL) }
        if let redirectType { f["redirect_type"] = .string(redirectType) }
        if let bypassedError { f["bypassed_error"] = .object(bypassedError.fields) }
        return f
    }
}

extension WaitingRoomError {
    /// `kind`, `vendor`, `code`, `message`, `field`, `details` (only those known).
    package var fields: [String: JSONValue] {
        var f: [String: JSONValue] = ["kind": .string(kind.rawValue), "message": .string(message)]
        if let vendor { f["vendor"] = .string(vendor) }
        if let vendorCode { f["code"] = .number(Double(vendorCode)) }
        if let field { f["field"] = .string(field) }
        if !details.isEmpty { f["details"] = .object(details.mapValues { .string($0) }) }
        return f
    }
}

extension Outcome {
    /// The outcome as named fields: `outcome` plus the fields of its event.
    package func fields(revealSecrets: Bool = false) -> [String: JSONValue] {
        var f = event.fields(revealSecrets: revealSecrets)
        f["outcome"] = .string(name)
        f["event"] = nil
        return f
    }
}
