/// The day a screen is taken on: which row of each ticker it keeps.
public enum ScreenDay: Sendable, Equatable {
    /// Each ticker's row dated that day (tickers without one are left out).
    case day(Day)
    /// Each ticker's last row.
    case latest

    /// `latest` or a date written `YYYY-MM-DD`; nil for anything else.
    public init?(_ text: String) {
        if text.lowercased() == "latest" { self = .latest; return }
        guard let d = Day(text) else { return nil }
        self = .day(d)
    }
}

extension QuoteTable {
    /// The rows of `day`: at most one per ticker, ascending.
    /// - Complexity: one binary search per ticker.
    public func rows(on day: ScreenDay) -> [Int] {
        switch day {
        case .latest:
            return tickers.filter { $0.rowCount > 0 }.map { $0.firstRow + $0.rowCount - 1 }
        case .day(let d):
            return dateIntervals(.equal(to: d.daysSinceEpoch)).map(\.lowerBound)
        }
    }

    /// Screening as of a day: the predicate is evaluated only at each ticker's row of `day`, with
    /// series functions over the ticker's whole history before it (a window reads only the rows it
    /// needs: the last `n` of each ticker, not the table). `select(p, on: .latest)` keeps the rows
    /// of `select(p)` that are each ticker's last.
    ///
    ///     let screen = Field("close") > Field("close").mavg(200) && Field("volume") > 2 * Field("volume").mavg(20)
    ///     let today = try table.select(screen, on: .latest)
    ///
    /// A date term in the predicate narrows the answer, never the history a window sees.
    /// - Throws: `QueryError` for an unknown column.
    public func select(_ predicate: RowPredicate, on day: ScreenDay, options: QueryOptions = QueryOptions()) throws(QueryError) -> Selection {
        let plan = try plan(predicate)
        let candidates = rows(on: day)
        let scratch = ExpressionScratch()
        let keep = pointMatches(plan, rows: candidates, scratch: scratch)
        options.counters?.addExpressionRows(scratch.rowsEvaluated)
        var mask = Bitmask(count: rowCount)
        mask.withUnsafeMutableWords { w in
            for (row, k) in zip(candidates, keep) where k { w[row >> 6] |= 1 << UInt64(row & 63) }
        }
        return Selection(table: self, mask: mask)
    }

    /// Screening as of a day with the predicate written as text.
    public func select(where expression: String, on day: ScreenDay, options: QueryOptions = QueryOptions()) throws(QueryError) -> Selection {
        try select(QueryParser(table: self).parse(expression), on: day, options: options)
    }

    /// Whether each of `rows` (ascending) satisfies `plan`: the plan's leaves are evaluated at
    /// those rows only (negation normal form, so a null or NaN leaf is false, as in the kernels).
    func pointMatches(_ plan: PlanNode, rows: [Int], scratch: ExpressionScratch) -> [Bool] {
        switch plan {
        case .none: return [Bool](repeating: false, count: rows.count)
        case .all: return [Bool](repeating: true, count: rows.count)
        case .rows(let intervals):
            return rows.map { row in
                var lo = 0, hi = intervals.count
                while lo < hi {
                    let mid = (lo + hi) >> 1
                    if intervals[mid].upperBound <= row { lo = mid + 1 } else { hi = mid }
                }
                return lo < intervals.count && intervals[lo].contains(row)
            }
        case let .range(column, bounds):
            return rows.map { QuoteTable.matches(columns[column], bounds, row: $0) }
        case let .expression(program, bounds):
            return program.values(atRows: rows, scratch: scratch).map { !$0.isNaN && bounds.matches($0) }
        case .and(let children):
            var result = [Bool](repeating: true, count: rows.count)
            for child in children {
                // Only rows still in the running: a later term costs nothing for rows already out.
                let alive = rows.indices.filter { result[$0] }
                if alive.isEmpty { break }
                let m = pointMatches(child, rows: alive.map { rows[$0] }, scratch: scratch)
                for (k, i) in alive.enumerated() where !m[k] { result[i] = false }
            }
            return result
        case .or(let children):
            var result = [Bool](repeating: false, count: rows.count)
            for child in children {
                let open = rows.indices.filter { !result[$0] }
                if open.isEmpty { break }
                let m = pointMatches(child, rows: open.map { rows[$0] }, scratch: scratch)
                for (k, i) in open.enumerated() where m[k] { result[i] = true }
            }
            return result
        }
    }

    private static func matches(_ column: AnyColumn, _ bounds: TypedBounds, row: Int) -> Bool {
        switch (column, bounds) {
        case let (.float64(c), .float64(b)): return c.value(at: row).map(b.matches) ?? false
        case let (.float32(c), .float32(b)): return c.value(at: row).map(b.matches) ?? false
        case let (.int64(c), .int64(b)): return c.value(at: row).map(b.matches) ?? false
        case let (.int32(c), .int32(b)): return c.value(at: row).map(b.matches) ?? false
        default: return false
        }
    }
}
