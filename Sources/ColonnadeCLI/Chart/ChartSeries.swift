import Colonnade

/// One ticker's rows in a chart's date range, as the chart draws them: days ascending, values as
/// optionals (a null or non-finite value is `nil` and leaves a gap), and which rows `--where` marks.
struct ChartSeries {
    /// A line drawn over the prices (`adj_close`, later `mavg(close,50)`).
    struct Overlay {
        /// The expression as typed, for the legend.
        var label: String
        /// One value per row of the series.
        var values: [Double?]
    }

    /// The ticker's symbol.
    var symbol: String
    /// The company name when the source gave one (`Apple Inc. (AAPL)`), else `nil`.
    var name: String?
    /// The rows' days (days since 1970-01-01), ascending.
    var days: [Int32]
    /// The price drawn as the line (normally `close`).
    var close: [Double?]
    /// Open, high and low, when the table has them (for candlesticks).
    var ohlc: (open: [Double?], high: [Double?], low: [Double?])?
    /// Volume, when asked for.
    var volume: [Double?]?
    /// Extra lines.
    var overlays: [Overlay]
    /// Whether each row matches `--where` (all false without it).
    var marked: [Bool]

    var count: Int { days.count }
}

extension ChartSeries {
    /// The rows of `symbol` from `first` to `last` (inclusive, either open) of `table`.
    ///
    /// - Parameters:
    ///   - priceColumn: The column drawn as the line.
    ///   - overlayColumns: Columns drawn as extra lines, with their labels.
    ///   - volume: Whether to take the `volume` column.
    ///   - marks: Rows to mark (a selection over the whole table), or `nil`.
    /// - Returns: `nil` when the table has no such ticker.
    init?(table: QuoteTable, symbol: String, from first: Int32?, to last: Int32?, priceColumn: Int,
          overlayColumns: [(label: String, column: Int)], volumeColumn: Int?, marks: Bitmask?) {
        guard let ticker = table.ticker(symbol) else { return nil }
        let rows = Self.rows(of: ticker, in: table, from: first, to: last)
        self.symbol = ticker.symbol
        self.name = Self.companyName(ticker.metadata["name"], symbol: ticker.symbol)
        days = table.dates.withUnsafeBufferPointer { d in rows.map { d[$0] } }
        func values(_ column: Int) -> [Double?] {
            let c = table.columns[column]
            return rows.map { row in c.doubleValue(at: row).flatMap { $0.isFinite ? $0 : nil } }
        }
        close = values(priceColumn)
        if let o = table.columnIndex(named: "open"), let h = table.columnIndex(named: "high"), let l = table.columnIndex(named: "low") {
            ohlc = (values(o), values(h), values(l))
        } else {
            ohlc = nil
        }
        volume = volumeColumn.map(values)
        overlays = overlayColumns.map { Overlay(label: $0.label, values: values($0.column)) }
        marked = marks.map { mask in rows.map { mask[$0] } } ?? Array(repeating: false, count: rows.count)
    }

    /// The rows of `ticker` with `first <= date <= last`, by binary search (a ticker's rows are
    /// sorted by date).
    static func rows(of ticker: TickerEntry, in table: QuoteTable, from first: Int32?, to last: Int32?) -> Range<Int> {
        table.dates.withUnsafeBufferPointer { d in
            func lowerBound(_ day: Int32, _ range: Range<Int>) -> Int {
                var (lo, hi) = (range.lowerBound, range.upperBound)
                while lo < hi {
                    let mid = lo + (hi - lo) / 2
                    if d[mid] < day { lo = mid + 1 } else { hi = mid }
                }
                return lo
            }
            let all = ticker.rows
            let start = first.map { lowerBound($0, all) } ?? all.lowerBound
            var end = all.upperBound
            if let last {
                end = last == Int32.max ? all.upperBound : lowerBound(last + 1, start ..< all.upperBound)
            }
            return start ..< max(start, end)
        }
    }

    /// The company part of a source's dataset name: `Apple Inc. (AAPL) Prices, Dividends, Splits
    /// and Trading Volume` → `Apple Inc. (AAPL)`; `nil` when empty or just the symbol.
    static func companyName(_ name: String?, symbol: String) -> String? {
        guard var name = name?.trimmingCharacters(in: .whitespaces), !name.isEmpty else { return nil }
        if let cut = name.range(of: " Prices") { name = String(name[..<cut.lowerBound]) }
        return name.isEmpty || name == symbol ? nil : name
    }
}
