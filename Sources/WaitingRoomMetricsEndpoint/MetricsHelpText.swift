import Foundation
import WaitingRoom

/// `# HELP` lines for ``MetricsEndpoint``'s Prometheus text.
///
/// swift-prometheus registers what comes through swift-metrics without help text (a
/// `MetricsFactory` call carries none, and the registry refuses a second, different help for a
/// name), and `promtool check metrics` flags every family without one. The endpoint therefore
/// adds a `# HELP` line before each `# TYPE` line that has none: the SDK's own metrics with their
/// meaning (``WaitingRoom/WaitingRoomMetrics``), any other with a line naming it.
package enum MetricsHelpText {
    /// What the SDK's metrics mean, by name (the core's table).
    package static let known: [String: String] = WaitingRoomMetrics.help

    /// The help for `name`: its meaning when known, else a line naming it.
    package static func help(for name: String) -> String {
        known[name] ?? "\(name) (a swift-metrics metric of this process)."
    }

    /// `text` (the exposition format) with a `# HELP` line before every `# TYPE` line whose
    /// family has none.
    package static func adding(to text: [UInt8]) -> [UInt8] {
        let lines = text.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false)
        var out: [UInt8] = []
        out.reserveCapacity(text.count + 128 * 8)
        var previous: ArraySlice<UInt8> = []
        let typePrefix = Array("# TYPE ".utf8)
        let helpPrefix = Array("# HELP ".utf8)
        for (index, line) in lines.enumerated() {
            if line.starts(with: typePrefix) {
                let name = line.dropFirst(typePrefix.count).prefix { $0 != UInt8(ascii: " ") }
                if !previous.starts(with: helpPrefix + name + [UInt8(ascii: " ")]) {
                    out += helpPrefix + name + [UInt8(ascii: " ")]
                    out += Array(escape(help(for: String(decoding: name, as: UTF8.self))).utf8)
                    out.append(UInt8(ascii: "\n"))
                }
            }
            out += line
            if index < lines.count - 1 { out.append(UInt8(ascii: "\n")) }
            previous = line
        }
        return out
    }

    /// Help text escaped as the format wants: `\` as `\\`, a line feed as `\n`.
    package static func escape(_ help: String) -> String {
        help.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\n", with: "\\n")
    }
}
