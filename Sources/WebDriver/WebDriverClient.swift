import Foundation
import WaitingRoom

/// A failed W3C WebDriver command: the transport failed, or the remote end answered with an
/// error (`{"value": {"error": …, "message": …}}`).
public struct WebDriverFailure: Error, Sendable, CustomStringConvertible {
    /// The WebDriver error code (`"session not created"`, …), or `"transport"`.
    public var error: String
    public var message: String
    public var description: String { "\(error): \(message)" }
}

/// The few W3C WebDriver commands `QueueItBrowserDriver` uses, as JSON over HTTP to a
/// `chromedriver` on 127.0.0.1 (https://www.w3.org/TR/webdriver2/), through the SDK's
/// ``HTTPTransport``. Public so that tests of other modules can drive the same browser
/// (the emulator's pages, the dashboard, the load report).
public struct WebDriverClient: Sendable {
    /// `http://127.0.0.1:<port>`; the client only ever speaks to loopback.
    public let base: String
    public let transport: any HTTPTransport
    /// The deadline of one command.
    public let timeout: Duration

    /// A client of the `chromedriver` listening on 127.0.0.1:`port`.
    public init(port: Int, transport: any HTTPTransport, timeout: Duration) {
        self.base = "http://127.0.0.1:\(port)"
        self.transport = transport
        self.timeout = timeout
    }

    /// Sends one command and returns the answer's `value`.
    public func command(_ method: String, _ path: String, _ body: JSONValue? = nil) async throws(WebDriverFailure) -> JSONValue {
        var headers: HTTPHeaderList = [("Accept", "application/json")]
        var bytes: [UInt8]?
        if let body {
            headers.add("Content-Type", "application/json; charset=utf-8")
            bytes = Array(body.jsonText.utf8)
        } else if method == "POST" {
            headers.add("Content-Type", "application/json; charset=utf-8")
            bytes = Array("{}".utf8)
        }
        let response: HTTPResponse
        do {
            response = try await transport.send(
                HTTPRequest(
                    method: method, url: base + path, headers: headers, body: bytes,
                    timeout: timeout, followRedirects: false))
        } catch {
            throw WebDriverFailure(error: "transport", message: "\(method) \(path): \(error)")
        }
        let json = try? JSONValue.parse(Data(response.body))
        let value = json?.objectValue?["value"] ?? .null
        guard (200...299).contains(response.status) else {
            let o = value.objectValue
            throw WebDriverFailure(
                error: o?["error"]?.stringValue ?? "HTTP \(response.status)",
                message: "\(method) \(path): " + (o?["message"]?.stringValue ?? String(response.text.prefix(300))))
        }
        guard json != nil else {
            throw WebDriverFailure(error: "invalid response", message: "\(method) \(path): not JSON: \(response.text.prefix(200))")
        }
        return value
    }

    /// `GET /status`: whether the remote end is ready for a new session.
    public func ready() async -> Bool {
        guard let v = try? await command("GET", "/status") else { return false }
        return v.objectValue?["ready"]?.boolValue ?? false
    }

    /// `POST /session`; returns the session id.
    public func newSession(capabilities: JSONValue) async throws(WebDriverFailure) -> String {
        let v = try await command("POST", "/session", .object(["capabilities": .object(["alwaysMatch": capabilities])]))
        guard let id = v.objectValue?["sessionId"]?.stringValue, !id.isEmpty else {
            throw WebDriverFailure(error: "invalid response", message: "POST /session: no sessionId in \(v.jsonText.prefix(200))")
        }
        return id
    }

    /// `POST /session/{id}/url`: navigates the top-level browsing context.
    public func navigate(session: String, to url: String) async throws(WebDriverFailure) {
        _ = try await command("POST", "/session/\(session)/url", .object(["url": .string(url)]))
    }

    /// `GET /session/{id}/url`: the current top-level URL.
    public func currentURL(session: String) async throws(WebDriverFailure) -> String {
        let v = try await command("GET", "/session/\(session)/url")
        guard let s = v.stringValue else {
            throw WebDriverFailure(error: "invalid response", message: "GET url: not a string: \(v.jsonText.prefix(200))")
        }
        return s
    }

    /// `POST /session/{id}/execute/sync`: runs `script` in the page and returns its result.
    public func execute(session: String, script: String) async throws(WebDriverFailure) -> JSONValue {
        try await command("POST", "/session/\(session)/execute/sync", .object(["script": .string(script), "args": .array([])]))
    }

    /// `GET /session/{id}/screenshot`: a PNG of the viewport.
    public func screenshot(session: String) async throws(WebDriverFailure) -> Data {
        let v = try await command("GET", "/session/\(session)/screenshot")
        guard let text = v.stringValue, let data = Data(base64Encoded: text) else {
            throw WebDriverFailure(error: "invalid response", message: "GET screenshot: not base64 PNG")
        }
        return data
    }

    /// The browser's console log since the last call (chromedriver's `POST /session/{id}/se/log`
    /// with type `browser`; the session needs the `goog:loggingPrefs` capability): `(level, message)`.
    public func browserLog(session: String) async throws(WebDriverFailure) -> [(level: String, message: String)] {
        let v = try await command("POST", "/session/\(session)/se/log", .object(["type": .string("browser")]))
        return (v.arrayValue ?? []).map { entry in
            let o = entry.objectValue ?? [:]
            return (o["level"]?.stringValue ?? "", o["message"]?.stringValue ?? "")
        }
    }

    /// `DELETE /session/{id}`: closes the browser.
    public func deleteSession(_ session: String) async throws(WebDriverFailure) {
        _ = try await command("DELETE", "/session/\(session)")
    }
}
