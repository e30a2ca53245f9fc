import Foundation

/// An HTTP date in the IMF-fixdate form (RFC 9110 §5.6.7: `Sun, 06 Nov 1994 08:49:37 GMT`), as the
/// `Expires` of the `QueueITAccepted` cookie carries it. Computed from the epoch seconds on the
/// proleptic Gregorian calendar in UTC, without a `DateFormatter`: a formatter made per cookie
/// cost a quarter of `waitingroom gate`'s CPU time per request (the cookie is re-issued on every
/// request when `ExtendCookieValidity`), and a shared one is not `Sendable`.
package enum QueueItHTTPDate {
    static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `date` (whole seconds, rounded down) as an IMF-fixdate; years before 1 or after 9999 are
    /// clamped to those years' bounds, which no cookie expiry reaches.
    package static func string(_ date: Date) -> String {
        let seconds = Int64(max(-62_135_596_800, min(253_402_300_799, date.timeIntervalSince1970.rounded(.down))))
        var days = seconds / 86_400
        var secondOfDay = seconds % 86_400
        if secondOfDay < 0 {
            secondOfDay += 86_400
            days -= 1
        }
        // 1970-01-01 was a Thursday.
        let weekday = Int(((days % 7) + 11) % 7)
        // Days to civil date (H. Hinnant's algorithm, eras of 400 years from 0000-03-01).
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1_460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        var text: [UInt8] = []
        text.reserveCapacity(29)
        func append(_ name: String) { text.append(contentsOf: name.utf8) }
        func digits(_ value: Int64, _ width: Int) {
            var divisor: Int64 = 1
            for _ in 1..<width { divisor *= 10 }
            while divisor > 0 {
                text.append(UInt8(ascii: "0") + UInt8(value / divisor % 10))
                divisor /= 10
            }
        }
        append(weekdays[weekday])
        append(", ")
        digits(day, 2)
        text.append(UInt8(ascii: " "))
        append(months[Int(month) - 1])
        text.append(UInt8(ascii: " "))
        digits(year, 4)
        text.append(UInt8(ascii: " "))
        digits(secondOfDay / 3_600, 2)
        text.append(UInt8(ascii: ":"))
        digits(secondOfDay / 60 % 60, 2)
        text.append(UInt8(ascii: ":"))
        digits(secondOfDay % 60, 2)
        append(" GMT")
        return String(decoding: text, as: UTF8.self)
    }
}
