import Foundation
import Colonnade

/// The seed tutorials' row object: one struct of 13 fields per quote.
struct SeedQuote {
    var ticker: Int32
    var date: Int32
    var open, high, low, close, volume, exDividend, splitRatio: Double
    var adjOpen, adjHigh, adjLow, adjClose, adjVolume: Double
}

/// The seed tutorials' filter: optional (min, max) per attribute, a `[Bool]` of conditions built
/// per row and reduced with `&&`. It allocates per row and copies every matching struct, so it
/// measures the allocator more than the scan: see `plainLoop` for the fair row-oriented baseline.
@inline(never)
func seedFilter(
    _ quotes: [SeedQuote], high: (Double, Double)? = nil, low: (Double, Double)? = nil,
    adjHigh: (Double, Double)? = nil, adjLow: (Double, Double)? = nil, close: (Double, Double)? = nil,
    volume: (Double, Double)? = nil, dates: (Int32, Int32)? = nil, tickers: Set<Int32>? = nil
) -> [SeedQuote] {
    quotes.filter { q in
        var conditions = [Bool]()
        if let (mn, mx) = high { conditions.append(q.high > mn && q.high < mx) }
        if let (mn, mx) = low { conditions.append(q.low > mn && q.low < mx) }
        if let (mn, mx) = adjHigh { conditions.append(q.adjHigh > mn && q.adjHigh < mx) }
        if let (mn, mx) = adjLow { conditions.append(q.adjLow > mn && q.adjLow < mx) }
        if let (mn, mx) = close { conditions.append(q.close > mn && q.close < mx) }
        if let (mn, mx) = volume { conditions.append(q.volume > mn && q.volume < mx) }
        if let (mn, mx) = dates { conditions.append(q.date >= mn && q.date <= mx) }
        if let tickers { conditions.append(tickers.contains(q.ticker)) }
        return conditions.reduce(true) { $0 && $1 }
    }
}

struct ScanSuite {
    let table: QuoteTable
    let threads: Int
    let recorder: Recorder
    let label: String

    static let q3Tickers = ["AAPL", "MSFT", "AMZN", "GOOG", "FB", "FDX", "KO", "ORCL", "IBM", "INTC"]
    static let queries: [(String, String, Int)] = [
        ("Q1", "80 < high < 83", 1),
        ("Q2", "80 < high < 83 and 78 < low < 82 and 75 < adj_high < 85 and 70 < adj_low < 75", 4),
        (
            "Q3",
            "ticker in (\(q3Tickers.joined(separator: ", "))) and 2005-01-01 <= date <= 2014-05-10 and volume > 1000000 and 20 < close < 200",
            2
        ),
        ("Q4", "(close < 20 or close > 500) and not volume < 500000", 2),
    ]

    func run() throws {
        let rows = Double(table.rowCount)
        let runs = table.rowCount > 5_000_000 ? 9 : 15

        // The memory roof: a plain read of one Float64 column's bytes.
        guard case .float64(let high) = table.column(named: "high")! else { return }
        for t in Set([1, threads]).sorted() {
            let r = measure(runs: runs) { sink(Self.readAll(high, threads: t)) }
            recorder.record(
                Measurement(
                    suite: "scan", name: "memory roof: read 1 Float64 column \(label) t=\(t)",
                    seconds: r.median, spread: r.spread, runs: runs, items: rows, unit: "rows",
                    bytes: rows * 8, note: "plain sum of the column's words"))
        }

        // The kernel alone, no planning or blocks: what the query adds on top of it.
        do {
            var words = [UInt64](repeating: 0, count: Bitmask.wordCount(forBits: high.count))
            let r = measure(runs: runs) {
                high.withUnsafeBufferPointer { v in
                    words.withUnsafeMutableBufferPointer { RangeKernels.evaluate(.open(80, 83), values: v, into: $0, mode: .store) }
                }
                sink(Int(words[words.count / 2]))
            }
            recorder.record(
                Measurement(
                    suite: "scan", name: "kernel only: 80 < Double < 83 \(label) t=1",
                    seconds: r.median, spread: r.spread, runs: runs, items: rows, unit: "rows",
                    bytes: rows * 8, note: "RangeKernels.evaluate over the whole column"))
        }

        for (name, text, columns) in Self.queries {
            let predicate = try QueryParser(table: table).parse(text)
            for t in Set([1, threads]).sorted() {
                for summaries in [false, true] {
                    let options = QueryOptions(threads: t, useBlockSummaries: summaries)
                    var matched = 0
                    let r = try measure(runs: runs) {
                        let s = try table.select(predicate, options: options)
                        matched = s.count
                        sink(s.count)
                    }
                    recorder.record(
                        Measurement(
                            suite: "scan", name: "\(name) \(label) t=\(t) zonemaps=\(summaries ? "on" : "off")",
                            seconds: r.median, spread: r.spread, runs: runs, items: rows, unit: "rows",
                            bytes: rows * 8 * Double(columns), note: "matched \(matched)"))
                }
            }
        }
        try seedBaseline()
        try plainLoopBaseline()
        try selectivitySweep()
    }

    /// The seed-style baseline on a slice (it allocates per row, so the whole table would take minutes).
    func seedBaseline() throws {
        let runs = 9
        let n = min(table.rowCount, 2_000_000)
        let cols = SeedColumns(table)
        var quotes = [SeedQuote]()
        quotes.reserveCapacity(n)
        for r in 0 ..< n { quotes.append(cols.quote(r)) }
        let codes = Set(Self.q3Tickers.compactMap { table.tickerNumber(of: $0) })
        let from = Day(2005, 1, 1).daysSinceEpoch, to = Day(2014, 5, 10).daysSinceEpoch
        let cases: [(String, () -> Int)] = [
            ("Q1", { seedFilter(quotes, high: (80, 83)).count }),
            ("Q2", { seedFilter(quotes, high: (80, 83), low: (78, 82), adjHigh: (75, 85), adjLow: (70, 75)).count }),
            ("Q3", { seedFilter(quotes, close: (20, 200), volume: (1_000_000, .infinity), dates: (from, to), tickers: codes).count }),
        ]
        for (name, body) in cases {
            var matched = 0
            let r = measure(runs: runs) {
                matched = body()
                sink(matched)
            }
            recorder.record(
                Measurement(
                    suite: "scan", name: "\(name) seed-style: structs + [Bool] per row, allocator-bound \(n / 1000)k rows t=1",
                    seconds: r.median, spread: r.spread, runs: runs, items: Double(n), unit: "rows",
                    bytes: 0, note: "matched \(matched) of the first \(n) rows"))
        }
        recorder.record(
            Measurement(
                suite: "scan", name: "Q4 seed-style: structs + [Bool] per row, allocator-bound", seconds: .infinity,
                spread: 0, runs: 0, items: 0, unit: "rows", bytes: 0, note: "not expressible: the seed filter has no or/not"))
    }

    /// The fair row-oriented baseline: the loop a competent engineer writes over an array of the
    /// same structs, `for q in quotes where q.high > 80 && q.high < 83 { n += 1 }`, on the whole
    /// table. Its counts must equal the engine's (the generated data has no nulls or NaN).
    func plainLoopBaseline() throws {
        let runs = max(9, table.rowCount > 5_000_000 ? 9 : 15)
        let cols = SeedColumns(table)
        let start = Date()
        let quotes = (0 ..< table.rowCount).map { cols.quote($0) }
        print(
            String(
                format: "built %d seed structs (%.0f MB) in %.1f s (setup, not timed)", quotes.count,
                Double(quotes.count * MemoryLayout<SeedQuote>.stride) / 1e6, Date().timeIntervalSince(start)))
        var wanted = [Bool](repeating: false, count: table.tickers.count)
        for s in Self.q3Tickers { if let c = table.tickerNumber(of: s) { wanted[Int(c)] = true } }
        let from = Day(2005, 1, 1).daysSinceEpoch, to = Day(2014, 5, 10).daysSinceEpoch
        let cases: [(String, ([SeedQuote]) -> Int)] = [
            (
                "Q1",
                { quotes in
                    var n = 0
                    for q in quotes where q.high > 80 && q.high < 83 { n += 1 }
                    return n
                }
            ),
            (
                "Q2",
                { quotes in
                    var n = 0
                    for q in quotes
                    where q.high > 80 && q.high < 83 && q.low > 78 && q.low < 82
                        && q.adjHigh > 75 && q.adjHigh < 85 && q.adjLow > 70 && q.adjLow < 75
                    { n += 1 }
                    return n
                }
            ),
            (
                "Q3",
                { quotes in
                    var n = 0
                    for q in quotes
                    where q.date >= from && q.date <= to && q.volume > 1_000_000 && q.close > 20 && q.close < 200
                        && wanted[Int(q.ticker)]
                    { n += 1 }
                    return n
                }
            ),
            (
                "Q4",
                { quotes in
                    var n = 0
                    for q in quotes where (q.close < 20 || q.close > 500) && q.volume >= 500_000 { n += 1 }
                    return n
                }
            ),
        ]
        let rows = Double(table.rowCount)
        for (name, body) in cases {
            guard let text = Self.queries.first(where: { $0.0 == name })?.1 else { continue }
            let engine = try table.select(QueryParser(table: table).parse(text), options: QueryOptions(threads: 1)).count
            var matched = 0
            let r = measure(runs: runs) {
                matched = body(quotes)
                sink(matched)
            }
            precondition(matched == engine, "the plain loop found \(matched) rows for \(name), the engine \(engine)")
            recorder.record(
                Measurement(
                    suite: "scan", name: "\(name) plain loop over structs \(label) t=1",
                    seconds: r.median, spread: r.spread, runs: runs, items: rows, unit: "rows",
                    bytes: rows * Double(MemoryLayout<SeedQuote>.stride),
                    note: "matched \(matched) (as the engine); reads \(MemoryLayout<SeedQuote>.stride)-byte structs"))
        }
    }

    /// `high < q` for quantiles that keep 1/1000, 1/50, 1/2 and all rows.
    func selectivitySweep() throws {
        guard case .float64(let high) = table.column(named: "high")! else { return }
        var sample = [Double]()
        let step = max(1, table.rowCount / 200_000)
        for r in stride(from: 0, to: table.rowCount, by: step) { sample.append(high[r]) }
        sample.sort()
        let rows = Double(table.rowCount)
        let runs = table.rowCount > 5_000_000 ? 9 : 15
        for (label, fraction) in [("1/1000", 0.001), ("1/50", 0.02), ("1/2", 0.5), ("all", 1.0)] {
            let bound = fraction >= 1 ? Double.infinity : sample[Int(Double(sample.count) * fraction)]
            let predicate = RowPredicate.range(column: "high", bounds: .less(than: bound))
            for summaries in [false, true] {
                var matched = 0
                let r = try measure(runs: runs) {
                    let s = try table.select(predicate, options: QueryOptions(threads: 1, useBlockSummaries: summaries))
                    matched = s.count
                    sink(matched)
                }
                recorder.record(
                    Measurement(
                        suite: "scan", name: "range Double \(self.label) (kept \(label)) t=1 zonemaps=\(summaries ? "on" : "off")",
                        seconds: r.median, spread: r.spread, runs: runs, items: rows, unit: "rows",
                        bytes: rows * 8, note: String(format: "matched %.4f%%", Double(matched) / rows * 100)))
            }
        }
    }

    /// Sums a column's words as integers on `threads` threads: the cost of just reading the bytes.
    static func readAll(_ column: Column<Double>, threads: Int) -> UInt64 {
        column.withUnsafeBufferPointer { values in
            let words = UnsafeRawPointer(values.baseAddress!).assumingMemoryBound(to: UInt64.self)
            let n = values.count
            let parts = max(1, threads)
            let totals = UnsafeMutablePointer<UInt64>.allocate(capacity: parts * 8)
            defer { totals.deallocate() }
            let shared = UncheckedBox((words, totals))
            DispatchQueue.concurrentPerform(iterations: parts) { part in
                let (w, out) = shared.value
                let lo = n * part / parts, hi = n * (part + 1) / parts
                var a: UInt64 = 0, b: UInt64 = 0, c: UInt64 = 0, d: UInt64 = 0
                var i = lo
                while i + 4 <= hi {
                    a &+= w[i]
                    b &+= w[i + 1]
                    c &+= w[i + 2]
                    d &+= w[i + 3]
                    i += 4
                }
                while i < hi {
                    a &+= w[i]
                    i += 1
                }
                out[part * 8] = a &+ b &+ c &+ d
            }
            var total: UInt64 = 0
            for p in 0 ..< parts { total &+= totals[p * 8] }
            return total
        }
    }
}

struct UncheckedBox<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// Column access for building seed-style structs.
struct SeedColumns {
    let table: QuoteTable
    let c: [AnyColumn]
    init(_ table: QuoteTable) {
        self.table = table
        c = [
            "open", "high", "low", "close", "volume", "ex_dividend", "split_ratio", "adj_open", "adj_high", "adj_low",
            "adj_close", "adj_volume",
        ].map { table.column(named: $0)! }
    }
    func quote(_ r: Int) -> SeedQuote {
        func v(_ i: Int) -> Double { c[i].doubleValue(at: r) ?? .nan }
        return SeedQuote(
            ticker: table.tickerNumber(ofRow: r), date: table.dates[r], open: v(0), high: v(1), low: v(2), close: v(3),
            volume: v(4), exDividend: v(5), splitRatio: v(6), adjOpen: v(7), adjHigh: v(8), adjLow: v(9),
            adjClose: v(10), adjVolume: v(11))
    }
}
