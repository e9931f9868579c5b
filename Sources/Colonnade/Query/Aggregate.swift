/// An aggregate over the matching rows: `count(*)`, or count / sum / min / max / mean of a column.
public struct Aggregate: Sendable, Hashable, CustomStringConvertible {
    /// What to compute.
    public enum Function: String, Sendable, Hashable, CaseIterable {
        case count, sum, min, max, mean
    }

    /// The function.
    public var function: Function
    /// The column (identifier or source name), nil for `count(*)`.
    public var column: String?

    /// An aggregate of a column, or `count(*)` when `column` is nil.
    public init(_ function: Function, _ column: String? = nil) {
        self.function = function
        self.column = column
    }

    /// `count(*)`: matching rows.
    public static var count: Aggregate { Aggregate(.count) }
    /// `count(column)`: matching rows where the column is not null.
    public static func count(_ column: String) -> Aggregate { Aggregate(.count, column) }
    /// The sum of a column over matching rows (nulls skipped).
    public static func sum(_ column: String) -> Aggregate { Aggregate(.sum, column) }
    /// The minimum (nulls and NaN skipped).
    public static func min(_ column: String) -> Aggregate { Aggregate(.min, column) }
    /// The maximum (nulls and NaN skipped).
    public static func max(_ column: String) -> Aggregate { Aggregate(.max, column) }
    /// The mean: sum / count of non-null values.
    public static func mean(_ column: String) -> Aggregate { Aggregate(.mean, column) }

    /// `count`, `sum(close)`, …
    public var description: String { "\(function.rawValue)(\(column ?? "*"))" }

    /// Parses a list like `count,sum(close),min(low),max(high),avg(volume)` (`avg` is `mean`;
    /// a bare `count` is `count(*)`).
    public static func parseList(_ text: String) throws(QueryError) -> [Aggregate] {
        var out = [Aggregate]()
        var offset = 0
        for raw in text.split(separator: ",", omittingEmptySubsequences: false) {
            let item = raw.trimmingSpaces()
            defer { offset += raw.utf8.count + 1 }
            let position = offset + 1
            guard !item.isEmpty else { throw QueryError("empty aggregate in list", line: 1, column: position) }
            var name = item, argument: String? = nil
            if let open = item.firstIndex(of: "(") {
                guard item.hasSuffix(")") else { throw QueryError("missing ')' in aggregate '\(item)'", line: 1, column: position) }
                name = String(item[..<open]).trimmingSpaces()
                let inner = String(item[item.index(after: open) ..< item.index(before: item.endIndex)]).trimmingSpaces()
                argument = inner == "*" ? nil : inner
                if let a = argument, a.hasPrefix("\""), a.hasSuffix("\""), a.count >= 2 { argument = String(a.dropFirst().dropLast()) }
            }
            let lowered = name.lowercased()
            let function: Function
            switch lowered {
            case "count": function = .count
            case "sum": function = .sum
            case "min": function = .min
            case "max": function = .max
            case "mean", "avg", "average": function = .mean
            default:
                throw QueryError("unknown aggregate '\(name)'", kind: .unknownAggregate, line: 1, column: position,
                                 suggestions: Suggestions.closest(to: lowered, among: ["count", "sum", "min", "max", "avg", "mean"]))
            }
            if function != .count && argument == nil {
                throw QueryError("aggregate '\(lowered)' needs a column, as in \(lowered)(close)", line: 1, column: position)
            }
            out.append(Aggregate(function, argument))
        }
        return out
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}

/// Aggregates over a selection, overall (one row, `ticker` nil) or one row per ticker with matches.
public struct AggregateResult: Sendable, Equatable {
    /// One output row.
    public struct Row: Sendable, Equatable {
        /// The ticker symbol when grouped by ticker.
        public var ticker: String?
        /// One value per aggregate; nil where it has no value (sum, min, max or mean of no values).
        public var values: [Double?]
    }

    /// The aggregates, in order.
    public var aggregates: [Aggregate]
    /// The rows.
    public var rows: [Row]
}

/// Partial state of one aggregate over some rows.
struct Accumulator: Sendable {
    var count = 0
    var sum = 0.0
    var min = Double.nan
    var max = Double.nan

    mutating func add(_ x: Double) {
        count += 1
        sum += x
        if !x.isNaN {
            if !(x >= min) { min = x }  // also true while min is NaN
            if !(x <= max) { max = x }
        }
    }

    mutating func merge(_ o: Accumulator) {
        count += o.count
        sum += o.sum
        if !o.min.isNaN && !(o.min >= min) { min = o.min }
        if !o.max.isNaN && !(o.max <= max) { max = o.max }
    }
}

extension Selection {
    /// Computes aggregates over the matching rows, overall or per ticker.
    ///
    /// Nulls are skipped (`count(*)` counts rows, `count(close)` non-null values); min and max also
    /// skip NaN, while a NaN value makes sum and mean NaN.
    ///
    /// Floating-point sums reassociate: each `QueryOptions.chunkRows`-row chunk is summed left to
    /// right, then the chunk sums are added in chunk order, starting from 0 (per ticker: its rows
    /// left to right).
    /// So the result does not depend on the thread count, but may differ in the last bits from a
    /// single left-to-right sum.
    ///
    /// - Throws: `QueryError` for an unknown column.
    public func aggregate(_ aggregates: [Aggregate], byTicker: Bool = false,
                          options: QueryOptions = QueryOptions()) throws(QueryError) -> AggregateResult {
        var columnOf = [Int?]()
        for a in aggregates {
            guard let name = a.column else { columnOf.append(nil); continue }
            guard let i = table.columnIndex(named: name) else {
                throw QueryError("unknown column '\(name)' in \(a)", kind: .unknownColumn,
                                 suggestions: Suggestions.closest(to: name, among: table.schema.map(\.identifier)))
            }
            columnOf.append(i)
        }
        // The distinct columns to accumulate.
        let used = Array(Set(columnOf.compactMap { $0 })).sorted()
        let threads = options.effectiveThreads

        func finish(_ rowsMatched: Int, _ acc: [Int: Accumulator], ticker: String?) -> AggregateResult.Row {
            let values: [Double?] = zip(aggregates, columnOf).map { a, c in
                guard let c else { return Double(rowsMatched) }
                let s = acc[c] ?? Accumulator()
                switch a.function {
                case .count: return Double(s.count)
                case .sum: return s.count == 0 ? nil : s.sum
                case .min: return s.min.isNaN ? nil : s.min
                case .max: return s.max.isNaN ? nil : s.max
                case .mean: return s.count == 0 ? nil : s.sum / Double(s.count)
                }
            }
            return AggregateResult.Row(ticker: ticker, values: values)
        }

        if !byTicker {
            let chunkRows = options.rowsPerChunk
            let chunks = (table.rowCount + chunkRows - 1) / chunkRows
            options.counters?.addRun(chunks: chunks, threads: threads)
            var partials = [[Accumulator]](repeating: [], count: chunks)
            partials.withUnsafeMutableBufferPointer { p in
                let shared = SharedPointer(base: p.baseAddress!)
                forEachChunk(chunks, threads: threads) { chunk, _ in
                    let start = chunk * chunkRows
                    let range = start ..< min(start + chunkRows, table.rowCount)
                    shared.base[chunk] = used.map { accumulate(column: $0, rows: range) }
                }
            }
            var total = [Int: Accumulator]()
            for part in partials { for (i, c) in used.enumerated() { total[c, default: Accumulator()].merge(part[i]) } }
            return AggregateResult(aggregates: aggregates, rows: [finish(count, total, ticker: nil)])
        }

        let groups = countsByTicker()
        options.counters?.addRun(chunks: groups.count, threads: threads)
        var rows = [AggregateResult.Row?](repeating: nil, count: groups.count)
        rows.withUnsafeMutableBufferPointer { p in
            let shared = SharedPointer(base: p.baseAddress!)
            forEachChunk(groups.count, threads: threads) { g, _ in
                let t = table.tickers[Int(groups[g].code)]
                var acc = [Int: Accumulator]()
                for c in used { acc[c] = accumulate(column: c, rows: t.rows) }
                shared.base[g] = finish(groups[g].count, acc, ticker: t.symbol)
            }
        }
        return AggregateResult(aggregates: aggregates, rows: rows.compactMap { $0 })
    }

    /// Accumulates column `index` over the matching rows in `range`, left to right.
    private func accumulate(column index: Int, rows range: Range<Int>) -> Accumulator {
        switch table.columns[index] {
        case .float64(let c): accumulate(c, range)
        case .float32(let c): accumulate(c, range)
        case .int64(let c): accumulate(c, range)
        case .int32(let c): accumulate(c, range)
        }
    }

    private func accumulate<T: ColumnElement>(_ column: Column<T>, _ range: Range<Int>) -> Accumulator {
        var acc = Accumulator()
        column.withUnsafeBufferPointer { values in
            if let validity = column.validity {
                mask.forEachSetRow(in: range) { row in
                    if validity[row] { acc.add(values[row].doubleValue) }
                    return true
                }
            } else {
                mask.forEachSetRow(in: range) { row in
                    acc.add(values[row].doubleValue)
                    return true
                }
            }
        }
        return acc
    }
}
