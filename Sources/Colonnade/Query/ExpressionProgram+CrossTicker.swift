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
// Moving variance, covariance, correlation and beta slide the window's sums of deviations and
// co-moments in O(1) per row, restarted by a two-pass sum every `n` rows at positions fixed
// relative to the ticker's first full window (as moving sums restart), wherever a window becomes
// free of nulls, and wherever a bound on the slid sums' rounding error passes 1e-10 of the
// variances (`MovingStatistics`); so each value depends on the data alone, not on where
// evaluation began, and stays within 1e-9 · sqrt(var_x · var_y) of the two-pass value.

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
    /// The same of columns with decimal scales, in exact integer sums (`MovingStatistics+Exact.swift`).
    case exactMoving(
        CrossTickerExpression.MovingStatistic, ExpressionProgram.Node, ExpressionProgram.Node?, window: Int,
        scales: (DecimalScale, DecimalScale))
}

/// The materialized nodes met while compiling one program.
final class CrossTickerCompilation {
    var stores = [MaterializedValues]()
}

extension ExpressionProgram {
    /// Compiles `c`, compiling its operands with `compile` (which returns the node and its lookback).
    static func compileCrossTicker(
        _ c: CrossTickerExpression, table: QuoteTable, depth: Int, into compilation: CrossTickerCompilation,
        _ compile: (ValueExpression, Int) throws(QueryError) -> (Node, Int)
    ) throws(QueryError) -> (Node, Int) {
        switch c {
        case let .crossSection(f, x):
            let argument = try ExpressionProgram(x, table: table)
            let store = MaterializedValues(.crossSection(f), argument: argument, table: table)
            compilation.stores.append(store)
            return (.crossTicker(.materialized(store)), 0)
        case let .reference(x, symbol):
            guard let number = table.tickerNumber(of: symbol) else {
                throw QueryError(
                    "no ticker '\(symbol)' in this table for ref()", kind: .unknownColumn,
                    suggestions: Suggestions.closest(to: symbol, among: table.tickers.map(\.symbol)))
            }
            let argument = try ExpressionProgram(x, table: table)
            let store = MaterializedValues(.reference(table.tickers[Int(number)].rows), argument: argument, table: table)
            compilation.stores.append(store)
            return (.crossTicker(.materialized(store)), 0)
        case let .moving(f, x, y, w):
            guard w > 0 else { throw QueryError("the window of \(f.rawValue) must be a positive number of rows, not \(w)") }
            if f.isPair && y == nil { throw QueryError("\(f.rawValue) needs two series") }
            let (nx, lx) = try compile(x, depth + 1)
            var ny: Node?, ly = 0
            if f.isPair, let y { (ny, ly) = try compile(y, depth + 1) }
            // The exact-windows rule: columns with decimal scales sum in integers.
            func scale(_ node: Node?) -> DecimalScale? {
                guard case .column(let i)? = node, case .float64(let c) = table.columns[i] else { return nil }
                return c.decimalScale
            }
            if let sx = scale(nx), let sy = f.isPair ? scale(ny) : sx, MovingStatistics.hasExactKernel(window: w, sx, sy) {
                return (.crossTicker(.exactMoving(f, nx, ny, window: w, scales: (sx, sy))), w - 1)
            }
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
            case let .chain(first, steps):
                walk(first, above)
                for (_, x) in steps { walk(x, above) }
            case let .ordering(a, b):
                walk(a, above)
                walk(b, above)
            case let .series(f, x, w): walk(x, above + ownLookback(f, w))
            case let .exactSeries(_, x, w, _): walk(x, above + w - 1)
            case .materialized: break  // its own program, over the whole table
            case .shared(_, let x): walk(x, above)
            case .function(_, let xs): for x in xs { walk(x, above) }
            case .isNull(let x): walk(x, above)
            case let .conditional(branches, otherwise):
                // Conditions' nodes keep the program's lookback (always enough).
                for (_, x) in branches { walk(x, above) }
                if let otherwise { walk(otherwise, above) }
            case .crossTicker(.materialized(let s)): s.lookbackAbove = above
            case .crossTicker(.exactMoving): break  // columns only
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
    func evaluateCrossTicker(
        _ node: CrossTickerNode, _ range: Range<Int>, into dst: UnsafeMutablePointer<Double>,
        _ scratch: ExpressionScratch
    ) {
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
                MovingStatistics.run(
                    f, window: w, x: xs, y: ys, dst: dst, base: range.lowerBound, segment: segment, tickerStart: tickerStart)
            }
            if y != nil { scratch.release() }
            scratch.release()
        case let .exactMoving(f, x, y, w, scales):
            let n = range.count
            let bx = scratch.acquire(n)
            let xs = evaluate(x, range, into: bx, scratch)
            var ys = xs
            if let y {
                let by = scratch.acquire(n)
                ys = evaluate(y, range, into: by, scratch)
            }
            forEachTickerSegment(range) { segment, _ in
                MovingStatistics.runExact(
                    f, window: w, x: xs, y: ys, scaleX: scales.0, scaleY: scales.1, dst: dst,
                    s: segment.lowerBound - range.lowerBound, e: segment.upperBound - range.lowerBound)
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
        tickerStarts = table.nonEmptyTickerStarts
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
            for r in 0 ..< rowCount {
                lo = min(lo, d[r])
                hi = max(hi, d[r])
            }
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
    mutating func compute(
        _ f: CrossTickerExpression.CrossSectionFunction, count: Int, value: (Int) -> Double,
        write: (Int, Double) -> Void
    ) {
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

/// Moving variance, covariance, correlation and beta over a ticker's rows, O(1) per row.
///
/// The window's sums of deviations, of their squares and of their products slide (add the new
/// row, remove the old), deviations taken from shifts fixed at the last restart (`(x − k) − m`,
/// `k` the row's value and `m` the window's mean then), so a level far above the spread loses no
/// digits. A restart sums the window two-pass. Restarts happen every `n` rows at positions fixed
/// by the ticker's first full window, wherever a window becomes free of nulls and infinities,
/// and wherever a rounding-error bound on the slid sums (kept alongside them: the count of terms
/// summed times the sum of their magnitudes) exceeds `tolerance` of the variances and of their
/// geometric mean for the covariance. So every value lies within `tolerance · sqrt(var_x · var_y)`
/// (`tolerance · var_x` for `mvar`) of the exact two-pass value, each depends on the data alone
/// (not on where evaluation began), and a window of equal values has variance 0 exactly. Cost:
/// O(1) per row and O(n) per restart: one restart per `n` rows, plus one wherever the variance
/// falls by more than about 1e5/n within `2n` rows (counted by `run`'s result).
enum MovingStatistics {
    /// The bound kept on the relative rounding error of slid co-moments (a tenth of the 1e-9 the
    /// results promise, for the rounding of the final division and square roots).
    static let tolerance = 1e-10

    /// Writes rows `segment` (absolute) of one ticker whose first row is `tickerStart`; `x`, `y`
    /// and `dst` hold rows from `base` on (`y` is `x` for `mvar`). Rows before a full window, or
    /// whose window holds a null or an infinity, are NaN; so are rows whose window has not been
    /// restarted within the segment (the lookback rows, which the caller discards).
    /// - Returns: the number of windows summed two-pass (restarts), for tests counting work.
    @discardableResult
    static func run(
        _ f: CrossTickerExpression.MovingStatistic, window n: Int, x: UnsafePointer<Double>, y: UnsafePointer<Double>,
        dst: UnsafeMutablePointer<Double>, base: Int, segment: Range<Int>, tickerStart: Int
    ) -> Int {
        let pair = f.isPair
        var lastNull = Int.min  // the last row (absolute) in the segment with a null or infinite x or y
        var valid = false  // the sums hold the window of the previous row
        // Shifts: a deviation is (x − kx) − mx.
        var kx = 0.0, mx = 0.0, ky = 0.0, my = 0.0
        // Sums of deviations, squares and products; and of their magnitudes (for the error bound).
        var sx = 0.0, sy = 0.0, sxx = 0.0, syy = 0.0, sxy = 0.0
        var ax = 0.0, ay = 0.0, axx = 0.0, ayy = 0.0, axy = 0.0
        var terms = 0  // terms added into each sum since the restart
        var restarts = 0
        let firstFull = tickerStart + n - 1
        let dn = Double(n)
        let eps = Double.ulpOfOne  // twice the unit roundoff: a generous bound

        // Two-pass over the window ending at `row`: new shifts and sums.
        func restart(_ row: Int) {
            restarts += 1
            let first = row - n + 1 - base, last = row - base
            kx = x[last]
            ky = y[last]
            var s1x = 0.0, s1y = 0.0
            for k in first ... last { s1x += x[k] - kx }
            if pair { for k in first ... last { s1y += y[k] - ky } }
            mx = s1x / dn
            my = pair ? s1y / dn : 0
            sx = 0
            sy = 0
            sxx = 0
            syy = 0
            sxy = 0
            ax = 0
            ay = 0
            axx = 0
            ayy = 0
            axy = 0
            for k in first ... last {
                let dx = (x[k] - kx) - mx
                sx += dx
                ax += Swift.abs(dx)
                sxx += dx * dx
            }
            if pair {
                for k in first ... last {
                    let dx = (x[k] - kx) - mx, dy = (y[k] - ky) - my
                    sy += dy
                    ay += Swift.abs(dy)
                    syy += dy * dy
                    let p = dx * dy
                    sxy += p
                    axy += Swift.abs(p)
                }
            }
            axx = sxx
            ayy = syy
            terms = n
        }

        // Whether the slid sums' rounding-error bound is within `tolerance` of the co-moments.
        func withinTolerance() -> Bool {
            let k = Double(terms + 1) * eps
            let ex = k * ax, exx = k * axx
            let m2x = sxx - sx * sx / dn
            let errX = exx + (2 * Swift.abs(sx) * ex + ex * ex) / dn + 3 * eps * (Swift.abs(sxx) + sx * sx / dn)
            guard errX <= tolerance * m2x else { return false }
            guard pair else { return true }
            let ey = k * ay, eyy = k * ayy, exy = k * axy
            let m2y = syy - sy * sy / dn
            let errY = eyy + (2 * Swift.abs(sy) * ey + ey * ey) / dn + 3 * eps * (Swift.abs(syy) + sy * sy / dn)
            guard errY <= tolerance * m2y else { return false }
            let errXY =
                exy + (Swift.abs(sx) * ey + Swift.abs(sy) * ex + ex * ey) / dn + 3 * eps * (Swift.abs(sxy) + Swift.abs(sx * sy) / dn)
            return errXY <= tolerance * (m2x * m2y).squareRoot()
        }

        for row in segment {
            let i = row - base
            if !x[i].isFinite || !y[i].isFinite { lastNull = row }
            if row < firstFull || n == 1 || lastNull > row - n {
                // Not a full window, a window with a null, or no sample variance (n = 1).
                dst[i] = .nan
                valid = false
                continue
            }
            if valid && (row - firstFull) % n != 0 {
                // Slide: the row in, the row n back out.
                let o = i - n
                let nx = (x[i] - kx) - mx, ox = (x[o] - kx) - mx
                sx += nx
                sx -= ox
                ax += Swift.abs(nx) + Swift.abs(ox)
                let nxx = nx * nx, oxx = ox * ox
                sxx += nxx
                sxx -= oxx
                axx += nxx + oxx
                if pair {
                    let ny = (y[i] - ky) - my, oy = (y[o] - ky) - my
                    sy += ny
                    sy -= oy
                    ay += Swift.abs(ny) + Swift.abs(oy)
                    let nyy = ny * ny, oyy = oy * oy
                    syy += nyy
                    syy -= oyy
                    ayy += nyy + oyy
                    let nxy = nx * ny, oxy = ox * oy
                    sxy += nxy
                    sxy -= oxy
                    axy += Swift.abs(nxy) + Swift.abs(oxy)
                }
                terms += 2
                if !withinTolerance() { restart(row) }
            } else {
                // A fixed restart, or the first full window free of nulls.
                guard row - n + 1 >= segment.lowerBound else {
                    dst[i] = .nan
                    continue
                }
                restart(row)
                valid = true
            }
            let m2x = sxx - sx * sx / dn
            let m2y = pair ? syy - sy * sy / dn : m2x
            let cxy = pair ? sxy - sx * sy / dn : m2x
            let denominator = dn - 1
            switch f {
            case .mvar: dst[i] = Swift.max(m2x, 0) / denominator
            case .mcov: dst[i] = cxy / denominator
            case .mcorr:
                dst[i] = m2x <= 0 || m2y <= 0 ? .nan : Swift.max(-1, Swift.min(1, cxy / (m2x.squareRoot() * m2y.squareRoot())))
            case .mbeta: dst[i] = m2y <= 0 ? .nan : cxy / m2y
            }
        }
        return restarts
    }
}
