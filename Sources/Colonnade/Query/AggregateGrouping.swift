/// How aggregates are grouped: overall, per ticker, per calendar bucket of the date (day, week,
/// month, quarter or year), or per ticker and bucket.
///
///     try selection.aggregate([.count, .mean("close")], by: .year)
///     try selection.aggregate([.last("close")], by: AggregateGrouping(byTicker: true, bucket: .month))
///     try AggregateGrouping(parsing: "ticker,week")   // weekly bars
///     try AggregateGrouping(parsing: "date")          // one group per trading day, across tickers
public struct AggregateGrouping: Sendable, Hashable, CustomStringConvertible {
    /// A calendar bucket of the row's date.
    public enum CalendarBucket: String, Sendable, Hashable, CaseIterable {
        /// The calendar year (`2014`).
        case year
        /// The calendar month (`2014-03`).
        case month
        /// The day itself (`2014-03-07`).
        case date
        /// The week from Monday to Sunday, labelled by its Monday (`2014-12-29`; DuckDB's
        /// `date_trunc('week', date)`), so 2015-01-01 lies in the week of 2014-12-29.
        case week
        /// The calendar quarter (`2014-Q2`).
        case quarter
    }

    /// One group per ticker.
    public var byTicker: Bool
    /// One group per calendar bucket (within each ticker when `byTicker`).
    public var bucket: CalendarBucket?
    /// With both a ticker and a bucket: whether the ticker is the first key (`ticker,week`: rows
    /// by ticker, then week) or the second (`week,ticker`: rows by week, then ticker).
    public var tickerFirst: Bool

    /// A grouping; the default is one group of every matching row.
    public init(byTicker: Bool = false, bucket: CalendarBucket? = nil, tickerFirst: Bool = true) {
        self.byTicker = byTicker
        self.bucket = bucket
        self.tickerFirst = tickerFirst
    }

    /// One group of every matching row.
    public static var none: AggregateGrouping { AggregateGrouping() }
    /// Per ticker.
    public static var ticker: AggregateGrouping { AggregateGrouping(byTicker: true) }
    /// Per calendar year, over all tickers.
    public static var year: AggregateGrouping { AggregateGrouping(bucket: .year) }
    /// Per calendar month, over all tickers.
    public static var month: AggregateGrouping { AggregateGrouping(bucket: .month) }
    /// Per trading day, over all tickers.
    public static var date: AggregateGrouping { AggregateGrouping(bucket: .date) }
    /// Per week (Monday to Sunday), over all tickers.
    public static var week: AggregateGrouping { AggregateGrouping(bucket: .week) }
    /// Per calendar quarter, over all tickers.
    public static var quarter: AggregateGrouping { AggregateGrouping(bucket: .quarter) }

    /// Parses a comma-separated list of `ticker` and at most one of `date`, `week`, `month`,
    /// `quarter`, `year`, in either order: `ticker`, `year`, `ticker,week`, `date,ticker`.
    /// - Throws: `QueryError` naming the position of an unknown or repeated key.
    public init(parsing text: String) throws(QueryError) {
        self.init()
        var seen = Set<String>()
        let buckets = CalendarBucket.allCases.map(\.rawValue)
        for (raw, offset) in Aggregate.splitTopLevel(text) {
            let key = raw.trimmingSpaces().lowercased()
            let position = offset + 1
            if seen.contains(key) || (bucket != nil && buckets.contains(key)) {
                throw QueryError(
                    "'\(key)' repeats a grouping key (one of date, week, month, quarter and year at most)",
                    line: 1, column: position, offset: offset)
            }
            seen.insert(key)
            if key == "ticker" {
                byTicker = true
                tickerFirst = bucket == nil
            } else if let b = CalendarBucket(rawValue: key) {
                bucket = b
            } else {
                throw QueryError(
                    "unknown grouping '\(key)'; expected ticker, date, week, month, quarter or year",
                    line: 1, column: position, offset: offset,
                    suggestions: Suggestions.closest(to: key, among: ["ticker"] + buckets))
            }
        }
        if !byTicker || bucket == nil { tickerFirst = true }
    }

    /// Whether every matching row is one group.
    public var isOverall: Bool { !byTicker && bucket == nil }

    /// The key names in output order: `ticker,year`, `week,ticker`, `month`; empty for no grouping.
    public var keyNames: [String] {
        let b = bucket.map { [$0.rawValue] } ?? []
        return byTicker ? (tickerFirst ? ["ticker"] + b : b + ["ticker"]) : b
    }

    /// `ticker,year`, `week,ticker`, `month`, or an empty string for no grouping.
    public var description: String { keyNames.joined(separator: ",") }
}

extension AggregateGrouping.CalendarBucket {
    /// The bucket of a day as a number that orders like the buckets: the year (`2014`), year ×
    /// 100 + month (`201403`), year × 10 + quarter (`20142`), or a day number (date; week: its
    /// Monday's).
    static func key(ofDay day: Int32, _ bucket: Self) -> Int {
        switch bucket {
        case .date: return Int(day)
        case .week: return Int(mondayOnOrBefore(day))
        case .year, .month, .quarter:
            let (year, month, _) = Day.components(ofDay: day)
            switch bucket {
            case .year: return year
            case .month: return year * 100 + month
            default: return year * 10 + (month - 1) / 3 + 1
            }
        }
    }

    /// The first day after the bucket of `day` (nil past the calendar's end).
    static func nextStart(afterBucketOf day: Int32, _ bucket: Self) -> Int32? {
        switch bucket {
        case .date: return day == .max ? nil : day + 1
        case .week:
            let monday = mondayOnOrBefore(day)
            return monday > Int32.max - 7 ? nil : monday + 7
        case .year, .month, .quarter:
            let (year, month, _) = Day.components(ofDay: day)
            switch bucket {
            case .year: return Day.days(year: year + 1, month: 1, day: 1)
            case .month: return month == 12 ? Day.days(year: year + 1, month: 1, day: 1) : Day.days(year: year, month: month + 1, day: 1)
            default:
                let nextQuarterMonth = (month - 1) / 3 * 3 + 4
                return nextQuarterMonth > 12
                    ? Day.days(year: year + 1, month: 1, day: 1) : Day.days(year: year, month: nextQuarterMonth, day: 1)
            }
        }
    }

    /// The Monday on or before `day` (1970-01-01, day 0, was a Thursday).
    static func mondayOnOrBefore(_ day: Int32) -> Int32 {
        let d = Int64(day)
        let weekday = ((d + 3) % 7 + 7) % 7  // 0 = Monday
        return Int32(clamping: d - weekday)
    }

    /// A bucket key as text: `2014`, `2014-03`, `2014-Q2`, `2014-03-07`.
    static func text(ofKey key: Int, _ bucket: Self) -> String {
        switch bucket {
        case .year: return String(key)
        case .month:
            let month = (key % 100 + 100) % 100
            return String((key - month) / 100) + (month < 10 ? "-0" : "-") + String(month)
        case .quarter:
            let q = (key % 10 + 10) % 10
            return String((key - q) / 10) + "-Q" + String(q)
        case .date, .week: return Day(daysSinceEpoch: Int32(clamping: key)).description
        }
    }
}
