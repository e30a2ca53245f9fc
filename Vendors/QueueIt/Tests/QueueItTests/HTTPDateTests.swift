import Foundation
import QueueIt
import Testing

/// ``QueueItHTTPDate`` writes what Foundation's formatter with the IMF-fixdate pattern writes.
@Suite struct HTTPDateTests {
    static func formatted(_ date: Date) -> String {
        let f = DateFormatter()
        f.locale = Locale(identifier: "en_US_POSIX")
        f.timeZone = TimeZone(identifier: "GMT")
        f.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        return f.string(from: date)
    }

    @Test func knownDates() {
        #expect(QueueItHTTPDate.string(Date(timeIntervalSince1970: 784_111_777)) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(QueueItHTTPDate.string(Date(timeIntervalSince1970: 0)) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(QueueItHTTPDate.string(Date(timeIntervalSince1970: 951_782_400)) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(QueueItHTTPDate.string(Date(timeIntervalSince1970: -1.5)) == "Wed, 31 Dec 1969 23:59:58 GMT")
    }

    @Test func agreesWithFoundationOnRandomDates() {
        var generator = SystemRandomNumberGenerator()
        for _ in 0..<2_000 {
            let date = Date(timeIntervalSince1970: Double(Int64.random(in: -2_000_000_000...5_000_000_000, using: &generator)))
            #expect(QueueItHTTPDate.string(date) == Self.formatted(date), "\(date.timeIntervalSince1970)")
        }
    }
}
