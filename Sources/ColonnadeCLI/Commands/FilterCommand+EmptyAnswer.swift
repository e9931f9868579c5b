import Colonnade

/// Saying why an answer is empty, when the reason is plain: the dates asked for lie outside the
/// table's.
extension FilterCommand {
    /// The first and last date of any row of `table`, or `nil` for an empty table.
    static func dateRange(of table: QuoteTable) -> ClosedRange<Int32>? {
        var first = Int32.max, last = Int32.min
        for ticker in table.tickers where ticker.rowCount > 0 {
            first = min(first, table.dates[ticker.firstRow])
            last = max(last, table.dates[ticker.firstRow + ticker.rowCount - 1])
        }
        return first <= last ? first ... last : nil
    }

    /// The date bounds every matching row must satisfy: `.dates` terms the predicate and-s
    /// together (`--from`, `--to`, `date >= …` in `--where`), and the `--on` day.
    static func requiredDates(_ predicate: RowPredicate, screenDay: ScreenDay?, maxStale: StaleLimit = .default) -> [RangeBounds<Int32>] {
        var bounds = [RangeBounds<Int32>]()
        func walk(_ p: RowPredicate) {
            switch p {
            case .dates(let b): bounds.append(b)
            case .and(let parts): parts.forEach(walk)
            default: break  // under `or` or `not`, a date term does not bound every match
            }
        }
        walk(predicate)
        if case .day(let day)? = screenDay {
            // As of the day: a row at most --max-stale days before it.
            var lower: Int32?
            if case .days(let n) = maxStale { lower = day.daysSinceEpoch - Int32(clamping: n) }
            bounds.append(RangeBounds(lower: lower, lowerInclusive: true, upper: day.daysSinceEpoch, upperInclusive: true))
        }
        return bounds
    }

    /// `note: no rows match: the dates asked for lie outside this table's, 2000-01-03 to 2009-08-28`
    /// when nothing matched and some date bound excludes every day of the table.
    static func noteWhyEmpty(matched: Int, query: Query, table: QuoteTable, context: CommandContext) {
        guard matched == 0, let range = dateRange(of: table) else { return }
        let outside = requiredDates(query.predicate, screenDay: query.screenDay, maxStale: query.maxStale).contains { b in
            if let lower = b.lower, lower > range.upperBound || (lower == range.upperBound && !b.lowerInclusive) { return true }
            if let upper = b.upper, upper < range.lowerBound || (upper == range.lowerBound && !b.upperInclusive) { return true }
            return false
        }
        guard outside else { return }
        context.note(
            "no rows match: the dates asked for lie outside this table's, "
                + "\(Day(daysSinceEpoch: range.lowerBound)) to \(Day(daysSinceEpoch: range.upperBound))")
    }
}
