import Foundation

/// A room's scheduled start as an emulator's rooms JSON and admin routes write it: an ISO 8601
/// date-time (`"2026-11-25T21:00:00Z"`), Unix seconds (a number, or a string of digits), or
/// `"+SECONDS"`, that many seconds after `now` (the emulator's injected clock when it reads it).
package enum EmulatorScheduledStart {
    /// What the JSON forms accept, for error messages.
    package static let expected = "an ISO 8601 date-time (\"2026-11-25T21:00:00Z\"), Unix seconds, or \"+SECONDS\" from now"

    /// The date `text` names, or nil when it is none of the accepted forms.
    package static func date(from text: String, now: Date) -> Date? {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        if trimmed.hasPrefix("+") {
            guard let seconds = Double(trimmed.dropFirst()), seconds.isFinite, seconds >= 0, seconds <= 1e9 else { return nil }
            return now.addingTimeInterval(seconds)
        }
        if let seconds = Double(trimmed) { return date(unixSeconds: seconds) }
        let plain = ISO8601DateFormatter()
        if let date = plain.date(from: trimmed) { return date }
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return fractional.date(from: trimmed)
    }

    /// The date of `seconds` since 1970, or nil when it is not a finite time within ±10¹¹ s.
    package static func date(unixSeconds seconds: Double) -> Date? {
        guard seconds.isFinite, abs(seconds) < 1e11 else { return nil }
        return Date(timeIntervalSince1970: seconds)
    }

    /// `date` as the JSON forms write it back: ISO 8601 with milliseconds, UTC.
    package static func text(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: date)
    }
}
