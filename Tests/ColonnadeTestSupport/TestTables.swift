import Colonnade

/// Seeded random tables for differential tests: every element type, nulls, NaN, ±0, ±∞.
public enum TestTables {
    /// Interesting floating-point values mixed into random data.
    public static let specialDoubles: [Double] = [
        .nan, 0.0, -0.0, .infinity, -.infinity, 80, 83, 78, 82, 1e6,
        .leastNonzeroMagnitude, .greatestFiniteMagnitude, -1,
    ]

    /// A table of `tickers` tickers with `rowsPerTicker` rows each (a ticker gets a random count when
    /// `rowsPerTicker` is nil), columns `i32`, `i64`, `f32`, `f64` (and `Adj. F64` with a source name),
    /// with roughly `nullRate` nulls and `specialRate` special values.
    public static func random(
        rows: Int, tickers: Int, seed: UInt64, nullRate: Double = 0.05,
        specialRate: Double = 0.02
    ) -> QuoteTable {
        var rng = SplitMix64(seed: seed)
        let symbols = (0 ..< tickers).map { "T\($0)" }
        // Spread rows over tickers at random, each ticker's dates ascending and unique.
        var rowTickers = [Int32]()
        var dates = Column<Int32>()
        var perTicker = [Int](repeating: 0, count: tickers)
        for _ in 0 ..< rows { perTicker[Int(rng.next() % UInt64(max(tickers, 1)))] += 1 }
        for t in 0 ..< tickers {
            var day = Int32(10_000 + Int(rng.next() % 100))
            for _ in 0 ..< perTicker[t] {
                rowTickers.append(Int32(t))
                dates.append(day)
                day += Int32(1 + rng.next() % 3)
            }
        }
        var i32 = Column<Int32>(), i64 = Column<Int64>(), f32 = Column<Float>(), f64 = Column<Double>(), adj = Column<Double>()
        for _ in 0 ..< rows {
            func isNull() -> Bool { rng.nextUnit() < nullRate }
            func special() -> Double? {
                rng.nextUnit() < specialRate ? specialDoubles[Int(rng.next() % UInt64(specialDoubles.count))] : nil
            }
            let base = 60 + 40 * rng.nextUnit()  // 60…100, so 80 < x < 83 keeps a few percent
            if isNull() { i32.appendNull() } else { i32.append(Int32(base.rounded())) }
            if isNull() { i64.appendNull() } else { i64.append(Int64((base * 1000).rounded())) }
            if isNull() { f32.appendNull() } else { f32.append(Float(special() ?? (base * 100).rounded() / 100)) }
            if isNull() { f64.appendNull() } else { f64.append(special() ?? (base * 100).rounded() / 100) }
            if isNull() { adj.appendNull() } else { adj.append(base * 0.97) }
        }
        let schema = [
            ColumnDescriptor(name: "i32", type: .int32), ColumnDescriptor(name: "i64", type: .int64),
            ColumnDescriptor(name: "f32", type: .float32), ColumnDescriptor(name: "f64", type: .float64),
            ColumnDescriptor(name: "Adj. F64", type: .float64),
        ]
        do {
            var table = try QuoteTable(
                sortingRows: symbols.map { TickerEntry(symbol: $0) }, rowTickers: rowTickers,
                dates: dates, schema: schema,
                columns: [AnyColumn(i32), AnyColumn(i64), AnyColumn(f32), AnyColumn(f64), AnyColumn(adj)])
            table.computeSummaries()
            return table
        } catch {
            preconditionFailure("test table: \(error)")
        }
    }
}
