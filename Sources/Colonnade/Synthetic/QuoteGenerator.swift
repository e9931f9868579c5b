/// A seeded generator of realistic daily quotes in WIKI's 13-column shape.
///
///     let table = QuoteGenerator(tickers: 100, days: 2_520, seed: 42).makeTable()
///
/// Per ticker: a start price log-uniform in about 5…800 and a mean-reverting random walk in log
/// price (so prices stay spread over that range for decades), open/high/low/close consistent
/// (low ≤ open, close ≤ high), overnight gaps with fat tails, prices rounded to cents, integral volumes, rare dividends (about one
/// a quarter for a third of tickers) and splits (about one in 4,000 days), and adjusted columns
/// computed backwards from them by WIKI's rule (`AdjustmentRule`, docs/ADJUSTMENTS.md; anchor 1),
/// so `verify --adjustments` passes and `adjust` reproduces them bit for bit. Trading days are weekdays from `start`. The same
/// parameters and seed give the same table, bit for bit, on every machine.
public struct QuoteGenerator: Sendable {
    /// Number of tickers.
    public var tickers: Int
    /// Trading days per ticker.
    public var days: Int
    /// The seed.
    public var seed: UInt64
    /// The first day (days since 1970-01-01); default 2000-01-03.
    public var start: Int32

    /// WIKI's column names, in its order (after `Date`).
    public static let columnNames = [
        "Open", "High", "Low", "Close", "Volume", "Ex-Dividend", "Split Ratio",
        "Adj. Open", "Adj. High", "Adj. Low", "Adj. Close", "Adj. Volume",
    ]

    /// A generator for `tickers` × `days` rows.
    public init(tickers: Int, days: Int, seed: UInt64 = 42, start: Int32 = 10_959 /* 2000-01-03 */) {
        precondition(tickers >= 0 && days >= 0, "negative size")
        self.tickers = tickers
        self.days = days
        self.seed = seed
        self.start = start
    }

    /// The symbol of ticker `index`: well-known symbols first, then generated three- and four-letter ones.
    public static func symbol(_ index: Int) -> String {
        if index < wellKnown.count { return wellKnown[index] }
        var i = index - wellKnown.count
        var letters = [Character]()
        let a = UInt8(ascii: "A")
        for _ in 0 ..< 4 {
            letters.append(Character(Unicode.Scalar(a + UInt8(i % 26))))
            i /= 26
        }
        return "X" + String(letters.reversed())
    }

    static let wellKnown = [
        "AAPL", "MSFT", "AMZN", "GOOG", "FB", "FDX", "KO", "ORCL", "IBM", "INTC", "CSCO", "XOM", "CVX", "JNJ",
        "PG", "WMT", "JPM", "BAC", "C", "WFC", "GS", "MS", "T", "VZ", "PFE", "MRK", "ABT", "PEP", "MCD", "DIS",
        "HD", "LOW", "NKE", "SBUX", "BA", "CAT", "DE", "MMM", "GE", "HON", "UPS", "UNP", "LMT", "RTX", "NOC",
        "GD", "F", "GM", "TSLA", "NFLX", "NVDA", "AMD", "QCOM", "TXN", "ADBE", "CRM", "AVGO", "MU", "HPQ", "DELL",
        "EBAY", "PYPL", "V", "MA", "AXP", "COF", "USB", "PNC", "BK", "SCHW", "BLK", "MET", "PRU", "AIG", "ALL",
        "CVS", "UNH", "CI", "HUM", "MDT", "SYK", "BSX", "ISRG", "AMGN", "GILD", "BIIB", "LLY", "BMY", "ZEN", "BRK.A",
        "COST", "TGT", "KR", "WBA", "CL", "KMB", "GIS", "K", "HSY", "MO",
    ]

    /// The day number of the last of the `days` weekdays from `start` (the first weekday on or
    /// after it), in `Int` so that it can be checked before any date is made: a table holds
    /// dates up to 9999-12-31 only (`Day.storableDayNumbers`).
    /// - Precondition: `days >= 1`.
    public var lastTradingDay: Int {
        var first = Int(start)
        var weekday = ((first + 3) % 7 + 7) % 7  // 1970-01-01 was a Thursday: 0 = Monday
        if weekday >= 5 {
            first += 7 - weekday
            weekday = 0
        }
        let later = weekday + (days - 1)
        return first - weekday + 7 * (later / 5) + later % 5
    }

    /// The dates: `days` weekdays from `start` (the first weekday on or after it).
    /// - Precondition: `lastTradingDay` is within `Day.storableDayNumbers` (else the table could
    ///   not be built; `colonnade generate` checks it first).
    public func tradingDays() -> [Int32] {
        var out = [Int32]()
        out.reserveCapacity(days)
        var d = start
        while out.count < days {
            // 1970-01-01 was a Thursday: weekday index 0 = Monday.
            let weekday = ((Int(d) + 3) % 7 + 7) % 7
            if weekday < 5 { out.append(d) }
            d += 1
        }
        return out
    }

    /// Builds the whole table (with block summaries), labelled synthetic in its metadata.
    public func makeTable() -> QuoteTable { makeTable(progress: nil) }

    /// `makeTable()`, calling `progress` with each ticker's rows once they are made.
    public func makeTable(progress: ((Int) -> Void)?) -> QuoteTable {
        let calendar = tradingDays()
        let rows = tickers * days
        var dates = Column<Int32>(unsafeUninitializedCount: rows) { out in
            for t in 0 ..< tickers { for d in 0 ..< days { out[t * days + d] = calendar[d] } }
        }
        var values = [[Double]](repeating: [Double](repeating: 0, count: rows), count: 12)
        for t in 0 ..< tickers {
            var rng = SplitMix64(seed: seed &+ UInt64(t) &* 0x9E37_79B9_7F4A_7C15)
            Self.fillTicker(&values, offset: t * days, days: days, rng: &rng)
            progress?(days)
        }
        let schema = Self.columnNames.map { ColumnDescriptor(name: $0, type: .float64) }
        let columns = values.map { AnyColumn(Column<Double>($0)) }
        let entries = (0 ..< tickers).map { t -> TickerEntry in
            let s = Self.symbol(t)
            return TickerEntry(
                symbol: s, metadata: ["name": "\(s) Synthetic Corp (\(s)) Prices, Dividends, Splits and Trading Volume"],
                firstRow: t * days, rowCount: days)
        }
        let metadata = [
            "source": "synthetic sample", "generator": "colonnade QuoteGenerator",
            "seed": String(seed), "tickers": String(tickers), "days": String(days),
            "start": Day.format(day: start),
        ]
        dates.computeSummaries()
        do {
            var table = try QuoteTable(
                schema: schema, columns: columns, dates: dates, tickers: entries,
                metadata: metadata, checkDates: false)
            table.computeSummaries()
            return table
        } catch {
            preconditionFailure("generator produced an inconsistent table: \(error)")
        }
    }

    /// Fills one ticker's rows of the 12 value columns.
    private static func fillTicker(_ v: inout [[Double]], offset: Int, days: Int, rng: inout SplitMix64) {
        // Log price mean-reverts towards a per-ticker level spread log-uniformly over 5…800.
        let logLo = _log(5.0), logHi = _log(800.0)
        let level = logLo + (logHi - logLo) * rng.nextUnit()
        var logPrice = level + 0.3 * rng.nextGaussian()
        let volatility = 0.01 + 0.02 * rng.nextUnit()
        let baseVolume = _exp(_log(2e5) + 4 * rng.nextUnit())
        let paysDividends = rng.nextUnit() < 0.35
        var close = 0.0
        for d in 0 ..< days {
            let r = offset + d
            logPrice += 0.002 * (level - logPrice) + volatility * rng.nextGaussian()
            var split = 1.0
            if d > 0 && rng.nextUnit() < 0.00025 && close > 40 {
                split = rng.nextUnit() < 0.7 ? 2 : 3
                logPrice -= _log(split)
            }
            let previousClose = d == 0 ? cents(_exp(logPrice)) : close / split
            close = max(0.01, cents(_exp(logPrice)))
            // The overnight gap: usually a fraction of a percent, with fat tails (about one day
            // in 700 opens 3 % or more above the previous close, as real quotes do), so gap
            // screens find rows. One draw, as before: only opens in the tails moved.
            let g = rng.nextGaussian()
            let gap = 0.004 * g * (1 + 1.5 * max(0, abs(g) - 2))
            let open = max(0.01, cents(previousClose * (1 + gap)))
            let high = cents(max(open, close) * (1 + 0.008 * rng.nextUnit()))
            let low = max(0.01, cents(min(open, close) * (1 - 0.008 * rng.nextUnit())))
            let volume = (baseVolume * _exp(0.4 * rng.nextGaussian())).rounded()
            var dividend = 0.0
            if paysDividends && d % 63 == 17 && rng.nextUnit() < 0.9 {
                dividend = cents(close * (0.002 + 0.006 * rng.nextUnit()))
            }
            v[0][r] = open
            v[1][r] = high
            v[2][r] = low
            v[3][r] = close
            v[4][r] = volume
            v[5][r] = dividend
            v[6][r] = split
        }
        // Backward adjustment by WIKI's rule, with the arithmetic of
        // `QuoteTable.recomputeAdjustments` (docs/ADJUSTMENTS.md): rows before an event day are
        // scaled by its factor close / ((close + dividend) · split), volumes by its split.
        var priceFactor = 1.0, volumeFactor = 1.0
        for d in stride(from: days - 1, through: 0, by: -1) {
            let r = offset + d
            v[7][r] = v[0][r] * priceFactor
            v[8][r] = v[1][r] * priceFactor
            v[9][r] = v[2][r] * priceFactor
            v[10][r] = v[3][r] * priceFactor
            v[11][r] = v[4][r] * volumeFactor
            let dividend = v[5][r], split = v[6][r]
            if dividend != 0 || split != 1,
                let f = AdjustmentRule.eventFactor(close: v[3][r], dividend: dividend, split: split)
            {
                priceFactor *= f
                volumeFactor *= AdjustmentRule.splitRatio(split)
            }
        }
    }

    @inline(__always) private static func cents(_ x: Double) -> Double { (x * 100).rounded() / 100 }
}
