import DataLinkFormat
import Colonnade
import Foundation

/// Parses an HTTP `Retry-After` value (RFC 9110 §10.2.3).
enum RetryAfter {
    /// The wait the value asks for: delay-seconds (`120`) or an IMF-fixdate
    /// (`Wed, 21 Oct 2015 07:28:00 GMT`) relative to `now`; a date in the past means zero.
    /// nil when the value is neither.
    static func parse(_ value: String?, now: Date = Date()) -> Duration? {
        guard let value = value?.trimmingASCIIWhitespace(), !value.isEmpty else { return nil }
        if value.utf8.allSatisfy({ (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains($0) }) {
            guard let seconds = Int(value) else { return nil }  // overflow: not a usable value
            return .seconds(seconds)
        }
        guard let date = parseIMFFixdate(value) else { return nil }
        let seconds = date.timeIntervalSince(now)
        return seconds > 0 ? .milliseconds(Int64((seconds * 1000).rounded(.up))) : .zero
    }

    /// `Sun, 06 Nov 1994 08:49:37 GMT` by arithmetic (no DateFormatter, no locale).
    static func parseIMFFixdate(_ text: String) -> Date? {
        let parts = text.split(separator: " ")
        guard parts.count == 6, parts[0].hasSuffix(","), parts[5] == "GMT",
            let day = Int(parts[1]), let year = Int(parts[3])
        else { return nil }
        let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
        guard let monthIndex = months.firstIndex(of: String(parts[2])),
            (1 ... 9999).contains(year), let date = Day(year: year, month: monthIndex + 1, day: day)
        else { return nil }
        let clock = parts[4].split(separator: ":")
        guard clock.count == 3, let hour = Int(clock[0]), let minute = Int(clock[1]), let second = Int(clock[2]),
            (0 ..< 24).contains(hour), (0 ..< 60).contains(minute), (0 ... 60).contains(second)
        else { return nil }
        let seconds = Int(date.daysSinceEpoch) * 86_400 + hour * 3_600 + minute * 60 + second
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }
}
