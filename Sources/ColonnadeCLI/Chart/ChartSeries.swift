import Colonnade

/// One ticker's rows in a chart's date range, as the chart draws them: days ascending, values as
/// optionals (a null or non-finite value is `nil` and leaves a gap), and which rows `--where` marks.
struct ChartSeries {
    /// A line drawn over the prices: a column (`adj_close`) or a series expression
    /// (`mavg(close,50)`), computed with the ticker's history before the chart's first day.
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
    /// The split days among the rows: the row's index in the series and its split ratio.
    var splits: [(index: Int, ratio: Double)] = []

    var count: Int { days.count }
}

extension ChartSeries {
    /// The rows of `symbol` from `first` to `last` (inclusive, either open) of `table`.
    ///
    /// - Parameters:
    ///   - priceColumn: The column drawn as the line.
    ///   - overlays: Expressions drawn as extra lines, with their labels. A series function sees
    ///     the ticker's rows before `first` too, so `mavg(close,50)` has values from the chart's
    ///     first day when 49 earlier rows exist; where it is null (or not finite) the line has a gap.
    ///   - volume: Whether to take the `volume` column.
    ///   - marks: Rows to mark (a selection over the whole table), or `nil`.
    /// - Returns: `nil` when the table has no such ticker.
    /// - Throws: `QueryError` when an overlay cannot be evaluated on `table`.
    ///   - candles: Whether to take open, high and low for candlesticks (a chart of another
    ///     column than `close` is a line: its candles would mix two sets of prices).
    init?(
        table: QuoteTable, symbol: String, from first: Int32?, to last: Int32?, priceColumn: Int,
        overlays overlayExpressions: [(label: String, expression: ValueExpression)], volumeColumn: Int?, marks: Bitmask?,
        candles: Bool = true
    ) throws(QueryError) {
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
        if candles, let o = table.columnIndex(named: "open"), let h = table.columnIndex(named: "high"),
            let l = table.columnIndex(named: "low")
        {
            ohlc = (values(o), values(h), values(l))
        } else {
            ohlc = nil
        }
        volume = volumeColumn.map(values)
        var overlays: [Overlay] = []
        for overlay in overlayExpressions {
            let values = try table.values(of: overlay.expression, atRows: Array(rows)).map { $0.flatMap { $0.isFinite ? $0 : nil } }
            overlays.append(Overlay(label: overlay.label, values: values))
        }
        self.overlays = overlays
        marked = marks.map { mask in rows.map { mask[$0] } } ?? Array(repeating: false, count: rows.count)
        if let s = table.columnIndex(named: "split_ratio") {
            let column = table.columns[s]
            splits = rows.enumerated().compactMap { k, row in
                guard let ratio = column.doubleValue(at: row), ratio.isFinite, ratio > 0, ratio != 1 else { return nil }
                return (k, ratio)
            }
        }
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
