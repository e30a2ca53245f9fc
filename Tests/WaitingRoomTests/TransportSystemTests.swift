import Logging
import Synchronization
import Testing
import WaitingRoom
import WaitingRoomHTTP

/// Issue 26: the default transport is provided once (``HTTPTransportSystem``), and vendor
/// loggers derive from the injected logger.
@Suite("Default transport and derived loggers")
struct TransportSystemTests {
    /// Without a bootstrapped transport nothing is sent and the error says how to set one.
    @Test func notBootstrappedFailsAtOnceSayingWhatToDo() async throws {
        let transport = NoNetworkTransport(reason: .notBootstrapped)
        do {
            _ = try await transport.send(HTTPRequest(url: "http://127.0.0.1:9/x"))
            Issue.record("sent")
        } catch let error as WaitingRoomError {
            #expect(error.kind == .invalidConfiguration && error.field == "transport")
            #expect(error.message.contains("HTTPTransportSystem.bootstrap") && error.message.contains("VendorRegistry.standard"))
        }
    }

    /// Bootstrapping the default (what `VendorRegistry.standard` does) is idempotent, and an
    /// environment made without a transport uses it. (Process-wide state: this test only does
    /// what every other test's use of the registry does.)
    @Test func bootstrapIfUnsetKeepsTheFirstAndEnvironmentsUseIt() {
        let first = AsyncHTTPTransport.bootstrapIfUnset()
        let again = AsyncHTTPTransport.bootstrapIfUnset()
        #expect(HTTPTransportSystem.isBootstrapped)
        #expect(type(of: first) == type(of: again))
        #expect(type(of: ProviderEnvironment().transport) == type(of: HTTPTransportSystem.transport))
        // an explicit transport always wins
        #expect(ProviderEnvironment(transport: NoNetworkTransport()).transport is NoNetworkTransport)
    }

    /// `logger(for:)` keeps the injected logger's handler (and so its level and metadata).
    @Test func vendorLoggersUseTheInjectedHandler() {
        let lines = Lines()
        var base = Logger(label: "app") { label in RecordingHandler(label: label, lines: lines) }
        base[metadataKey: "request"] = "r-1"
        base.logLevel = .debug
        let environment = ProviderEnvironment(transport: NoNetworkTransport(), logger: base)
        let vendor = environment.logger(for: "netfunnel")
        #expect(vendor.label == "waitingroom.netfunnel")
        #expect(vendor.logLevel == .debug)
        vendor.debug("hello")
        let recorded = lines.all
        #expect(recorded == ["app debug hello request=r-1"], "\(recorded)")
    }

    final class Lines: Sendable {
        private let lines = Mutex<[String]>([])
        func append(_ line: String) { lines.withLock { $0.append(line) } }
        var all: [String] { lines.withLock { $0 } }
    }

    struct RecordingHandler: LogHandler {
        let label: String
        let lines: Lines
        var metadata: Logger.Metadata = [:]
        var logLevel: Logger.Level = .info
        subscript(metadataKey key: String) -> Logger.Metadata.Value? {
            get { metadata[key] }
            set { metadata[key] = newValue }
        }
        func log(event: LogEvent) {
            let all = metadata.merging(event.metadata ?? [:]) { $1 }.sorted { $0.key < $1.key }.map { "\($0.key)=\($0.value)" }.joined(
                separator: " ")
            lines.append("\(label) \(event.level) \(event.message) \(all)")
        }
    }
}
