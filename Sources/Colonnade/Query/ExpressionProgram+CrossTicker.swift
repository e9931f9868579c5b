import Synchronization

// Evaluation of `CrossTickerExpression` (docs/ARCHITECTURE.md, "Across tickers").
//
// A cross-sectional function needs the rows of one date together, while the table is sorted by
// (ticker, date). It is *materialized*: before a program runs, `prepare` computes its values for
// the rows the answer can read — only the dates those rows (with the windows above the function)
// fall on — and evaluation then reads them like a column. With `--on latest` that is one date:
// every ticker's row on it, found by a binary search per ticker, and the argument evaluated at
// those rows with its own history; with a scan of the whole table, every date, grouped by a
// counting sort of the rows by date. Each date is computed on its own (in parallel over dates),
// its values in ticker order, so the answer never depends on the thread count.
//
// `ref(x, 'SPY')` evaluates `x` once over SPY's rows (found through the ticker index) and aligns
// them to each row by date with a merge (dates ascend within a ticker): no hash join.
//
// Moving variance, covariance, correlation and beta keep the window's means and co-moments by
// Welford's add-and-remove updates, restarted from a two-pass computation of a full window every
// `n` rows at positions fixed relative to the ticker's first full window (as moving sums restart),
// and wherever a window becomes free of nulls; so each value depends on the data alone, not on
// where evaluation began, and stays within a few ulps·n of the two-pass value.

/// The rows a program must be ready to evaluate.
enum RowScope {
    /// Every row of the table.
    case all
    /// These rows (ascending, distinct).
    case rows([Int])
}

/// A compiled node of `CrossTickerExpression`.
enum CrossTickerNode {
    /// Values computed ahead of evaluation (cross-sectional functions, `ref`).
    case materialized(MaterializedValues)
    /// A moving statistic of one or two series (`y` nil for `mvar`).
    case moving(CrossTickerExpression.MovingStatistic, ExpressionProgram.Node, ExpressionProgram.Node?, window: Int)
}

/// The materialized nodes met while compiling one program.
final class CrossTickerCompilation {
    var stores = [MaterializedValues]()
}

extension ExpressionProgram {
    /// Compiles `c`, compiling its operands with `compile` (which returns the node and its lookback).
    static func compileCrossTicker(_ c: CrossTickerExpression, table: QuoteTable, depth: Int, into compilation: CrossTickerCompilation,
                                   _ compile: (ValueExpression, Int) throws(QueryError) -> (Node, Int)) throws(QueryError) -> (Node, Int) {
        switch c {
        case let .crossSection(f, x):
            let argument = try ExpressionProgram(x, table: table)
            let store = MaterializedValues(.crossSection(f), argument: argument, table: table)
            compilation.stores.append(store)
            return (.crossTicker(.materialized(store)), 0)
        case let .reference(x, symbol):
            guard let code = table.code(of: symbol) else {
                throw QueryError("no ticker '\(symbol)' in this table for ref()", kind: .unknownColumn,
                                 suggestions: Suggestions.closest(to: symbol, among: table.tickers.map(\.symbol)))
            }
            let argument = try ExpressionProgram(x, table: table)
            let store = MaterializedValues(.reference(table.tickers[Int(code)].rows), argument: argument, table: table)
            compilation.stores.append(store)
            return (.crossTicker(.materialized(store)), 0)
        case let .moving(f, x, y, w):
            guard w > 0 else { throw QueryError("the window of \(f.rawValue) must be a positive number of rows, not \(w)") }
            if f.isPair && y == nil { throw QueryError("\(f.rawValue) needs two series") }
            let (nx, lx) = try compile(x, depth + 1)
            var ny: Node?, ly = 0
            if f.isPair, let y { (ny, ly) = try compile(y, depth + 1) }
            return (.crossTicker(.moving(f, nx, ny, window: w)), max(lx, ly) + 2 * w - 2)
        }
    }

    /// Sets each materialized node's `lookbackAbove`: the rows of the same ticker before a row
    /// that the root reads through it. Nodes under kinds this walk does not know keep the
    /// program's whole lookback, which is always enough.
    static func assignLookbackAbove(_ root: Node, stores: [MaterializedValues], programLookback: Int) {
        for s in stores { s.lookbackAbove = programLookback }
        func walk(_ node: Node, _ above: Int) {
            switch node {
            case .column, .constant: break
            case .negate(let x), .math(_, let x): walk(x, above)
            case let .chain(first, steps): walk(first, above); for (_, x) in steps { walk(x, above) }
            case let .ordering(a, b): walk(a, above); walk(b, above)
            case let .series(f, x, w): walk(x, above + ownLookback(f, w))
            case let .exactSeries(_, x, w, _): walk(x, above + w - 1)
            case .materialized: break  // its own program, over the whole table
            case .function(_, let xs): for x in xs { walk(x, above) }
            case .isNull(let x): walk(x, above)
            case let .conditional(branches, otherwise):
                // Conditions' nodes keep the program's lookback (always enough).
                for (_, x) in branches { walk(x, above) }
                if let otherwise { walk(otherwise, above) }
            case .crossTicker(.materialized(let s)): s.lookbackAbove = above
            case let .crossTicker(.moving(_, x, y, w)):
                walk(x, above + 2 * w - 2)
                if let y { walk(y, above + 2 * w - 2) }
            }
        }
        walk(root, 0)
    }

    /// Computes the materialized nodes' values for the rows `scope` may read.
    func prepare(_ scope: RowScope, threads: Int = QueryOptions.availableCores) {
        for store in materialized { store.prepare(scope, threads: threads) }
    }

    /// The values of `node` over `range` into `dst` (see `evaluate(_:_:into:_:)`).
    func evaluateCrossTicker(_ node: CrossTickerNode, _ range: Range<Int>, into dst: UnsafeMutablePointer<Double>,
                             _ scratch: ExpressionScratch) {
        switch node {
        case .materialized(let store):
            store.read(range, into: dst)
        case let .moving(f, x, y, w):
            let n = range.count
            let bx = scratch.acquire(n)
            let xs = evaluate(x, range, into: bx, scratch)
            var ys = xs
            if let y {
                let by = scratch.acquire(n)
                ys = evaluate(y, range, into: by, scratch)
            }
            forEachTickerSegment(range) { segment, tickerStart in
                MovingStatistics.run(f, window: w, x: xs, y: ys, dst: dst, base: range.lowerBound, segment: segment, tickerStart: tickerStart)
            }
            if y != nil { scratch.release() }
            scratch.release()
        }
    }
}

extension PlanNode {
    /// Prepares every expression's cross-ticker values for a scan of the whole table.
    func prepareCrossTicker(threads: Int) {
        switch self {
        case .expression(let program, _): program.prepare(.all, threads: threads)
        case .and(let children), .or(let children): for c in children { c.prepareCrossTicker(threads: threads) }
        default: break
        }
    }
}

/// The values of a cross-sectional function or a `ref`, computed ahead of evaluation for the
/// rows a query can read, then read like a column (NaN elsewhere).
final class MaterializedValues: @unchecked Sendable {
    // Safe (@unchecked): the state is behind the mutex; `lookbackAbove` is set once, while the
    // program is compiled, before the program is shared.

    enum Kind {
        case crossSection(CrossTickerExpression.CrossSectionFunction)
        /// The reference ticker's rows.
        case reference(Range<Int>)
    }

    enum State {
        case unprepared
        /// A value per row of the table.
        case dense([Double])
        /// Values of some rows (ascending).
        case sparse(rows: [Int], values: [Double])
        /// The argument over the reference ticker's rows.
        case reference([Double])
    }

    let kind: Kind
    let argument: ExpressionProgram
    let table: QuoteTable
    let tickerStarts: [Int]
    var lookbackAbove = 0
    private let state = Mutex<State>(.unprepared)

    init(_ kind: Kind, argument: ExpressionProgram, table: QuoteTable) {
        self.kind = kind
        self.argument = argument
        self.table = table
        tickerStarts = table.tickers.filter { $0.rowCount > 0 }.map(\.firstRow)
    }

    /// Values for `range` into `dst`; prepares the whole table first if nobody prepared anything.
    func read(_ range: Range<Int>, into dst: UnsafeMutablePointer<Double>) {
        var current = state.withLock { $0 }
        if case .unprepared = current {
            current = state.withLock { s in
                if case .unprepared = s { s = compute(.all, threads: QueryOptions.availableCores) }
                return s
            }
        }
        let n = range.count
        switch current {
        case .unprepared:
            dst.update(repeating: .nan, count: n)
        case .dense(let values):
            values.withUnsafeBufferPointer { v in
                // Safe: the array has a value per row of the table and `range` lies in the table.
                dst.update(from: v.baseAddress! + range.lowerBound, count: n)
            }
        case let .sparse(rows, values):
            dst.update(repeating: .nan, count: n)
            var lo = 0, hi = rows.count
            while lo < hi {
                let mid = (lo + hi) >> 1
                if rows[mid] < range.lowerBound { lo = mid + 1 } else { hi = mid }
            }
            while lo < rows.count && rows[lo] < range.upperBound {
                dst[rows[lo] - range.lowerBound] = values[lo]
                lo += 1
            }
        case .reference(let values):
            guard case .reference(let refRows) = kind else { return }
            alignByDate(range, refRows: refRows, refValues: values, into: dst)
        }
    }

    /// Prepares for `scope` (nothing to do when every row is ready already).
    func prepare(_ scope: RowScope, threads: Int) {
        state.withLock { s in
            switch s {
            case .dense, .reference: return
            default: s = compute(scope, threads: threads)
            }
        }
    }

    private func compute(_ scope: RowScope, threads: Int) -> State {
        switch kind {
        case .reference(let rows):
            argument.prepare(.rows(Array(rows)), threads: threads)
            var values = [Double](repeating: .nan, count: rows.count)
            let scratch = ExpressionScratch()
            values.withUnsafeMutableBufferPointer { v in
                // Safe: `v` holds rows.count values.
                if let base = v.baseAddress { argument.evaluate(rows: rows, into: base, scratch: scratch) }
            }
            return .reference(values)
        case .crossSection(let f):
            switch scope {
            case .all: return computeAll(f, threads: threads)
            case .rows(let rows):
                // The dates the rows' windows above this function reach.
                if rows.count * (lookbackAbove + 1) > table.rowCount / 4 { return computeAll(f, threads: threads) }
                var dates = Set<Int32>()
                table.dates.withUnsafeBufferPointer { d in
                    var t = 0
                    for r in rows {
                        while t + 1 < tickerStarts.count && tickerStarts[t + 1] <= r { t += 1 }
                        let start = tickerStarts.isEmpty ? 0 : tickerStarts[t]
                        for k in Swift.max(start, r - lookbackAbove) ... r { dates.insert(d[k]) }
                    }
                }
                return computeDates(f, dates.sorted(), threads: threads)
            }
        }
    }

    /// Every date: rows grouped by a counting sort on the date (ticker order within a date).
    private func computeAll(_ f: CrossTickerExpression.CrossSectionFunction, threads: Int) -> State {
        let rowCount = table.rowCount
        guard rowCount > 0 else { return .dense([]) }
        argument.prepare(.all, threads: threads)
        var values = [Double](repeating: .nan, count: rowCount)
        let chunkRows = QueryOptions.chunkRows
        let chunks = (rowCount + chunkRows - 1) / chunkRows
        let scratches = (0 ..< max(1, min(threads, chunks))).map { _ in ExpressionScratch() }
        values.withUnsafeMutableBufferPointer { v in
            // Safe: each chunk writes its own rows.
            let shared = SharedPointer(base: v.baseAddress!)
            forEachChunk(chunks, threads: threads) { c, worker in
                let start = c * chunkRows
                let range = start ..< min(start + chunkRows, rowCount)
                argument.evaluate(rows: range, into: shared.base + start, scratch: scratches[worker])
            }
        }
        var result = [Double](repeating: .nan, count: rowCount)
        table.dates.withUnsafeBufferPointer { d in
            var lo = Int32.max, hi = Int32.min
            for r in 0 ..< rowCount { lo = min(lo, d[r]); hi = max(hi, d[r]) }
            let span = Int(Int64(hi) - Int64(lo)) + 1
            var starts = [Int](repeating: 0, count: span + 1)
            for r in 0 ..< rowCount { starts[Int(d[r] - lo) + 1] += 1 }
            for i in 0 ..< span { starts[i + 1] += starts[i] }
            var order = [Int32](repeating: 0, count: rowCount)
            var next = starts
            for r in 0 ..< rowCount {
                let k = Int(d[r] - lo)
                order[next[k]] = Int32(truncatingIfNeeded: r)
                next[k] += 1
            }
            // Dates in pieces of about a chunk's rows, in parallel.
            var pieces = [Range<Int>]()  // ranges of date slots
            var first = 0
            while first < span {
                var last = first + 1
                while last < span && starts[last + 1] - starts[first] <= chunkRows { last += 1 }
                pieces.append(first ..< last)
                first = last
            }
            values.withUnsafeBufferPointer { v in
                result.withUnsafeMutableBufferPointer { out in
                    let shared = SharedPointer(base: out.baseAddress!)
                    order.withUnsafeBufferPointer { o in
                        forEachChunk(pieces.count, threads: threads) { p, _ in
                            var buffer = CrossSectionBuffer()
                            for slot in pieces[p] where starts[slot + 1] > starts[slot] {
                                let members = o[starts[slot] ..< starts[slot + 1]]
                                buffer.compute(f, count: members.count, value: { v[Int(members[members.startIndex + $0])] }) { i, x in
                                    shared.base[Int(members[members.startIndex + i])] = x
                                }
                            }
                        }
                    }
                }
            }
        }
        return .dense(result)
    }

    /// The given dates (ascending): every ticker's row on each, found per ticker by binary search
    /// or a merge, the argument evaluated at those rows only.
    private func computeDates(_ f: CrossTickerExpression.CrossSectionFunction, _ dates: [Int32], threads: Int) -> State {
        guard !dates.isEmpty else { return .sparse(rows: [], values: []) }
        // Per date: positions in `universe` (ascending rows), in ticker order.
        var groups = [[Int32]](repeating: [], count: dates.count)
        var universe = [Int]()
        table.dates.withUnsafeBufferPointer { d in
            for t in table.tickers where t.rowCount > 0 {
                let rows = t.rows
                if dates.count * 16 < rows.count {
                    for (k, day) in dates.enumerated() {
                        var lo = rows.lowerBound, hi = rows.upperBound
                        while lo < hi {
                            let mid = (lo + hi) >> 1
                            if d[mid] < day { lo = mid + 1 } else { hi = mid }
                        }
                        if lo < rows.upperBound && d[lo] == day {
                            groups[k].append(Int32(universe.count))
                            universe.append(lo)
                        }
                    }
                } else {
                    var k = 0
                    for r in rows {
                        while k < dates.count && dates[k] < d[r] { k += 1 }
                        if k == dates.count { break }
                        if dates[k] == d[r] {
                            groups[k].append(Int32(universe.count))
                            universe.append(r)
                        }
                    }
                }
            }
        }
        argument.prepare(.rows(universe), threads: threads)
        // The argument at the universe's rows, in pieces on all cores.
        var values = [Double](repeating: .nan, count: universe.count)
        let pieceCount = max(1, min(threads * 4, universe.count / 256))
        let scratches = (0 ..< max(1, min(threads, pieceCount))).map { _ in ExpressionScratch() }
        values.withUnsafeMutableBufferPointer { v in
            let shared = SharedPointer(base: v.baseAddress!)
            forEachChunk(pieceCount, threads: threads) { p, worker in
                let lo = universe.count * p / pieceCount, hi = universe.count * (p + 1) / pieceCount
                guard lo < hi else { return }
                let piece = argument.evaluateValues(atRows: Array(universe[lo ..< hi]), scratch: scratches[worker])
                for (i, x) in piece.enumerated() { shared.base[lo + i] = x }
            }
        }
        var result = [Double](repeating: .nan, count: universe.count)
        var buffer = CrossSectionBuffer()
        for members in groups where !members.isEmpty {
            buffer.compute(f, count: members.count, value: { values[Int(members[$0])] }) { i, x in result[Int(members[i])] = x }
        }
        return .sparse(rows: universe, values: result)
    }

    /// `ref`: each row of `range` gets the reference row of its date, found by a merge along the
    /// reference ticker's dates (a binary search where a ticker starts over).
    private func alignByDate(_ range: Range<Int>, refRows: Range<Int>, refValues: [Double], into dst: UnsafeMutablePointer<Double>) {
        table.dates.withUnsafeBufferPointer { d in
            var j = refRows.lowerBound
            var previous = Int32.min
            for (i, row) in range.enumerated() {
                let day = d[row]
                if day <= previous {  // a new ticker: search again
                    var lo = refRows.lowerBound, hi = refRows.upperBound
                    while lo < hi {
                        let mid = (lo + hi) >> 1
                        if d[mid] < day { lo = mid + 1 } else { hi = mid }
                    }
                    j = lo
                } else {
                    while j < refRows.upperBound && d[j] < day { j += 1 }
                }
                previous = day
                dst[i] = j < refRows.upperBound && d[j] == day ? refValues[j - refRows.lowerBound] : .nan
            }
        }
    }
}

/// Scratch for one date's cross-sectional values.
struct CrossSectionBuffer {
    private var known = [(value: Double, index: Int)]()

    /// Computes `f` over `count` values (`value(i)`; NaN is null), calling `write(i, result)` for
    /// each. Sums run in index order (ticker order), so the result is fixed by the data.
    mutating func compute(_ f: CrossTickerExpression.CrossSectionFunction, count: Int, value: (Int) -> Double,
                          write: (Int, Double) -> Void) {
        known.removeAll(keepingCapacity: true)
        for i in 0 ..< count {
            let x = value(i)
            if !x.isNaN { known.append((x, i)) }
        }
        let c = known.count
        switch f {
        case .xcount:
            for i in 0 ..< count { write(i, Double(c)) }
        case .xmean:
            var sum = 0.0
            for k in known { sum += k.value }
            let mean = c == 0 ? Double.nan : sum / Double(c)
            for i in 0 ..< count { write(i, mean) }
        case .xz:
            var sum = 0.0
            for k in known { sum += k.value }
            let mean = sum / Double(c)
            var ss = 0.0
            for k in known { ss += (k.value - mean) * (k.value - mean) }
            let sd = c < 2 ? 0 : (ss / Double(c - 1)).squareRoot()
            for i in 0 ..< count { write(i, .nan) }
            if c >= 2 && sd != 0 && !sd.isNaN {
                for k in known { write(k.index, (k.value - mean) / sd) }
            }
        case .xrank, .xpct:
            for i in 0 ..< count { write(i, .nan) }
            known.sort { $0.value < $1.value }
            var rank = 1
            for (position, k) in known.enumerated() {
                if position > 0 && known[position - 1].value != k.value { rank = position + 1 }
                if f == .xrank {
                    write(k.index, Double(rank))
                } else {
                    write(k.index, c == 1 ? 0 : Double(rank - 1) / Double(c - 1))
                }
            }
        }
    }
}

/// Moving variance, covariance, correlation and beta over a ticker's rows.
enum MovingStatistics {
    /// Writes rows `segment` (absolute) of one ticker whose first row is `tickerStart`; `x`, `y`
    /// and `dst` hold rows from `base` on. Rows before a full window, or whose window holds a null,
    /// are NaN; so are rows whose window has not been restarted within the segment (the lookback
    /// rows, which the caller discards).
    static func run(_ f: CrossTickerExpression.MovingStatistic, window n: Int, x: UnsafePointer<Double>, y: UnsafePointer<Double>,
                    dst: UnsafeMutablePointer<Double>, base: Int, segment: Range<Int>, tickerStart: Int) {
        var lastNull = Int.min  // the last row (absolute) in the segment with a null or infinite x or y
        // Means are kept of the values less (kx, ky), the values at the last restart: deviations
        // from a nearby constant, so a level far above the spread (prices near 1e6) loses no digits.
        var mx = 0.0, my = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0, kx = 0.0, ky = 0.0
        let firstFull = tickerStart + n - 1
        let dn = Double(n)
        // Two-pass over the window ending at `row`.
        func exact(_ row: Int) {
            kx = x[row - base]; ky = y[row - base]
            var sx = 0.0, sy = 0.0
            for k in row - n + 1 ... row { sx += x[k - base] - kx; sy += y[k - base] - ky }
            mx = sx / dn; my = sy / dn
            sxx = 0; syy = 0; sxy = 0
            let x0 = x[row - n + 1 - base], y0 = y[row - n + 1 - base]
            var constantX = true, constantY = true
            for k in row - n + 1 ... row {
                let dx = x[k - base] - kx - mx, dy = y[k - base] - ky - my
                sxx += dx * dx; syy += dy * dy; sxy += dx * dy
                constantX = constantX && x[k - base] == x0
                constantY = constantY && y[k - base] == y0
            }
            // A window of equal values has variance 0 exactly (its mean may not be the value).
            if constantX { sxx = 0; sxy = 0 }
            if constantY { syy = 0; sxy = 0 }
        }
        for row in segment {
            let i = row - base
            if !x[i].isFinite || !y[i].isFinite { lastNull = row }  // an infinity makes the window NaN too
            if row < firstFull || n == 1 || lastNull > row - n {
                // Not a full window, a window with a null, or no sample variance (n = 1).
                dst[i] = .nan
                continue
            }
            // Two-pass over the window (O(n) per row). The sliding Welford updates with restarts
            // measured up to 4e-9 relative off the two-pass values at n = 3 on levels 1e4 times the
            // spread (CrossTickerDifferentialTests), past the 1e-9 bound; until that is found, each
            // window is computed whole.
            guard row - n + 1 >= segment.lowerBound else { dst[i] = .nan; continue }
            exact(row)
            // A variance that is zero or lost in rounding is recomputed exactly, so a constant
            // window gives exactly 0 (and mcorr, mbeta null).
            let tiny = 1e-12 * dn
            if sxx <= tiny * (mx * mx + kx * kx) || syy <= tiny * (my * my + ky * ky) { exact(row) }
            let denominator = dn - 1
            switch f {
            case .mvar: dst[i] = Swift.max(sxx, 0) / denominator
            case .mcov: dst[i] = sxy / denominator
            case .mcorr:
                dst[i] = sxx <= 0 || syy <= 0 ? .nan : Swift.max(-1, Swift.min(1, sxy / (sxx.squareRoot() * syy.squareRoot())))
            case .mbeta: dst[i] = syy <= 0 ? .nan : sxy / syy
            }
        }
    }
}
