import Colonnade

extension TestTables {
    /// A seeded table shaped like real quotes, so that zone maps skip and fill as they do on real
    /// data: tickers of different lengths (boundaries fall inside blocks), prices that move smoothly
    /// within a ticker, and
    /// - `high` (Float64), `low` (Float64), `volume` (Int64), `open` (Float32): no nulls, no NaN;
    /// - `close` (Float64): runs of nulls, some covering whole 512-row blocks;
    /// - `adj_close` (Float64): runs of NaN;
    /// - `split` (Int32): 1 almost everywhere, so most blocks have minimum = maximum.
    public static func quoteShaped(tickers: Int, rows: ClosedRange<Int>, seed: UInt64) -> QuoteTable {
        var rng = SplitMix64(seed: seed)
        var rowTickers = [Int32](), dates = Column<Int32>()
        var high = Column<Double>(), low = Column<Double>(), close = Column<Double>(), adj = Column<Double>()
        var volume = Column<Int64>(), open = Column<Float>(), split = Column<Int32>()
        var nullRun = 0, nanRun = 0
        for t in 0 ..< tickers {
            var price = 20 + 180 * rng.nextUnit()
            var shares = Int64(200_000 + rng.below(5_000_000))
            var day = Int32(10_000 + rng.below(50))
            for _ in 0 ..< rng.inRange(rows) {
                price *= 1 + 0.02 * (rng.nextUnit() - 0.5)
                shares = max(1_000, shares + Int64(rng.inRange(-40_000 ... 40_000)))
                let h = (price * 100).rounded() / 100
                rowTickers.append(Int32(t))
                dates.append(day)
                day += Int32(1 + rng.below(2))
                high.append(h)
                low.append(((h * (0.97 + 0.03 * rng.nextUnit())) * 100).rounded() / 100)
                volume.append(shares)
                open.append(Float(h))
                split.append(rng.chance(3_000) ? 2 : 1)
                if nullRun == 0 && rng.chance(400) { nullRun = rng.inRange(1 ... 1_500) }
                if nullRun > 0 {
                    close.appendNull()
                    nullRun -= 1
                } else {
                    close.append(h)
                }
                if nanRun == 0 && rng.chance(700) { nanRun = rng.inRange(1 ... 700) }
                if nanRun > 0 {
                    adj.append(.nan)
                    nanRun -= 1
                } else {
                    adj.append(h * 0.5)
                }
            }
        }
        let schema = [
            ColumnDescriptor(name: "high", type: .float64), ColumnDescriptor(name: "low", type: .float64),
            ColumnDescriptor(name: "close", type: .float64), ColumnDescriptor(name: "adj_close", type: .float64),
            ColumnDescriptor(name: "volume", type: .int64), ColumnDescriptor(name: "open", type: .float32),
            ColumnDescriptor(name: "split", type: .int32),
        ]
        do {
            var table = try QuoteTable(
                sortingRows: (0 ..< tickers).map { TickerEntry(symbol: "Q\($0)") }, rowTickers: rowTickers,
                dates: dates, schema: schema,
                columns: [
                    AnyColumn(high), AnyColumn(low), AnyColumn(close), AnyColumn(adj),
                    AnyColumn(volume), AnyColumn(open), AnyColumn(split),
                ])
            table.computeSummaries()
            return table
        } catch {
            preconditionFailure("quote-shaped test table: \(error)")
        }
    }
}
