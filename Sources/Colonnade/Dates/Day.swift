/// A calendar day: the one date type of Colonnade (tables, queries, snapshots, the Data Link
/// client and the CLI all use it). A day number underneath — days since 1970-01-01 in the
/// proleptic Gregorian calendar — with parsing, formatting and arithmetic by plain integer
/// arithmetic: no `Calendar`, no `DateFormatter`, no time zones.
///
///     let day = Day("2000-02-29")!              // parse YYYY-MM-DD
///     day.daysSinceEpoch                        // 11_016
///     day.components                            // (year: 2000, month: 2, day: 29)
///     Day(2000, 3, 1) - day                     // 1
///     day.adding(days: 1)?.description          // "2000-03-01"
///     Day(year: 2001, month: 2, day: 29)        // nil
///
/// Date columns store the day numbers (`Int32`) directly; `Day` is the typed view of one.
public struct Day: Sendable, Hashable, Comparable, CustomStringConvertible, LosslessStringConvertible {
    /// Days since 1970-01-01 (negative before it).
    public var daysSinceEpoch: Int32

    /// A day from its number of days since 1970-01-01.
    public init(daysSinceEpoch: Int32) { self.daysSinceEpoch = daysSinceEpoch }

    /// The day `year-month-day`, or nil when there is no such day (February 30, month 13, …) or
    /// its day number does not fit in `Int32` (about ±5.8 million years).
    ///
    /// - Parameters:
    ///   - year: The astronomical year (year 0 is 1 BC).
    ///   - month: 1...12.
    ///   - day: 1 up to the length of the month.
    public init?(year: Int, month: Int, day: Int) {
        guard let days = Day.days(year: year, month: month, day: day) else { return nil }
        daysSinceEpoch = days
    }

    /// The day `year-month-day`, for dates written in code.
    /// - Precondition: the date exists (see `init?(year:month:day:)` for input).
    public init(_ year: Int, _ month: Int, _ day: Int) {
        guard let days = Day.days(year: year, month: month, day: day) else {
            preconditionFailure("invalid date \(year)-\(month)-\(day)")
        }
        daysSinceEpoch = days
    }

    /// Parses exactly `YYYY-MM-DD` (10 ASCII bytes); nil when malformed or not a valid date.
    public init?(_ text: String) {
        var text = text
        let days = text.withUTF8 { bytes -> Int32? in
            guard let base = bytes.baseAddress else { return nil }
            return Day.parseDay(base, count: bytes.count)
        }
        guard let days else { return nil }
        daysSinceEpoch = days
    }

    /// The (year, month, day) of this day; years may be ≤ 0 (proleptic, astronomical).
    public var components: (year: Int, month: Int, day: Int) { Day.components(ofDay: daysSinceEpoch) }

    /// `YYYY-MM-DD`. Years 0...9999 print as four digits; later years with more digits, earlier
    /// ones with a `-` and at least four digits (`-0001-12-31`).
    public var description: String { Day.format(day: daysSinceEpoch) }

    /// The day `days` later (earlier when negative), or nil past the range of day numbers.
    public func adding(days: Int) -> Day? {
        guard let days = Int32(exactly: Int(daysSinceEpoch) + days) else { return nil }
        return Day(daysSinceEpoch: days)
    }

    /// The number of days from `b` to `a` (negative when `a` is earlier).
    public static func - (a: Day, b: Day) -> Int { Int(a.daysSinceEpoch) - Int(b.daysSinceEpoch) }

    /// Earlier days sort first.
    public static func < (a: Day, b: Day) -> Bool { a.daysSinceEpoch < b.daysSinceEpoch }

    /// The day numbers a table may hold: 0001-01-01 (−719 162) … 9999-12-31 (2 932 896), the days
    /// the four-digit `YYYY-MM-DD` of every text format can carry, so whatever is stored can be
    /// exported and imported again. Every way into a table enforces it (the text decoders, Arrow
    /// and Parquet, `QuoteTable`'s initializers, the snapshot loader and `verify`); see
    /// SNAPSHOT_FORMAT.md, *Dates*. `Day` itself spans any `Int32` day number, for arithmetic.
    public static let storableDayNumbers: ClosedRange<Int32> = -719_162 ... 2_932_896

    /// The first and last storable days, as text: `0001-01-01 … 9999-12-31`.
    public static let storableRangeDescription = "0001-01-01 … 9999-12-31"

    /// Whether a table may hold this day (see `storableDayNumbers`).
    public var isStorable: Bool { Day.storableDayNumbers.contains(daysSinceEpoch) }
}
