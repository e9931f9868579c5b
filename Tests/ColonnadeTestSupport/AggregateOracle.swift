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
        /// The bucket as text (`2014`, `2014-03`, `2014-Q2`, `2014-12-29`), nil without a bucket.
        public var bucket: String?
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
            var ticker: Int, year: Int, month: Int, label: String
            static func < (a: Key, b: Key) -> Bool { (a.ticker, a.label) < (b.ticker, b.label) }
        }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let formatter = DateFormatter()
        formatter.calendar = calendar
        formatter.timeZone = calendar.timeZone
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.dateFormat = "yyyy-MM-dd"
        var groups = [Key: [Int]]()
        for r in rows {
            let (y, m, _) = Day(daysSinceEpoch: table.dates[r]).components
            let text = Day(daysSinceEpoch: table.dates[r]).description
            var label = ""
            switch bucket {
            case "year"?: label = String(format: "%04d", y)
            case "month"?: label = String(format: "%04d-%02d", y, m)
            case "quarter"?: label = String(format: "%04d-Q%d", y, (m - 1) / 3 + 1)
            case "date"?: label = text
            case "week"?:
                // Foundation's calendar, not the engine's arithmetic: weekday 1 is Sunday, 2 Monday.
                let date = formatter.date(from: text)!
                let back = (calendar.component(.weekday, from: date) + 5) % 7
                label = formatter.string(from: calendar.date(byAdding: .day, value: -back, to: date)!)
            default: break
            }
            // A week or a date is its own label (a week spans a year end: 2015-01-01 is in 2014-12-29's).
            let calendarYear = bucket == "year" || bucket == "month" || bucket == "quarter"
            let key = Key(
                ticker: byTicker ? tickerOfRow[r] : -1, year: calendarYear ? y : 0, month: bucket == "month" ? m : 0, label: label)
            groups[key, default: []].append(r)
        }
        // Values per aggregate argument: nil is null; of an expression that is not a bare column, NaN is null too.
        func values(_ e: ValueExpression, bare: Bool) -> [Double?] {
            let v = oracle.values(e)
            if case .column = e, bare { return v }
            return v.map { $0.flatMap { $0.isNaN ? nil : $0 } }
        }
        let argumentValues: [[Double?]?] = aggregates.map { a in a.argument.map { values($0, bare: a.function != .corr) } }
        let secondValues: [[Double?]?] = aggregates.map { a in a.second.map { values($0, bare: false) } }
        return groups.keys.sorted().map { key in
            let members = groups[key]!  // ascending rows
            var values = [Double?](), scales = [Double]()
            for ((a, column), second) in zip(zip(aggregates, argumentValues), secondValues) {
                guard let column else {
                    values.append(Double(members.count))
                    scales.append(0)
                    continue
                }
                let known = members.compactMap { r in column[r].map { (r, $0) } }
                let xs = known.map(\.1)
                var sum = 0.0, scale = 0.0
                for x in xs {
                    sum += x
                    scale += Swift.abs(x)
                }
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
                case .median, .quantile:
                    let sorted = finite.sorted()
                    guard !sorted.isEmpty else {
                        values.append(nil)
                        continue
                    }
                    let h = (a.function == .median ? 0.5 : a.parameter!) * Double(sorted.count - 1)
                    let lo = Int(h.rounded(.down)), hi = Swift.min(lo + 1, sorted.count - 1)
                    // At a rank, or between equal neighbours, the value itself (no 0 · ∞).
                    values.append(
                        h == Double(lo) || sorted[lo] == sorted[hi] ? sorted[lo] : sorted[lo] + (h - Double(lo)) * (sorted[hi] - sorted[lo])
                    )
                case .corr:
                    let pairs = members.compactMap { r -> (Double, Double)? in
                        guard let x = column[r], let y = second![r] else { return nil }
                        return (x, y)
                    }
                    // Fewer than two pairs, or a side of equal values (variance 0, a side of one
                    // repeated infinity included): null. Otherwise an infinity makes it NaN.
                    guard pairs.count >= 2, !pairs.allSatisfy({ $0.0 == pairs[0].0 }), !pairs.allSatisfy({ $0.1 == pairs[0].1 }) else {
                        values.append(nil)
                        continue
                    }
                    if pairs.contains(where: { !$0.0.isFinite || !$0.1.isFinite }) {
                        values.append(.nan)
                        continue
                    }
                    let mx = pairs.map(\.0).reduce(0, +) / Double(pairs.count)
                    let my = pairs.map(\.1).reduce(0, +) / Double(pairs.count)
                    var sxx = 0.0, syy = 0.0, sxy = 0.0
                    for (x, y) in pairs {
                        sxx += (x - mx) * (x - mx)
                        syy += (y - my) * (y - my)
                        sxy += (x - mx) * (y - my)
                    }
                    values.append(sxx == 0 || syy == 0 ? nil : sxy / Foundation.sqrt(sxx * syy))
                case .stddev:
                    guard xs.count >= 2 else {
                        values.append(nil)
                        continue
                    }
                    let mean = sum / Double(xs.count)
                    var ss = 0.0
                    for x in xs { ss += (x - mean) * (x - mean) }
                    values.append(Foundation.sqrt(ss / Double(xs.count - 1)))
                }
            }
            return Row(
                ticker: key.ticker >= 0 ? table.tickers[key.ticker].symbol : nil,
                year: bucket == "year" || bucket == "month" || bucket == "quarter" ? key.year : nil,
                month: bucket == "month" ? key.month : nil, bucket: bucket == nil ? nil : key.label,
                values: values, scales: scales)
        }
    }
}
