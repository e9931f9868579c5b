import Foundation

/// The time zone an Arrow timestamp column names (`timestamp[us, tz=America/New_York]`), to find
/// each row's day where it was taken: the instant (UTC) moved by the zone's offset at that
/// instant, from the system's time-zone database (Foundation's `TimeZone`). Fixed offsets
/// (`+05:30`, `-0800`, `+09`) are read directly.
///
///     var zone = InteropTimeZone(named: "Asia/Tokyo")!
///     zone.localDayAndTime(1_388_588_400, unitsPerDay: 86_400)   // (day of 2014-01-02, 0)
///
/// The offset is kept for the span until the zone's next transition, so a column of one
/// ticker's days asks the database about once per transition, not once per row.
struct InteropTimeZone {
    let zone: TimeZone
    /// UTC seconds `start ..< end` over which the offset is `offset` seconds.
    private var cached: (start: Int64, end: Int64, offset: Int64)?

    /// The zone named `name` (an IANA name such as `Europe/London`, `UTC`, or a fixed offset),
    /// or nil when the system does not know it.
    init?(named name: String) {
        if let fixed = Self.fixedOffset(name) {
            guard let z = TimeZone(secondsFromGMT: fixed) else { return nil }
            zone = z
        } else {
            guard let z = TimeZone(identifier: name) else { return nil }
            zone = z
        }
    }

    /// The seconds of a fixed offset `±HH:MM`, `±HHMM` or `±HH`, or nil.
    static func fixedOffset(_ name: String) -> Int? {
        let b = Array(name.utf8)
        guard let sign = b.first, sign == UInt8(ascii: "+") || sign == UInt8(ascii: "-") else { return nil }
        let digits = b.dropFirst().filter { $0 != UInt8(ascii: ":") }
        guard digits.count == 2 || digits.count == 4, digits.allSatisfy({ $0 >= 48 && $0 <= 57 }),
            b.count == 1 + digits.count + (b.contains(UInt8(ascii: ":")) ? 1 : 0)
        else { return nil }
        let v = digits.map { Int($0) - 48 }
        let hours = v[0] * 10 + v[1], minutes = v.count == 4 ? v[2] * 10 + v[3] : 0
        guard hours <= 23, minutes <= 59 else { return nil }
        return (sign == UInt8(ascii: "-") ? -1 : 1) * (hours * 3600 + minutes * 60)
    }

    /// The zone's offset from UTC, in seconds, at `seconds` since the epoch (UTC).
    mutating func offset(atUTCSeconds seconds: Int64) -> Int64 {
        if let c = cached, seconds >= c.start, seconds < c.end { return c.offset }
        let date = Date(timeIntervalSince1970: Double(seconds))
        let offset = Int64(zone.secondsFromGMT(for: date))
        var end = Int64.max
        if let next = zone.nextDaylightSavingTimeTransition(after: date) {
            let t = next.timeIntervalSince1970.rounded(.down)
            if t > Double(seconds), t < 9.2e18 { end = Int64(t) }
        }
        // Beyond the database's last transition the offset holds; otherwise until the next one.
        cached = (seconds, end, offset)
        return offset
    }

    /// The day, in this zone, of a timestamp of `unitsPerDay` units per day since the epoch
    /// (UTC), and its time of day there in those units (0 at midnight).
    mutating func localDayAndTime(_ value: Int64, unitsPerDay: Int64) -> (day: Int64, units: Int64) {
        let perSecond = Swift.max(1, unitsPerDay / 86_400)
        let seconds = InteropValues.day(value, unitsPerDay: perSecond)  // floor division
        let fraction = value &- seconds &* perSecond
        // Days outside the storable range (by more than any offset) are not looked up: the caller
        // refuses them, and the database need not answer for year 290 billion.
        let utcDay = InteropValues.day(seconds, unitsPerDay: 86_400)
        guard utcDay >= Int64(Day.storableDayNumbers.lowerBound) - 2, utcDay <= Int64(Day.storableDayNumbers.upperBound) + 2 else {
            return (utcDay, seconds - utcDay * 86_400)
        }
        let local = seconds + offset(atUTCSeconds: seconds)
        let day = InteropValues.day(local, unitsPerDay: 86_400)
        return (day, (local - day * 86_400) * perSecond + fraction)
    }
}
