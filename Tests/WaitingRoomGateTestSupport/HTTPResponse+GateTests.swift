import WaitingRoom

extension WaitingRoom.HTTPResponse {
    /// The first value of header `name`.
    public func value(_ name: String) -> String? { headers.value(for: name) }
    /// Every value of header `name`.
    public func values(_ name: String) -> [String] { headers.values(for: name) }
}

/// `name=value` of the `Set-Cookie` for cookie `name` in `response`, for the next request.
public func cookiePair(_ response: WaitingRoom.HTTPResponse, named name: String) -> String? {
    response.values("Set-Cookie").first { $0.hasPrefix(name + "=") }.map { String($0.prefix { $0 != ";" }) }
}
