import WaitingRoom

/// The error codes the emulator's management API (`/client/v4`) answers with, one table
/// (README "Management API (v4)"). Cloudflare documents the error object (`code`, `message`,
/// `documentation_url`, `source.pointer`) and the code 7003 "No route for the URI"; it publishes no
/// list of the Waiting Room's own codes, so the others are the emulator's (proposal).
package enum CloudflareV4ErrorCode: Int, Sendable, CaseIterable {
    /// The body is not a JSON object (HTTP 400).
    case invalidBody = 1001
    /// A field is missing, of the wrong type, out of range or not allowed (HTTP 400); the error's
    /// `source.pointer` names it (`/new_users_per_minute`).
    case invalidField = 1002
    /// No waiting room with that id or name (HTTP 404).
    case roomNotFound = 1003
    /// No event with that id in the room (HTTP 404).
    case eventNotFound = 1004
    /// A room or event with that name, or a room on that path, exists (HTTP 400).
    case conflict = 1005
    /// No preview page with that id (HTTP 404).
    case previewNotFound = 1006
    /// No such route or method under `/client/v4` (HTTP 404; Cloudflare's own code).
    case noRoute = 7003
}

/// One entry of an envelope's `errors`: `{"code", "message", "source": {"pointer"}}`.
package struct CloudflareV4Error: Sendable, Hashable {
    package var code: CloudflareV4ErrorCode
    package var message: String
    /// The JSON pointer of the field at fault (`/name`), or nil when no field is.
    package var pointer: String?

    package init(_ code: CloudflareV4ErrorCode, _ message: String, pointer: String? = nil) {
        self.code = code
        self.message = message
        self.pointer = pointer
    }

    /// An error about `field` of the body: the message starts with the field's name.
    package static func field(_ field: String, _ problem: String) -> CloudflareV4Error {
        CloudflareV4Error(.invalidField, "\(field): \(problem)", pointer: "/" + field)
    }

    /// The JSON form.
    package var json: JSONValue {
        var o: [String: JSONValue] = ["code": .number(Double(code.rawValue)), "message": .string(message)]
        if let pointer { o["source"] = .object(["pointer": .string(pointer)]) }
        return .object(o)
    }
}

/// A refused management request: the HTTP status and every error found (each bad field its own).
package struct CloudflareV4Failure: Error, Sendable, Hashable {
    package var status: Int
    package var errors: [CloudflareV4Error]

    package init(status: Int, _ errors: [CloudflareV4Error]) {
        self.status = status
        self.errors = errors
    }

    /// 400 with `errors`.
    package static func badRequest(_ errors: [CloudflareV4Error]) -> CloudflareV4Failure { CloudflareV4Failure(status: 400, errors) }

    /// 404: no room `id`.
    package static func roomNotFound(_ id: String) -> CloudflareV4Failure {
        CloudflareV4Failure(status: 404, [CloudflareV4Error(.roomNotFound, "no waiting room with id or name \"\(id)\"")])
    }

    /// 404: no event `id` in the room.
    package static func eventNotFound(_ id: String) -> CloudflareV4Failure {
        CloudflareV4Failure(status: 404, [CloudflareV4Error(.eventNotFound, "no event with id \"\(id)\" in this waiting room")])
    }
}

/// Cloudflare's v4 envelope: `{"success", "errors", "messages", "result"}`, plus `result_info`
/// for lists (`page`, `per_page`, `count`, `total_count`, and `total_pages`).
package enum CloudflareV4Envelope {
    /// A successful answer carrying `result`.
    package static func success(_ result: JSONValue, resultInfo: JSONValue? = nil) -> JSONValue {
        var o: [String: JSONValue] = ["success": .bool(true), "errors": .array([]), "messages": .array([]), "result": result]
        if let resultInfo { o["result_info"] = resultInfo }
        return .object(o)
    }

    /// A refused request: `success` false, the errors, `result` null.
    package static func failure(_ failure: CloudflareV4Failure) -> JSONValue {
        .object(["success": .bool(false), "errors": .array(failure.errors.map(\.json)), "messages": .array([]), "result": .null])
    }

    /// One page of `items` (1-based `page`) and its `result_info`.
    package static func page(_ items: [JSONValue], page: Int, perPage: Int) -> JSONValue {
        let start = min(items.count, (page - 1) * perPage)
        let slice = Array(items[start..<min(items.count, start + perPage)])
        return success(
            .array(slice),
            resultInfo: .object([
                "page": .number(Double(page)), "per_page": .number(Double(perPage)), "count": .number(Double(slice.count)),
                "total_count": .number(Double(items.count)), "total_pages": .number(Double((items.count + perPage - 1) / perPage))
            ]))
    }
}
