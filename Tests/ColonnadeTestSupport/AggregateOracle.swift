import Colonnade
import Foundation

/// Grouped aggregates row by row, from the documented rules alone (no engine code): rows are
/// bucketed by a plain dictionary, values come from `ExpressionOracle`, sums are left-to-right
/// loops, the standard deviation is two-pass, first and last sort the group's rows by (date, row).
public struct AggregateOracle {
    /// One expected output row.
    public struct Row: Equatable, CustomStringConvertible {
        public var ticker: String?
        public var year: Int?
        public var month: Int?
        public var values: [Double?]
        /// Per value: the sum of absolute values it was computed from (a scale for tolerances).
        public var scales: [Double]

        public var description: String { "\(ticker ?? "-") \(year.map(String.init) ?? "-")-\(month.map(String.init) ?? "-"): \(values)" }
    }

    public var oracle: ExpressionOracle

    public init(table: QuoteTable) { oracle = ExpressionOracle(table: table) }

    /// The expected rows for `aggregates` over `rows` (the matching rows), grouped by ticker and/or
    /// `bucket` ("year", "month" or nil), ordered by ticker symbol order of the table, then bucket.
    public mutating func rows(_ aggregates: [Aggregate], matching rows: [Int], byTicker: Bool, bucket: String?) -> [Row] {
        let table = oracle.table
        var tickerOfRow = [Int](repeating: 0, count: table.rowCount)
        for (code, t) in table.tickers.enumerated() { for r in t.firstRow ..< t.firstRow + t.rowCount { tickerOfRow[r] = code } }
        struct Key: Hashable, Comparable {
            var ticker: Int, year: Int, month: Int
            static func < (a: Key, b: Key) -> Bool { (a.ticker, a.year, a.month) < (b.ticker, b.year, b.month) }
        }
        var groups = [Key: [Int]]()
        for r in rows {
            let (y, m, _) = Day(daysSinceEpoch: table.dates[r]).components
            let key = Key(ticker: byTicker ? tickerOfRow[r] : -1, year: bucket == nil ? 0 : y, month: bucket == "month" ? m : 0)
            groups[key, default: []].append(r)
        }
        // Values per aggregate argument: nil is null; of an expression that is not a bare column, NaN is null too.
        let argumentValues: [[Double?]?] = aggregates.map { a in
            guard let e = a.argument else { return nil }
            let v = oracle.values(e)
            if case .column = e { return v }
            return v.map { $0.flatMap { $0.isNaN ? nil : $0 } }
        }
        return groups.keys.sorted().map { key in
            let members = groups[key]!  // ascending rows
            var values = [Double?](), scales = [Double]()
            for (a, column) in zip(aggregates, argumentValues) {
                guard let column else { values.append(Double(members.count)); scales.append(0); continue }
                let known = members.compactMap { r in column[r].map { (r, $0) } }
                let xs = known.map(\.1)
                var sum = 0.0, scale = 0.0
                for x in xs { sum += x; scale += Swift.abs(x) }
                scales.append(scale)
                let finite = xs.filter { !$0.isNaN }
                switch a.function {
                // count(x) counts the rows where `x is not null`: a NaN is null to it, stored or computed.
                case .count: values.append(Double(finite.count))
                case .sum: values.append(xs.isEmpty ? nil : sum)
                case .mean: values.append(xs.isEmpty ? nil : sum / Double(xs.count))
                case .min: values.append(finite.min())
                case .max: values.append(finite.max())
                case .first, .last:
                    let ordered = known.filter { !$0.1.isNaN }.sorted { (table.dates[$0.0], $0.0) < (table.dates[$1.0], $1.0) }
                    values.append(a.function == .first ? ordered.first?.1 : ordered.last?.1)
                case .stddev:
                    guard xs.count >= 2 else { values.append(nil); continue }
                    let mean = sum / Double(xs.count)
                    var ss = 0.0
                    for x in xs { ss += (x - mean) * (x - mean) }
                    values.append(Foundation.sqrt(ss / Double(xs.count - 1)))
                }
            }
            return Row(ticker: key.ticker >= 0 ? table.tickers[key.ticker].symbol : nil,
                       year: bucket == nil ? nil : key.year, month: bucket == "month" ? key.month : nil,
                       values: values, scales: scales)
        }
    }
}
