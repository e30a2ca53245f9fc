import Foundation
import Hummingbird
import NIOCore
import WaitingRoom
import WaitingRoomEmulatorKit

/// The `/_emulator/` dashboard of the combined emulator: every room of every vendor that is an
/// ``EmulatorStatusSource``, live. Serves `GET /_emulator/` (the page) and `GET /_emulator/status`
/// (the vendor-neutral JSON the page polls every second: `{"time": …, "vendors": [EmulatorStatus…]}`).
/// The page's controls call each vendor's own admin routes (`/_emulator/<vendor>/…`), as the
/// vendor lists them in its status.
public struct EmulatorDashboard: Sendable {
    /// The emulators shown, in order.
    package let sources: [any EmulatorStatusSource]

    package init(sources: [any EmulatorStatusSource]) {
        self.sources = sources
    }

    /// The status document.
    public func status(now: Date = Date()) -> JSONValue {
        .object([
            "time": .number((now.timeIntervalSince1970 * 1000).rounded() / 1000),
            "vendors": .array(sources.map { $0.emulatorStatus().json })
        ])
    }

    /// Adds `/_emulator/`, `/_emulator` and `/_emulator/status` to `router`.
    package func addRoutes(to router: Router<BasicRequestContext>) {
        let page: @Sendable (Request, BasicRequestContext) async throws -> Response = { _, _ in
            Self.response(EmulatorDashboardHTML.page, contentType: "text/html; charset=utf-8")
        }
        router.get("/_emulator", use: page)
        router.get("/_emulator/status") { _, _ -> Response in
            Self.response(self.status().jsonText, contentType: "application/json")
        }
    }

    static func response(_ text: String, contentType: String) -> Response {
        var buffer = ByteBufferAllocator().buffer(capacity: text.utf8.count)
        buffer.writeString(text)
        return Response(
            status: .ok, headers: [.contentType: contentType, .cacheControl: "no-store"], body: ResponseBody(byteBuffer: buffer))
    }
}
