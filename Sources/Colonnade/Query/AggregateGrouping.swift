/// How aggregates are grouped: overall, per ticker, per calendar bucket of the date (year or
/// month), or per ticker and bucket.
///
///     try selection.aggregate([.count, .mean("close")], by: .year)
///     try selection.aggregate([.last("close")], by: AggregateGrouping(byTicker: true, bucket: .month))
///     try AggregateGrouping(parsing: "ticker,year")
public struct AggregateGrouping: Sendable, Hashable, CustomStringConvertible {
    /// A calendar bucket of the row's date.
    public enum CalendarBucket: String, Sendable, Hashable, CaseIterable {
        /// The calendar year (`2014`).
        case year
        /// The calendar month (`2014-03`).
        case month
    }

    /// One group per ticker.
    public var byTicker: Bool
    /// One group per calendar bucket (within each ticker when `byTicker`).
    public var bucket: CalendarBucket?

    /// A grouping; the default is one group of every matching row.
    public init(byTicker: Bool = false, bucket: CalendarBucket? = nil) {
        self.byTicker = byTicker
        self.bucket = bucket
    }

    /// One group of every matching row.
    public static var none: AggregateGrouping { AggregateGrouping() }
    /// Per ticker.
    public static var ticker: AggregateGrouping { AggregateGrouping(byTicker: true) }
    /// Per calendar year, over all tickers.
    public static var year: AggregateGrouping { AggregateGrouping(bucket: .year) }
    /// Per calendar month, over all tickers.
    public static var month: AggregateGrouping { AggregateGrouping(bucket: .month) }

    /// Parses a comma-separated list of `ticker`, `year`, `month` (at most one of `year` and
    /// `month`; order does not matter): `ticker`, `year`, `ticker,year`.
    /// - Throws: `QueryError` naming the position of an unknown or repeated key.
    public init(parsing text: String) throws(QueryError) {
        self.init()
        var seen = Set<String>()
        for (raw, offset) in Aggregate.splitTopLevel(text) {
            let key = raw.trimmingSpaces().lowercased()
            let position = offset + 1
            if seen.contains(key) || (bucket != nil && (key == "year" || key == "month")) {
                throw QueryError("'\(key)' repeats a grouping key (one of year and month at most)", line: 1, column: position, offset: offset)
            }
            seen.insert(key)
            switch key {
            case "ticker": byTicker = true
            case "year": bucket = .year
            case "month": bucket = .month
            default:
                throw QueryError("unknown grouping '\(key)'; expected ticker, year or month", line: 1, column: position, offset: offset,
                                 suggestions: Suggestions.closest(to: key, among: ["ticker", "year", "month"]))
            }
        }
    }

    /// Whether every matching row is one group.
    public var isOverall: Bool { !byTicker && bucket == nil }

    /// `ticker,year`, `month`, or an empty string for no grouping.
    public var description: String {
        ((byTicker ? ["ticker"] : []) + (bucket.map { [$0.rawValue] } ?? [])).joined(separator: ",")
    }
}
