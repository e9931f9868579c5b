/// What an upsert of several tables into one produces, worked out before any value is copied:
/// the merged schema, the merged ticker index, and the rows of the result as runs of consecutive
/// rows taken from one source table each (`QuoteTable.upsert(contentsOf:)` then copies every
/// column along the runs, once).
///
/// Source 0 is the table being upserted into; sources 1… are the incoming tables in order, a
/// later one winning on equal (ticker, date).
struct UpsertPlan {
    /// One run of the result: `count` rows of source `source` from row `start`.
    struct Run: Sendable {
        var source: Int
        var start: Int
        var count: Int
    }

    /// Runs with each one's first row in the result: which run holds a row, and a range of the
    /// result's rows walked run by run. Shared by the merge (`QuoteTable.gatherSummarized`) and
    /// the reads that do not merge (`StitchPlan`).
    struct RunIndex: Sendable {
        let runs: [Run]
        /// Each run's first row in the result, and the row count last.
        let starts: [Int]

        init(_ runs: [Run]) {
            var starts = [Int](repeating: 0, count: runs.count + 1)
            for (i, run) in runs.enumerated() { starts[i + 1] = starts[i] + run.count }
            self.runs = runs
            self.starts = starts
        }

        /// The result's row count.
        var rowCount: Int { starts[runs.count] }

        /// The run holding the result's row `row` (`0 <= row < rowCount`).
        func run(holding row: Int) -> Int {
            var lo = 0, hi = runs.count  // starts[lo] <= row < starts[hi]
            while hi - lo > 1 {
                let mid = (lo + hi) >> 1
                if starts[mid] <= row { lo = mid } else { hi = mid }
            }
            return lo
        }

        /// Calls `body(source, sourceRow, count, row)` for each piece of the result's rows `rows`
        /// that lies in one run, in order (`row`: the piece's first row in the result).
        @inline(__always)
        func forEachPiece(_ rows: Range<Int>, _ body: (Int, Int, Int, Int) -> Void) {
            guard !rows.isEmpty else { return }
            var i = run(holding: rows.lowerBound), row = rows.lowerBound
            while row < rows.upperBound {
                let run = runs[i], offset = row - starts[i]
                let n = Swift.min(run.count - offset, rows.upperBound - row)
                body(run.source, run.start + offset, n, row)
                row += n
                i += 1
            }
        }
    }

    /// The result's value columns: the target's, then each incoming table's new ones; a column
    /// whose types differ becomes Float64.
    let schema: [ColumnDescriptor]
    /// The result's ticker index: the target's tickers, then new ones by first appearance.
    let tickers: [TickerEntry]
    let numberBySymbol: [String: Int32]
    /// The result's rows, in order.
    let runs: [Run]
    /// The result's row count.
    let rowCount: Int

    /// Plans the upsert of `sources[1...]` into `sources[0]`.
    init(_ sources: [QuoteTable]) {
        schema = UpsertPlan.mergedSchema(sources)
        var tickers = sources[0].tickers
        var numbers = sources[0].numberBySymbol
        let holders = UpsertPlan.holders(sources, tickers: &tickers, numbers: &numbers)
        var runs: [Run] = []
        var planned = 0
        // Each source's dates, read in place by `ascend` (a store's plan asks 30 files about
        // every ticker). Safe: `sources` keeps every column's storage alive while the plan is
        // made, and a storage's base address never moves; the dates are only read.
        let dates = sources.map { source in source.dates.withUnsafeBufferPointer { UnsafePointer($0.baseAddress) } }
        for number in tickers.indices {
            let first = planned
            let held = holders[number]
            if held.count == 1 {
                UpsertPlan.emit(&runs, &planned, held[0].source, held[0].rows.lowerBound, held[0].rows.count)
            } else if held.count > 1 {
                if UpsertPlan.ascend(held, dates) {
                    // Each holder's days all follow the previous one's (an append): its rows are
                    // one run each, with nothing to merge or replace.
                    for part in held { UpsertPlan.emit(&runs, &planned, part.source, part.rows.lowerBound, part.rows.count) }
                } else if held.count == 2 {
                    // An update of a stored ticker: the stored rows before the first incoming day
                    // are one run, and only the rest is merged day by day.
                    UpsertPlan.mergeTwo(held[0], held[1], dates, &runs, &planned)
                } else {
                    // A ticker spread over several sources (the chunks of a file): sorted once.
                    for (source, row) in UpsertPlan.sortByDate(held, sources) { UpsertPlan.emit(&runs, &planned, source, row, 1) }
                }
            }
            tickers[number].firstRow = first
            tickers[number].rowCount = planned - first
        }
        self.tickers = tickers
        self.numberBySymbol = numbers
        self.runs = runs
        self.rowCount = planned
    }

    /// The merged schema. Dictionaries, not searches: a wide input (thousands of columns) stays linear.
    private static func mergedSchema(_ sources: [QuoteTable]) -> [ColumnDescriptor] {
        var merged = sources[0].schema
        var index = [String: Int](minimumCapacity: merged.count)
        for (i, d) in merged.enumerated() { index[d.identifier] = i }
        for other in sources.dropFirst() {
            for d in other.schema {
                if let i = index[d.identifier] {
                    if merged[i].type != d.type { merged[i].type = .float64 }
                } else {
                    index[d.identifier] = merged.count
                    merged.append(d)
                }
            }
        }
        return merged
    }

    /// Per ticker number of the result, which sources hold rows of it, in source order; new
    /// tickers are appended to `tickers` (metadata merged in, the later source winning).
    private static func holders(
        _ sources: [QuoteTable], tickers: inout [TickerEntry],
        numbers: inout [String: Int32]
    ) -> [[(source: Int, rows: Range<Int>)]] {
        var holders = [[(source: Int, rows: Range<Int>)]](repeating: [], count: tickers.count)
        for (number, t) in tickers.enumerated() where t.rowCount > 0 { holders[number].append((0, t.rows)) }
        // Each source ticker's number in the result: looked up by symbol, or taken from the
        // previous source when it lists the same symbols in the same order (a store's day
        // segments mostly do; small symbols compare without hashing).
        var previousNumbers: [Int] = []
        for s in sources.indices.dropFirst() {
            let own = sources[s].tickers, previous = sources[s - 1].tickers
            let sameSymbols =
                s > 1 && own.count == previous.count && own.indices.allSatisfy { own[$0].symbol == previous[$0].symbol }
            var numbersHere = sameSymbols ? previousNumbers : []
            if !sameSymbols {
                numbersHere.reserveCapacity(own.count)
                for t in own {
                    if let c = numbers[t.symbol] {
                        numbersHere.append(Int(c))
                    } else {
                        numbers[t.symbol] = Int32(tickers.count)
                        numbersHere.append(tickers.count)
                        tickers.append(TickerEntry(symbol: t.symbol))
                        holders.append([])
                    }
                }
            }
            for (t, number) in zip(own, numbersHere) {
                if !t.metadata.isEmpty { tickers[number].metadata.merge(t.metadata) { _, new in new } }
                if t.rowCount > 0 { holders[number].append((s, t.rows)) }
            }
            previousNumbers = numbersHere
        }
        return holders
    }

    /// Appends a run, extending the last one when it continues it.
    private static func emit(_ runs: inout [Run], _ planned: inout Int, _ source: Int, _ start: Int, _ count: Int) {
        guard count > 0 else { return }
        planned += count
        if let last = runs.last, last.source == source, last.start + last.count == start {
            runs[runs.count - 1].count += count
        } else {
            runs.append(Run(source: source, start: start, count: count))
        }
    }

    /// Whether each holder's first day comes after the previous holder's last (dates ascend
    /// within a holder): then the merge by date is the holders' rows in order.
    static func ascend(_ held: [(source: Int, rows: Range<Int>)], _ dates: [UnsafePointer<Int32>?]) -> Bool {
        var previousLast: Int32?
        for part in held where !part.rows.isEmpty {
            // Safe: the rows lie within the source (its ticker index covers them), so it has dates.
            let d = dates[part.source].unsafelyUnwrapped
            if let p = previousLast, !(p < d[part.rows.lowerBound]) { return false }
            previousLast = d[part.rows.upperBound - 1]
        }
        return true
    }

    /// One ticker's rows from two sources, `a` then `b`, merged by date into `runs`; on an equal
    /// date `b`'s row wins. `a`'s rows before `b`'s first day are found by a binary search and
    /// emitted as one run; only the rest is merged a row at a time (an update's overlapping day
    /// and the new ones: O(log m) plus the overlap, not O(m), for each ticker of a large table).
    /// - Precondition: dates ascend within each source's rows (the table's invariant).
    static func mergeTwo(
        _ a: (source: Int, rows: Range<Int>), _ b: (source: Int, rows: Range<Int>), _ dates: [UnsafePointer<Int32>?],
        _ runs: inout [Run], _ planned: inout Int
    ) {
        guard !a.rows.isEmpty, !b.rows.isEmpty else {
            emit(&runs, &planned, a.source, a.rows.lowerBound, a.rows.count)
            emit(&runs, &planned, b.source, b.rows.lowerBound, b.rows.count)
            return
        }
        // Safe: both hold rows, which lie within their sources, so both have dates.
        let da = dates[a.source].unsafelyUnwrapped, db = dates[b.source].unsafelyUnwrapped
        let first = db[b.rows.lowerBound]
        var lo = a.rows.lowerBound, hi = a.rows.upperBound  // the first of a's rows dated first or later
        while lo < hi {
            let mid = (lo + hi) >> 1
            if da[mid] < first { lo = mid + 1 } else { hi = mid }
        }
        emit(&runs, &planned, a.source, a.rows.lowerBound, lo - a.rows.lowerBound)
        var i = lo, j = b.rows.lowerBound
        while i < a.rows.upperBound && j < b.rows.upperBound {
            if da[i] < db[j] {
                emit(&runs, &planned, a.source, i, 1)
                i += 1
            } else {
                if da[i] == db[j] { i += 1 }  // the later source replaces the day
                emit(&runs, &planned, b.source, j, 1)
                j += 1
            }
        }
        emit(&runs, &planned, a.source, i, a.rows.upperBound - i)
        emit(&runs, &planned, b.source, j, b.rows.upperBound - j)
    }

    /// Several sources' rows of one ticker merged by date: every row keyed by (date, position in `held`), sorted, and
    /// of equal dates only the last kept.
    private static func sortByDate(_ held: [(source: Int, rows: Range<Int>)], _ sources: [QuoteTable]) -> [(Int, Int)] {
        var keyed: [(date: Int32, holder: Int, row: Int)] = []
        keyed.reserveCapacity(held.reduce(0) { $0 + $1.rows.count })
        for (h, part) in held.enumerated() {
            sources[part.source].dates.withUnsafeBufferPointer { d in
                for row in part.rows { keyed.append((d[row], h, row)) }
            }
        }
        keyed.sort { $0.date < $1.date || ($0.date == $1.date && $0.holder < $1.holder) }
        var out = [(Int, Int)]()
        out.reserveCapacity(keyed.count)
        for (i, k) in keyed.enumerated() where i + 1 == keyed.count || keyed[i + 1].date != k.date {
            out.append((held[k.holder].source, k.row))
        }
        return out
    }
}
