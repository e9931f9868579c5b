/// How old a ticker's row may be, in calendar days before the screen's day, for an as-of screen to
/// use it (`--max-stale`).
public enum StaleLimit: Sendable, Equatable, CustomStringConvertible {
    /// At most this many calendar days before the day (0: the day itself only).
    case days(Int)
    /// Any earlier row (a ticker that stopped trading long ago is still screened).
    case none

    /// Seven calendar days: a holiday weekend, not a ticker that stopped trading.
    public static let `default` = StaleLimit.days(7)

    /// `none` or a whole number of days (0 … 100000); nil for anything else.
    public init?(_ text: String) {
        if text.lowercased() == "none" {
            self = .none
            return
        }
        guard let n = Int(text), n >= 0, n <= 100_000 else { return nil }
        self = .days(n)
    }

    /// `7` or `none`, as `--max-stale` takes it.
    public var description: String {
        switch self {
        case .days(let n): String(n)
        case .none: "none"
        }
    }
}

/// Which row of each ticker an as-of screen uses, and what was left out: enough for one note.
public struct AsOfRows: Sendable, Equatable {
    /// The day asked for (for `latest`, the newest date in the table); nil for an empty table.
    public var day: Day?
    /// Each used ticker's last row on or before `day` within the stale limit, ascending.
    public var rows: [Int]
    /// The newest date among the rows used (nil when none is used).
    public var newestUsed: Day?
    /// Used rows dated before `day` (the ticker had no row on the day itself).
    public var rowsBeforeDay: Int
    /// Tickers whose last row on or before `day` is older than the stale limit: left out.
    public var staleTickers: Int
    /// The stale limit applied.
    public var maxStale: StaleLimit

    /// One line about the rows used when they are not all of `day` itself or some tickers were
    /// left out as stale, else nil:
    ///
    ///     as of 2014-05-23 (2014-05-26 has no rows); 3 tickers with no row since before 2014-05-19 left out (--max-stale 7)
    public var note: String? {
        guard let day else { return nil }
        var parts = [String]()
        if let newest = newestUsed, newest < day {
            parts.append("as of \(newest) (\(day) has no rows)")
        } else if rowsBeforeDay > 0 {
            parts.append(
                "as of \(day): \(rowsBeforeDay) \(rowsBeforeDay == 1 ? "ticker's row is" : "tickers' rows are") from an earlier day")
        }
        if staleTickers > 0, case .days(let n) = maxStale {
            let limit = day.adding(days: -n).map { "since before \($0)" } ?? "within \(n) days"
            parts.append("\(staleTickers) \(staleTickers == 1 ? "ticker" : "tickers") with no row \(limit) left out (--max-stale \(n))")
        }
        return parts.isEmpty ? nil : parts.joined(separator: "; ")
    }
}

extension QuoteTable {
    /// The rows an as-of screen on `day` uses: for each ticker, its last row on or before the day
    /// (`latest`: the newest date in the table), provided that row is at most `maxStale` calendar
    /// days before it — like kdb+'s `aj` and DuckDB's `ASOF JOIN`. A weekend or a holiday so
    /// answers with the previous session; a ticker that stopped trading is left out; a ticker
    /// whose first row is after the day has no row to use.
    /// - Complexity: one read per ticker whose last row is on or before the day (every ticker for
    ///   `latest`), else one binary search.
    public func rows(asOf day: ScreenDay, maxStale: StaleLimit = .default) -> AsOfRows {
        // One pass over the ticker index in place (an entry's row range read without copying its
        // symbol and metadata) and one read of the dates per ticker (`latest`: the same read
        // serves both passes, the second from the cache).
        tickers.withUnsafeBufferPointer { entries in
            dates.withUnsafeBufferPointer { d in
                let target: Int32
                switch day {
                case .day(let x): target = x.daysSinceEpoch
                case .latest:
                    var newest: Int32?
                    for i in entries.indices where entries[i].rowCount > 0 {
                        let last = d[entries[i].firstRow + entries[i].rowCount - 1]
                        newest = Swift.max(newest ?? last, last)
                    }
                    guard let newest else {
                        return AsOfRows(day: nil, rows: [], newestUsed: nil, rowsBeforeDay: 0, staleTickers: 0, maxStale: maxStale)
                    }
                    target = newest
                }
                var result = AsOfRows(
                    day: Day(daysSinceEpoch: target), rows: [], newestUsed: nil, rowsBeforeDay: 0,
                    staleTickers: 0, maxStale: maxStale)
                result.rows.reserveCapacity(entries.count)
                let limit: Int? = if case .days(let n) = maxStale { n } else { nil }
                var newest: Int32?
                var ascending = true
                for i in entries.indices where entries[i].rowCount > 0 {
                    let first = entries[i].firstRow
                    // The last row of the ticker dated on or before the target: rows are in date
                    // order. Its last row when that is (`latest`, and any day after the table's
                    // end): one read.
                    var lo = first + entries[i].rowCount, hi = lo
                    if d[lo - 1] > target {
                        lo = first
                        while lo < hi {
                            let mid = (lo + hi) >> 1
                            if d[mid] <= target { lo = mid + 1 } else { hi = mid }
                        }
                    }
                    guard lo > first else { continue }  // the ticker starts after the day
                    let row = lo - 1
                    let age = Int(target) - Int(d[row])
                    if let limit, age > limit {
                        result.staleTickers += 1
                        continue
                    }
                    if let previous = result.rows.last, previous > row { ascending = false }
                    result.rows.append(row)
                    if age > 0 { result.rowsBeforeDay += 1 }
                    newest = Swift.max(newest ?? d[row], d[row])
                }
                if !ascending { result.rows.sort() }
                result.newestUsed = newest.map { Day(daysSinceEpoch: $0) }
                return result
            }
        }
    }
}
