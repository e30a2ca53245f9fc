import Foundation
import WaitingRoom

/// Renders events for people: a live, redrawn line on a terminal (position, ETA, a bar), one
/// plain line per event otherwise, or one JSON object per event with `--json`.
public struct EventPrinter: Sendable {
    /// How to print.
    public enum Mode: Sendable { case live, plain, json }

    /// The chosen mode.
    public let mode: Mode
    let terminal: Terminal
    /// A label in front of every line (for example "you").
    public let label: String

    /// Picks live mode on a terminal, plain otherwise, JSON when asked.
    public init(json: Bool, terminal: Terminal = Terminal(), label: String = "") {
        self.terminal = terminal
        self.label = label
        mode = json ? .json : (terminal.stdoutIsTTY ? .live : .plain)
    }

    /// Prints one event.
    public func print(_ event: WaitingRoomEvent) {
        switch mode {
        case .json:
            var fields = event.fields()
            if !label.isEmpty { fields["who"] = .string(label) }
            terminal.line(JSONValue.object(fields).jsonText)
        case .plain:
            terminal.line(Self.plainLine(event, label: label))
        case .live:
            if case .progress(let p, _) = event {
                terminal.out("\r\u{1B}[2K" + Self.liveLine(p, label: label, width: terminal.columns))
            } else if case .stateChanged = event {
                return
            } else {
                terminal.out("\r\u{1B}[2K")
                terminal.line(Self.plainLine(event, label: label))
            }
        }
    }

    /// Prints the end of a run (an outcome and anything the flow handed back).
    public func printResult(_ fields: [String: JSONValue]) {
        switch mode {
        case .json:
            var f = fields
            f["event"] = .string("result")
            terminal.line(JSONValue.object(f).jsonText)
        case .plain, .live:
            if mode == .live { terminal.out("\r\u{1B}[2K") }
            let keys = ["outcome", "vendor", "code", "message", "reason", "attempts", "error", "exit_status"]
            var text = keys.compactMap { key in fields[key].map { "\(key)=\(Self.short($0))" } }.joined(separator: " ")
            if case .object(let completion)? = fields["completion"], let code = completion["code"] {
                text += " completion=\(Self.short(code))"
            }
            if case .array(let actions)? = fields["actions"] { text += " actions=\(actions.count)" }
            terminal.line((label.isEmpty ? "" : "[\(label)] ") + "result " + text)
        }
    }

    /// `[label] progress ahead=3 behind=1 eta=00:00:04 23%`-style line.
    public static func plainLine(_ event: WaitingRoomEvent, label: String = "") -> String {
        let prefix = label.isEmpty ? "" : "[\(label)] "
        var parts = [event.name.rawValue]
        switch event {
        case .stateChanged(let state, _): parts.append(state.rawValue)
        case .progress(let p, _):
            if let a = p.ahead { parts.append("ahead=\(a)") }
            if let b = p.behind { parts.append("behind=\(b)") }
            if let t = p.etaText ?? p.eta.map(Self.clock) { parts.append("eta=\(t)") }
            if let pc = p.percent { parts.append(String(format: "%.0f%%", pc)) }
        case .queueOpened(let page, _), .queuePageChanged(let page, _): parts.append(page.queueURL)
        case .failed(let error): parts.append(error.kind.rawValue)
        case .connection(let state, _): parts.append(state.description)
        default: break
        }
        let status = event.status
        parts.append("(\(status.vendor) \(status.code) \(status.message))")
        return prefix + parts.joined(separator: " ")
    }

    /// `you  #3 in line · 1 behind · ETA 00:00:04  [######------] 50%`
    public static func liveLine(_ p: QueueProgress, label: String, width: Int) -> String {
        var text = label.isEmpty ? "" : "\(label)  "
        text += p.ahead.map { "#\($0 + 1) in line" } ?? "in line"
        if let behind = p.behind { text += " · \(behind) behind" }
        if let eta = p.etaText ?? p.eta.map(Self.clock) { text += " · ETA \(eta)" }
        let percent = max(0, min(100, p.percent ?? 0))
        let barWidth = max(10, min(30, width - text.count - 12))
        let filled = Int((Double(barWidth) * percent / 100).rounded())
        text += "  [" + String(repeating: "#", count: filled) + String(repeating: "-", count: barWidth - filled) + "]"
        text += String(format: " %3.0f%%", percent)
        return String(text.prefix(max(20, width - 1)))
    }

    static func clock(_ d: Duration) -> String {
        let s = max(0, Int(d.seconds.rounded()))
        return String(format: "%02d:%02d:%02d", s / 3600, s / 60 % 60, s % 60)
    }

    static func short(_ value: JSONValue) -> String {
        if case .string(let s) = value { return s }
        return value.jsonText
    }
}
