/// A `ValueExpression` resolved against one table and evaluated over row ranges into Float64
/// buffers, a vector operation per node (no per-row dispatch).
///
/// Nulls are NaN inside a buffer: every rule of the language maps onto IEEE NaN (arithmetic with
/// NaN is NaN, a window holding one is NaN, a comparison with NaN is false), so one buffer carries
/// value and validity. `x / 0` writes NaN.
///
/// Series functions need earlier rows of the same ticker. Evaluating rows `[s, e)` evaluates
/// `[s - lookback, e)` and returns the tail, so any row range — a 64 K-row chunk, one word of an
/// as-of-a-day screen — gets the same values, and the answer never depends on the thread count.
/// Moving sums restart (re-sum from scratch) at positions fixed relative to each ticker's first
/// full window, every `n` rows, which stops drift and makes each value a function of the data
/// alone, not of where evaluation began.
struct ExpressionProgram: @unchecked Sendable {
    // Safe (@unchecked): columns are immutable values shared read-only.

    indirect enum Node {
        case column(Int)
        case constant(Double)
        case negate(Node)
        /// `first op₁ x₁ op₂ x₂ …` left to right, into one buffer (see `ValueExpression.chain`).
        case chain(Node, [(ValueExpression.Operator, Node)])
        case math(ValueExpression.MathFunction, Node)
        case series(ValueExpression.SeriesFunction, Node, window: Int)
        /// 0 where the two are equal (equal infinities too), else `a - b`: a number whose sign is
        /// the order of `a` and `b`, for comparing two expressions exactly.
        case ordering(Node, Node)
        /// Across tickers (`ExpressionProgram+CrossTicker.swift`).
        case crossTicker(CrossTickerNode)
        /// `msum`, `mavg` or `mdev` of a column with a decimal scale, summed exactly
        /// (`SeriesKernels+Exact.swift`).
        case exactSeries(ValueExpression.SeriesFunction, Node, window: Int, scale: DecimalScale)
        /// A recursive series computed once over every ticker's whole history
        /// (`ExpressionProgram+Recursive.swift`), read in place.
        case materialized(MaterializedSeries)
        /// `greatest`, `least`, `coalesce` (`ExpressionProgram+Conditional.swift`).
        case function(ValueExpression.RowFunction, [Node])
        /// The first branch whose condition is true, else `otherwise` (NaN when none).
        case conditional([(Condition, Node)], otherwise: Node?)
        /// 1 where the value is NaN (null), else 0.
        case isNull(Node)
        /// A window the query names more than once, computed once per chunk (`SharedWindow.swift`).
        case shared(SharedWindow, Node)
    }

    let root: Node
    /// Levels of the tree at most (see `DeepRecursion`: a deep program is evaluated on a deep stack).
    let depth: Int
    /// Rows before a range that evaluation must also read.
    let lookback: Int
    let columns: [AnyColumn]
    /// Per column: its values, when they can be read in place (Float64 with no nulls: NaN already
    /// stands for null), else nil (the values are converted into a buffer).
    private let direct: [UnsafePointer<Double>?]
    /// Per column: where a Float64 column of a deferred merge that was not merged when the
    /// program was made lies unmerged (`ColumnStitch`); its rows are copied from there.
    private let stitches: [ColumnStitch<Double>?]
    /// First row of every non-empty ticker, ascending: where the program's rows are cut into
    /// segments that series functions run over one at a time.
    let tickerStarts: [Int]
    /// Per segment of `tickerStarts`, the row its ticker begins at, which moving sums count their
    /// restart points from: the segment's own start, except in a program over gathered rows
    /// (`ExpressionProgram+Gathered.swift`), whose segments are pieces of tickers and whose origin
    /// lies as far before a piece (perhaps before row 0) as the ticker's first row does in the table.
    let segmentOrigins: [Int]
    let rowCount: Int
    /// Cross-sectional and `ref` nodes of this program (not those inside their own arguments),
    /// computed by `prepare` before evaluation.
    let materialized: [MaterializedValues]

    /// Resolves `expression` against `table`. Recursive series come from `cache` (a query's
    /// programs share one, so each series is computed once); nil: one of the program's own.
    /// - Throws: `QueryError` for an unknown column or a window that is not positive.
    init(_ expression: ValueExpression, table: QuoteTable, cache: SeriesCache? = nil) throws(QueryError) {
        try self.init(expression, nil, table: table, cache: cache ?? SeriesCache())
    }

    /// The order of `left` against `right` (see `Node.ordering`), for `left op right`.
    init(
        ordering left: ValueExpression, against right: ValueExpression, table: QuoteTable,
        cache: SeriesCache? = nil
    ) throws(QueryError) {
        try self.init(left, right, table: table, cache: cache ?? SeriesCache())
    }

    private init(
        _ expression: ValueExpression, _ right: ValueExpression?, table: QuoteTable,
        cache: SeriesCache
    ) throws(QueryError) {
        // Recursion goes as deep as the expression nests (a chain is a loop), which the parser
        // caps; a tree built in Swift is checked here. Deep trees compile on a deep stack.
        depth = Swift.max(expression.treeDepth, right?.treeDepth ?? 0) + (right == nil ? 0 : 1)
        let crossTicker = CrossTickerCompilation()
        var read = Set<Int>()  // the columns the program reads
        func compile(_ e: ValueExpression, depth: Int) throws(QueryError) -> (Node, Int) {
            if depth > QueryParser.maximumTreeDepth { throw QueryParser.nestingError() }
            switch e {
            case .column(let name):
                if ExpressionProgram.isKeyColumn(name, table: table) {
                    throw QueryError("'\(name)' cannot be used in arithmetic or series functions; only value columns can")
                }
                guard let i = table.columnIndex(named: name) else {
                    let candidates = table.schema.map(\.identifier)
                    throw QueryError("unknown column '\(name)'", suggestions: Suggestions.closest(to: name, among: candidates))
                }
                read.insert(i)
                return (.column(i), 0)
            case .number(let v):
                return (.constant(v), 0)
            case .negate(let x):
                let (n, l) = try compile(x, depth: depth + 1)
                return (.negate(n), l)
            case let .chain(first, steps):
                var (head, lookback) = try compile(first, depth: depth + 1)
                var rest = [(ValueExpression.Operator, Node)]()
                rest.reserveCapacity(steps.count)
                for step in steps {
                    let (n, l) = try compile(step.operand, depth: depth + 1)
                    // Leading constants fold (`2 * 3 * close` is `6 * close`); after the first
                    // column every step runs, in order, so the result is the same to the bit.
                    if rest.isEmpty, case .constant(let x) = head, case .constant(let y) = n {
                        head = .constant(ValueExpression.apply(step.op, x, y))
                    } else {
                        rest.append((step.op, n))
                        lookback = max(lookback, l)
                    }
                }
                if rest.isEmpty { return (head, lookback) }
                return (.chain(head, rest), lookback)
            case let .math(f, x):
                let (n, l) = try compile(x, depth: depth + 1)
                if case .constant(let c) = n { return (.constant(ValueExpression.apply(f, c)), 0) }
                return (.math(f, n), l)
            case let .function(f, xs):
                guard !xs.isEmpty else { throw QueryError("\(f.rawValue)() needs at least one argument") }
                var nodes = [Node](), lookback = 0
                for x in xs {
                    let (n, l) = try compile(x, depth: depth + 1)
                    nodes.append(n)
                    lookback = max(lookback, l)
                }
                return (.function(f, nodes), lookback)
            case .nullTest(let x):
                let (n, l) = try compile(x, depth: depth + 1)
                return (.isNull(n), l)
            case let .conditional(branches, otherwise):
                var lookback = 0
                func condition(_ p: RowPredicate, depth: Int) throws(QueryError) -> Condition {
                    if depth > QueryParser.maximumTreeDepth { throw QueryParser.nestingError() }
                    func value(_ e: ValueExpression, _ b: RangeBounds<Double>) throws(QueryError) -> Condition {
                        let (n, l) = try compile(e, depth: depth + 1)
                        lookback = max(lookback, l)
                        return .value(n, b)
                    }
                    switch p {
                    case let .range(c, b): return try value(.column(c), b)
                    case let .integerRange(c, b):
                        return try value(
                            .column(c),
                            RangeBounds(
                                lower: b.lower.map(Double.init), lowerInclusive: b.lowerInclusive,
                                upper: b.upper.map(Double.init), upperInclusive: b.upperInclusive))
                    case let .compare(e, b): return try value(e, b)
                    case let .compareExpressions(l, r, b):
                        let (a, la) = try compile(l, depth: depth + 1)
                        let (c, lc) = try compile(r, depth: depth + 1)
                        lookback = max(lookback, la, lc)
                        return .value(.ordering(a, c), b)
                    case let .dates(b): return .dates(table.dates, b)
                    case let .tickers(symbols):
                        let rows = symbols.compactMap { table.ticker($0) }.filter { $0.rowCount > 0 }
                            .map { $0.firstRow ..< $0.firstRow + $0.rowCount }.sorted { $0.lowerBound < $1.lowerBound }
                        return .rows(rows)
                    case .constant(let v): return .constant(v)
                    case .not(let q): return .not(try condition(q, depth: depth + 1))
                    case .and(let qs):
                        var parts = [Condition]()
                        for q in qs { parts.append(try condition(q, depth: depth + 1)) }
                        return .and(parts)
                    case .or(let qs):
                        var parts = [Condition]()
                        for q in qs { parts.append(try condition(q, depth: depth + 1)) }
                        return .or(parts)
                    }
                }
                var compiled = [(Condition, Node)]()
                for b in branches {
                    let c = try condition(b.condition, depth: depth + 1)
                    let (n, l) = try compile(b.value, depth: depth + 1)
                    lookback = max(lookback, l)
                    compiled.append((c, n))
                }
                var other: Node?
                if let otherwise {
                    let (n, l) = try compile(otherwise, depth: depth + 1)
                    lookback = max(lookback, l)
                    other = n
                }
                return (.conditional(compiled, otherwise: other), lookback)
            case let .series(f, x, w) where f.isRecursive:
                guard w > 0 else { throw QueryError("the window of \(f.rawValue) must be a positive number of rows, not \(w)") }
                return (.materialized(try cache.series(f, x, window: w, table: table)), 0)
            case let .series(f, x, w):
                guard w > 0 else { throw QueryError("the window of \(f.rawValue) must be a positive number of rows, not \(w)") }
                let (n, l) = try compile(x, depth: depth + 1)
                var (node, lookback) = (Node.series(f, n, window: w), l + ExpressionProgram.ownLookback(f, w))
                if cache.exactWindows, let exact = ExpressionProgram.exactSeries(f, n, window: w, table: table) {
                    (node, lookback) = (exact, l + w - 1)
                }
                if let window = cache.sharedWindow(e) { node = .shared(window, node) }
                return (node, lookback)
            case .crossTicker(let c):
                return try ExpressionProgram.compileCrossTicker(c, table: table, depth: depth, into: crossTicker) {
                    e, d throws(QueryError) in
                    try compile(e, depth: d)
                }
            }
        }
        (root, lookback) = try DeepRecursion.run(depth: depth) { () throws(QueryError) -> (Node, Int) in
            guard let right else { return try compile(expression, depth: 0) }
            let (a, la) = try compile(expression, depth: 1)
            let (b, lb) = try compile(right, depth: 1)
            if case .constant(let x) = a, case .constant(let y) = b { return (.constant(x == y ? 0 : x - y), 0) }
            return (.ordering(a, b), max(la, lb))
        }
        columns = table.columns
        // A Float64 column still to be merged (a store's version with segments) is read where
        // its rows lie (`stitches`). Any other column still to be merged is merged here when the
        // program reads it, before any parallel loop evaluates it; the others stay pending (a
        // program over two columns must not merge all of them).
        stitches = table.columns.map { column in
            guard case .float64(let c) = column else { return nil }
            return c.unmergedStitch
        }
        for i in read where stitches[i] == nil { table.columns[i].resolvePendingValues() }
        direct = table.columns.map { column in
            guard case .float64(let c) = column, !c.isPending, c.validity == nil else { return nil }
            // Safe: the storage is a class instance that `columns` keeps alive, and its base
            // address never moves; the program only reads it.
            return c.withUnsafeBufferPointer { $0.baseAddress }
        }
        tickerStarts = table.nonEmptyTickerStarts
        segmentOrigins = tickerStarts
        rowCount = table.rowCount
        materialized = crossTicker.stores
        ExpressionProgram.assignLookbackAbove(root, stores: materialized, programLookback: lookback)
        ExpressionProgram.extendSharedReach(root, programLookback: lookback)
        cache.noteReach(lookback)
    }

    /// `program` over other rows: the rows `tickerStarts` and `segmentOrigins` cut into segments,
    /// whose column `i`'s values are at `direct[i]` (NaN for null) for every column it reads.
    init(
        _ program: ExpressionProgram, readingGathered direct: [UnsafePointer<Double>?], tickerStarts: [Int],
        segmentOrigins: [Int], rowCount: Int
    ) {
        root = program.root
        depth = program.depth
        lookback = program.lookback
        columns = program.columns
        self.direct = direct
        stitches = program.stitches.map { _ in nil }
        self.tickerStarts = tickerStarts
        self.segmentOrigins = segmentOrigins
        self.rowCount = rowCount
        materialized = program.materialized
    }

    /// A row-local program (`rowLocalColumns` not nil) over other columns of `rowCount` rows, in the same
    /// order as the program's (a deferred merge's source table: `Evaluator+Stitched.swift`).
    init(_ program: ExpressionProgram, readingColumns columns: [AnyColumn], rowCount: Int) {
        precondition(program.rowLocalColumns != nil, "only a row-local program reads other rows")
        root = program.root
        depth = program.depth
        lookback = program.lookback
        self.columns = columns
        stitches = columns.map { _ in nil }
        direct = columns.map { column in
            guard case .float64(let c) = column, !c.isPending, c.validity == nil else { return nil }
            // Safe: as in the main initializer.
            return c.withUnsafeBufferPointer { $0.baseAddress }
        }
        tickerStarts = rowCount > 0 ? [0] : []
        segmentOrigins = tickerStarts
        self.rowCount = rowCount
        materialized = program.materialized
    }

    /// The columns a row-local program reads, or nil when the program is not row-local: when a
    /// row's value depends on more than that row's columns (series, anything across tickers, a
    /// condition on dates or tickers). A row-local program gives every row the same value over
    /// any table holding the row, so it can be evaluated over a deferred merge's sources.
    var rowLocalColumns: Set<Int>? {
        guard lookback == 0, materialized.isEmpty, depth <= DeepRecursion.inlineDepth else { return nil }
        var read = Set<Int>()
        func collect(_ node: Node) -> Bool {
            switch node {
            case .column(let i):
                read.insert(i)
                return true
            case .constant: return true
            case .negate(let x), .math(_, let x), .isNull(let x): return collect(x)
            case let .chain(first, steps): return collect(first) && steps.allSatisfy { collect($0.1) }
            case let .ordering(a, b): return collect(a) && collect(b)
            case let .function(_, xs): return xs.allSatisfy(collect)
            case .series, .crossTicker, .exactSeries, .materialized, .conditional, .shared: return false
            }
        }
        return collect(root) ? read : nil
    }

    /// The values of column `i` when they can be read in place (Float64 without nulls), else nil.
    func directValues(ofColumn i: Int) -> UnsafePointer<Double>? { direct[i] }

    /// Where column `i` lies unmerged, when it is a deferred merge's Float64 column that was not
    /// merged when the program was made.
    func stitch(ofColumn i: Int) -> ColumnStitch<Double>? { stitches[i] }

    /// The values of the column the program is, when it is one that can be read in place.
    var directValues: UnsafePointer<Double>? {
        if case .column(let i) = root { return directPointer(i) }
        return nil
    }

    /// Column `index`'s values in place, when it is a Float64 column without nulls (`direct`, or,
    /// for a column that was still to be merged when the program was made, its merged values).
    func directPointer(_ index: Int) -> UnsafePointer<Double>? {
        if let p = direct[index] { return p }
        guard stitches[index] == nil, case .float64(let c) = columns[index], c.pending != nil, c.validity == nil else { return nil }
        // Safe: the merged storage is kept alive by the column's `PendingColumn`, which
        // `columns` keeps alive; the program only reads it.
        return c.withUnsafeBufferPointer { $0.baseAddress }
    }

    /// Whether `name` is the ticker or the date, which are keys, not values.
    static func isKeyColumn(_ name: String, table: QuoteTable) -> Bool {
        name.lowercased() == "ticker" || name.lowercased() == "date" || name == table.dateColumnName
    }

    /// Rows before a row that one series step reads (moving sums and deviations restart every `n`
    /// rows from a full window, so they may reach back `2n - 2`).
    static func ownLookback(_ f: ValueExpression.SeriesFunction, _ n: Int) -> Int {
        switch f {
        case .prev, .change, .pctChange: n
        case .mmin, .mmax: n - 1
        case .mavg, .msum, .mdev: 2 * n - 2
        case .ema, .rma, .rsi, .cumsum, .cummax, .cummin: 0  // materialized over whole tickers
        }
    }

    /// Whether the expression reads no column.
    var constant: Double? {
        if case .constant(let c) = root { return c }
        return nil
    }

    /// Writes the values of rows `rows` to `out` (`rows.count` values; NaN for null).
    func evaluate(rows: Range<Int>, into out: UnsafeMutablePointer<Double>, scratch: ExpressionScratch) {
        guard !rows.isEmpty else { return }
        if lookback == 0 || rows.lowerBound == 0 {
            // Nothing before the rows to evaluate: straight into `out`.
            scratch.rowsEvaluated += rows.count
            let values = DeepRecursion.run(depth: depth) { evaluate(root, rows, into: out, scratch) }
            if values != UnsafePointer(out) { out.update(from: values, count: rows.count) }
            return
        }
        let buffer = scratch.acquire(rows.count + lookback)
        defer { scratch.release() }
        let values = evaluate(rows: rows, buffer: buffer, scratch: scratch)
        out.update(from: values, count: rows.count)
    }

    /// The values of rows `rows` (`rows.count` of them; NaN for null), evaluated in `buffer`, which
    /// holds at least `rows.count + lookback` values; the result points into `buffer` or, for a
    /// bare column, into the column. Valid while `buffer` is and the program lives.
    func evaluate(rows: Range<Int>, buffer: UnsafeMutablePointer<Double>, scratch: ExpressionScratch) -> UnsafePointer<Double> {
        let start = max(0, rows.lowerBound - lookback)
        let extended = start ..< rows.upperBound
        scratch.rowsEvaluated += extended.count
        guard !rows.isEmpty else { return UnsafePointer(buffer) }
        return DeepRecursion.run(depth: depth) { evaluate(root, extended, into: buffer, scratch) } + (rows.lowerBound - start)
    }

    /// The values at `rows` (ascending), evaluated a run of nearby rows at a time (cross-ticker
    /// values prepared for those rows first).
    func values(atRows rows: [Int], scratch: ExpressionScratch) -> [Double] {
        if !materialized.isEmpty { prepare(.rows(rows)) }
        return evaluateValues(atRows: rows, scratch: scratch)
    }

    /// `values(atRows:scratch:)` for a program already prepared for `rows`.
    func evaluateValues(atRows rows: [Int], scratch: ExpressionScratch) -> [Double] {
        var result = [Double](repeating: .nan, count: rows.count)
        // Short runs (an as-of screen's row per ticker with its lookback) are gathered and
        // evaluated together (`ExpressionProgram+Gathered.swift`); long ones in place.
        let gathered = gatheredColumns
        var batch = GatheredRuns(capacity: gathered == nil ? 0 : rows.count)
        result.withUnsafeMutableBufferPointer { r in
            var i = 0
            while i < rows.count {
                // A run: rows whose gaps are small enough that evaluating through them is cheaper
                // than starting again (which costs the lookback).
                var j = i + 1
                let gapLimit = max(64, lookback)
                while j < rows.count && rows[j] - rows[j - 1] <= gapLimit && rows[j] - rows[i] < QueryOptions.chunkRows { j += 1 }
                let range = rows[i] ..< rows[j - 1] + 1
                let extended = max(0, range.lowerBound - lookback) ..< range.upperBound
                if let gathered, extended.count <= ExpressionProgram.gatheredRunLimit {
                    if batch.rowCount + extended.count > QueryOptions.chunkRows {
                        evaluateGathered(batch, columns: gathered, rows: rows, into: r, scratch: scratch)
                        batch.removeAll()
                    }
                    batch.append(extended, members: i ..< j)
                } else {
                    let buffer = scratch.acquire(range.count)
                    evaluate(rows: range, into: buffer, scratch: scratch)
                    for k in i ..< j { r[k] = buffer[rows[k] - range.lowerBound] }
                    scratch.release()
                }
                i = j
            }
            if let gathered, batch.rowCount > 0 { evaluateGathered(batch, columns: gathered, rows: rows, into: r, scratch: scratch) }
        }
        return result
    }

    // MARK: Nodes

    /// The values of `node` over `range`: written to `dst` (`range.count` values), or, for a
    /// column that can be read in place, the column's own values (nothing is copied).
    func evaluate(
        _ node: Node, _ range: Range<Int>, into dst: UnsafeMutablePointer<Double>,
        _ scratch: ExpressionScratch
    ) -> UnsafePointer<Double> {
        let n = range.count
        switch node {
        case .column(let index):
            // Safe: `range` lies within the table, so within the column.
            if let values = directPointer(index) { return values + range.lowerBound }
            if let stitch = stitches[index] {
                stitch.copy(range, into: dst)
            } else {
                ExpressionProgram.load(columns[index], range, into: dst)
            }
        case .constant(let c):
            dst.update(repeating: c, count: n)
        case .negate(let x):
            let v = evaluate(x, range, into: dst, scratch)
            ExpressionProgram.map(v, dst, n) { -$0 }
        case let .math(f, x):
            let v = evaluate(x, range, into: dst, scratch)
            switch f {
            case .abs: ExpressionProgram.map(v, dst, n) { Swift.abs($0) }
            case .sqrt: ExpressionProgram.map(v, dst, n) { $0.squareRoot() }
            case .ln: for i in 0 ..< n { dst[i] = MathFunctions.log(v[i]) }
            case .exp: for i in 0 ..< n { dst[i] = MathFunctions.exp(v[i]) }
            }
        case let .chain(first, steps):
            // Left to right into `dst`, one binary step at a time: `a op b` runs exactly as a
            // two-operand node did, and a longer chain as the nested binary nodes did.
            var value: UnsafePointer<Double>
            var rest = steps[...]
            if case .constant(let c) = first, let step = rest.first {
                ExpressionProgram.combine(step.0, c, evaluate(step.1, range, into: dst, scratch), dst, n)
                value = UnsafePointer(dst)
                rest = rest.dropFirst()
            } else {
                value = evaluate(first, range, into: dst, scratch)
            }
            for (op, b) in rest {
                if case .constant(let c) = b {
                    ExpressionProgram.combine(op, value, c, dst, n)
                } else {
                    let tmp = scratch.acquire(n)
                    defer { scratch.release() }
                    ExpressionProgram.combine(op, value, evaluate(b, range, into: tmp, scratch), dst, n)
                }
                value = UnsafePointer(dst)
            }
            // Only an empty chain (which compilation never makes) leaves the value elsewhere.
            if value != UnsafePointer(dst) { dst.update(from: value, count: n) }
        case let .ordering(a, b):
            let u = evaluate(a, range, into: dst, scratch)
            let tmp = scratch.acquire(n)
            defer { scratch.release() }
            let v = evaluate(b, range, into: tmp, scratch)
            ExpressionProgram.zip(u, v, dst, n) { $0 == $1 ? 0 : $0 - $1 }
        case let .series(f, x, w):
            scratch.windowRows += n
            let buffer = scratch.acquire(n)
            defer { scratch.release() }
            let src = evaluate(x, range, into: buffer, scratch)
            forEachTickerSegment(range) { segment, tickerStart in
                SeriesKernels.run(
                    f, window: w, src: src, dst: dst, base: range.lowerBound,
                    segment: segment, tickerStart: tickerStart, scratch: scratch)
            }
        case .crossTicker(let c):
            evaluateCrossTicker(c, range, into: dst, scratch)
        case .materialized(let series):
            return series.read(range, into: dst, scratch)
        case let .function(f, xs):
            evaluateFunction(f, xs, range, into: dst, scratch)
        case .isNull(let x):
            let v = evaluate(x, range, into: dst, scratch)
            ExpressionProgram.map(v, dst, n) { $0.isNaN ? 1 : 0 }
        case let .conditional(branches, otherwise):
            evaluateConditional(branches, otherwise, range, into: dst, scratch)
        case let .shared(window, x):
            return evaluateShared(window, x, range, into: dst, scratch)
        case let .exactSeries(f, x, w, scale):
            scratch.windowRows += n
            if case .column(let column) = x, SeriesKernels.hasPrefixKernel(f, window: w, scale: scale),
                let prefix = scaledPrefix(column, scale: scale, covering: range, scratch)
            {
                // The column's scaled prefix sums, shared by its windows in the chunk.
                forEachTickerSegment(range) { segment, _ in
                    SeriesKernels.windowsFromPrefix(
                        f, window: w, scale: scale, prefix: prefix, dst: dst,
                        s: segment.lowerBound - range.lowerBound, e: segment.upperBound - range.lowerBound)
                }
                return UnsafePointer(dst)
            }
            let buffer = scratch.acquire(n)
            let ints = scratch.acquire(n)
            defer {
                scratch.release()
                scratch.release()
            }
            let src = evaluate(x, range, into: buffer, scratch)
            ints.withMemoryRebound(to: Int64.self, capacity: n) { ints in
                forEachTickerSegment(range) { segment, _ in
                    SeriesKernels.runExact(
                        f, window: w, scale: scale, src: src, dst: dst,
                        s: segment.lowerBound - range.lowerBound, e: segment.upperBound - range.lowerBound,
                        ints: ints)
                }
            }
        }
        return UnsafePointer(dst)
    }

    /// Calls `body` with each part of `range` that lies in one ticker (one segment), with that
    /// ticker's first row (the segment's origin).
    func forEachTickerSegment(_ range: Range<Int>, _ body: (Range<Int>, Int) -> Void) {
        // The last ticker starting at or before range.lowerBound.
        var lo = 0, hi = tickerStarts.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if tickerStarts[mid] <= range.lowerBound { lo = mid + 1 } else { hi = mid }
        }
        var t = max(0, lo - 1)
        while t < tickerStarts.count && tickerStarts[t] < range.upperBound {
            let end = t + 1 < tickerStarts.count ? tickerStarts[t + 1] : rowCount
            let segment = max(tickerStarts[t], range.lowerBound) ..< min(end, range.upperBound)
            if !segment.isEmpty { body(segment, segmentOrigins[t]) }
            t += 1
        }
    }

    /// Column values of `range` as Double, NaN where null.
    static func load(_ column: AnyColumn, _ range: Range<Int>, into dst: UnsafeMutablePointer<Double>) {
        switch column {
        case .float64(let c): load(c, range, into: dst)
        case .float32(let c): load(c, range, into: dst)
        case .int64(let c): load(c, range, into: dst)
        case .int32(let c): load(c, range, into: dst)
        }
    }

    private static func load<T: ColumnElement>(_ column: Column<T>, _ range: Range<Int>, into dst: UnsafeMutablePointer<Double>) {
        column.withUnsafeBufferPointer { values in
            // Safe: range lies within the column (callers pass rows of the table); an empty
            // column has no rows to load.
            guard let base = values.baseAddress else { return }
            let v = base + range.lowerBound
            let n = range.count
            if T.self == Double.self {
                v.withMemoryRebound(to: Double.self, capacity: n) { dst.update(from: $0, count: n) }
            } else {
                for i in 0 ..< n { dst[i] = v[i].doubleValue }
            }
            guard let validity = column.validity else { return }
            validity.withUnsafeWords { words in
                // Safe: the validity bitmap covers every row.
                guard let w = words.baseAddress else { return }
                for i in 0 ..< n {
                    let row = range.lowerBound + i
                    if (w[row >> 6] >> UInt64(row & 63)) & 1 == 0 { dst[i] = .nan }
                }
            }
        }
    }

    // `dst` may be the same buffer as an operand (each element is read before it is written). The
    // loops below then run on `dst` alone: a loop over two pointers that turn out to be the same
    // buffer fails the vectorizer's overlap check and runs one element at a time (a quarter of
    // the speed: 20 % of I3's time, measured with perf).

    /// `dst[i] = f(a[i])` for `i < n`, vectorizable whether or not `a` is `dst`.
    @inline(__always)
    static func map(
        _ a: UnsafePointer<Double>, _ dst: UnsafeMutablePointer<Double>, _ n: Int, _ f: (Double) -> Double
    ) {
        if a == UnsafePointer(dst) {
            for i in 0 ..< n { dst[i] = f(dst[i]) }
        } else {
            for i in 0 ..< n { dst[i] = f(a[i]) }
        }
    }

    /// `dst[i] = f(a[i], b[i])` for `i < n`, vectorizable whether or not an operand is `dst`.
    @inline(__always)
    static func zip(
        _ a: UnsafePointer<Double>, _ b: UnsafePointer<Double>, _ dst: UnsafeMutablePointer<Double>, _ n: Int,
        _ f: (Double, Double) -> Double
    ) {
        let d = UnsafePointer(dst)
        if a == d && b == d {
            for i in 0 ..< n { dst[i] = f(dst[i], dst[i]) }
        } else if a == d {
            for i in 0 ..< n { dst[i] = f(dst[i], b[i]) }
        } else if b == d {
            for i in 0 ..< n { dst[i] = f(a[i], dst[i]) }
        } else {
            for i in 0 ..< n { dst[i] = f(a[i], b[i]) }
        }
    }

    private static func combine(
        _ op: ValueExpression.Operator, _ a: UnsafePointer<Double>, _ b: UnsafePointer<Double>,
        _ dst: UnsafeMutablePointer<Double>, _ n: Int
    ) {
        switch op {
        case .add: zip(a, b, dst, n) { $0 + $1 }
        case .subtract: zip(a, b, dst, n) { $0 - $1 }
        case .multiply: zip(a, b, dst, n) { $0 * $1 }
        case .divide: zip(a, b, dst, n) { $1 == 0 ? .nan : $0 / $1 }
        }
    }

    private static func combine(
        _ op: ValueExpression.Operator, _ a: UnsafePointer<Double>, _ c: Double,
        _ dst: UnsafeMutablePointer<Double>, _ n: Int
    ) {
        switch op {
        case .add: map(a, dst, n) { $0 + c }
        case .subtract: map(a, dst, n) { $0 - c }
        case .multiply: map(a, dst, n) { $0 * c }
        case .divide:
            if c == 0 { dst.update(repeating: .nan, count: n) } else { map(a, dst, n) { $0 / c } }
        }
    }

    private static func combine(
        _ op: ValueExpression.Operator, _ c: Double, _ b: UnsafePointer<Double>,
        _ dst: UnsafeMutablePointer<Double>, _ n: Int
    ) {
        switch op {
        case .add: map(b, dst, n) { c + $0 }
        case .subtract: map(b, dst, n) { c - $0 }
        case .multiply: map(b, dst, n) { c * $0 }
        case .divide: map(b, dst, n) { $0 == 0 ? .nan : c / $0 }
        }
    }
}

/// Per-worker Float64 buffers for expression evaluation, used as a stack (acquire, release).
final class ExpressionScratch {
    private var buffers: [(pointer: UnsafeMutablePointer<Double>, capacity: Int)] = []
    private var depth = 0
    /// Rows evaluated through `ExpressionProgram.evaluate(rows:into:scratch:)`, lookback included.
    var rowsEvaluated = 0
    /// Rows run through window kernels (`mavg`, `prev`, …; exact ones too), for tests that count
    /// work (a shared window is counted once per chunk).
    var windowRows = 0
    /// The chunk of rows the evaluator is working through (nil outside a chunk): shared windows
    /// are computed to its end (`SharedWindow.swift`).
    var span: Range<Int>?
    /// Shared windows' values by window id: the rows they cover and their buffer.
    private var memos: [Int: (rows: Range<Int>, pointer: UnsafeMutablePointer<Double>, capacity: Int)] = [:]

    /// The values of shared window `id` at `rows`, when they are held.
    func memo(_ id: Int, covering rows: Range<Int>) -> UnsafePointer<Double>? {
        guard let m = memos[id], m.rows.lowerBound <= rows.lowerBound, rows.upperBound <= m.rows.upperBound else { return nil }
        return UnsafePointer(m.pointer) + (rows.lowerBound - m.rows.lowerBound)
    }

    /// A buffer for shared window `id` over `rows` (its previous values are dropped), kept until
    /// the scratch is freed.
    func memoBuffer(_ id: Int, rows: Range<Int>) -> UnsafeMutablePointer<Double> {
        if let m = memos[id], m.capacity >= rows.count {
            memos[id] = (rows, m.pointer, m.capacity)
            return m.pointer
        }
        memos[id]?.pointer.deallocate()
        let p = UnsafeMutablePointer<Double>.allocate(capacity: max(rows.count, 1))
        memos[id] = (rows, p, max(rows.count, 1))
        return p
    }
    /// Scaled prefix sums by column (`ExpressionProgram.scaledPrefix`; a query's windows read a
    /// few columns, so a list): the rows they cover (`pointer[k]` is the sum before row
    /// `rows.lowerBound + k`) and whether none of those rows is null.
    private var scaledPrefixes: [(column: Int, rows: Range<Int>, clean: Bool, pointer: UnsafeMutablePointer<Int64>, capacity: Int)] = []
    /// Rows whose scaled prefix sums were computed (`scaledPrefix`), for tests that count work.
    var scaledPrefixRows = 0

    /// The scaled prefix sums of column `column` from row `rows.lowerBound` (nil when a row they
    /// cover is null): those held when they cover `rows`, else computed over `rows` by `fill`,
    /// which writes `rows.count + 1` sums and says whether no row was null; kept until the
    /// scratch is freed or the column's next ones are computed.
    func scaledPrefix(
        _ column: Int, covering rows: Range<Int>, fill: (UnsafeMutablePointer<Int64>) -> Bool
    ) -> UnsafePointer<Int64>? {
        guard let k = scaledPrefixes.firstIndex(where: { $0.column == column }) else {
            scaledPrefixes.append((column, 0 ..< 0, false, UnsafeMutablePointer<Int64>.allocate(capacity: rows.count + 1), rows.count + 1))
            return scaledPrefix(column, covering: rows, fill: fill)
        }
        let m = scaledPrefixes[k]
        if m.rows.lowerBound <= rows.lowerBound && rows.upperBound <= m.rows.upperBound && !m.rows.isEmpty {
            return m.clean ? UnsafePointer(m.pointer) + (rows.lowerBound - m.rows.lowerBound) : nil
        }
        if m.capacity < rows.count + 1 {
            m.pointer.deallocate()
            scaledPrefixes[k].pointer = .allocate(capacity: rows.count + 1)
            scaledPrefixes[k].capacity = rows.count + 1
        }
        scaledPrefixes[k].rows = 0 ..< 0  // not valid until filled
        scaledPrefixRows += rows.count
        let pointer = scaledPrefixes[k].pointer
        let clean = fill(pointer)
        scaledPrefixes[k].rows = rows
        scaledPrefixes[k].clean = clean
        return clean ? UnsafePointer(pointer) : nil
    }

    private var suffixes: UnsafeMutablePointer<Double>?
    private var suffixCapacity = 0
    /// In an as-of screen, the rows of the ticker being screened from its first to its as-of row:
    /// per-ticker recursive series are computed over them (`MaterializedSeries.read`).
    var tickerPrefix: Range<Int>?
    /// The rows an as-of screen's worker is screening together: its number, each one's ticker
    /// prefix (`tickerPrefix`), and which of them is being screened.
    struct AsOfGroup {
        var number: Int
        var prefixes: [Range<Int>]
        var slot: Int
    }

    var asOfGroup: AsOfGroup?
    /// Per-ticker series' last values for a group, by series id (`MaterializedSeries.readTail`).
    private var tails: [Int: (group: Int, pointer: UnsafeMutablePointer<Double>, capacity: Int)] = [:]
    private var lanes: [(pointer: UnsafeMutablePointer<Double>, capacity: Int)] = []

    /// The tail buffer of series `id` for group `group` (`count` values), filled by `fill` unless
    /// it already holds them.
    func seriesTails(_ id: Int, group: Int, count: Int, fill: (UnsafeMutablePointer<Double>) -> Void) -> UnsafeMutablePointer<Double> {
        if let t = tails[id], t.group == group { return t.pointer }
        var entry = tails[id] ?? (group, UnsafeMutablePointer<Double>.allocate(capacity: Swift.max(count, 1)), Swift.max(count, 1))
        if entry.capacity < count {
            entry.pointer.deallocate()
            entry = (group, .allocate(capacity: count), count)
        }
        tails[id] = (-1, entry.pointer, entry.capacity)  // not valid until filled
        fill(entry.pointer)
        tails[id] = (group, entry.pointer, entry.capacity)
        return entry.pointer
    }

    /// A buffer of at least `count` values for lane `k` of a group's argument.
    func laneBuffer(_ k: Int, count: Int) -> UnsafeMutablePointer<Double> {
        while lanes.count <= k { lanes.append((.allocate(capacity: 1), 1)) }
        if lanes[k].capacity < count {
            lanes[k].pointer.deallocate()
            lanes[k] = (.allocate(capacity: count), count)
        }
        return lanes[k].pointer
    }

    /// Streamed running series' checkpoints by series id (`MaterializedSeries.readRunning`): the
    /// ticker they are in and, ascending by row, the fold's state over the ticker's rows before
    /// each row (the latest few).
    private var running: [Int: (tickerStart: Int, checkpoints: [(row: Int, state: SeriesKernels.RunningState)])] = [:]

    /// The latest checkpoint of series `id` at or before `row` in the ticker starting at `tickerStart`.
    func runningCheckpoint(
        _ id: Int, tickerStart: Int, atOrBefore row: Int
    ) -> (row: Int, state: SeriesKernels.RunningState)? {
        guard let r = running[id], r.tickerStart == tickerStart else { return nil }
        return r.checkpoints.last { $0.row <= row }
    }

    /// Remembers the state of series `id` before `row` (of the ticker starting at `tickerStart`).
    func noteRunning(_ id: Int, tickerStart: Int, row: Int, state: SeriesKernels.RunningState) {
        var r = running[id] ?? (tickerStart, [])
        running[id] = nil  // the array is then uniquely referenced: updated in place
        if r.tickerStart != tickerStart { r = (tickerStart, []) }
        if let i = r.checkpoints.firstIndex(where: { $0.row >= row }) {
            if r.checkpoints[i].row == row {
                r.checkpoints[i].state = state
            } else {
                r.checkpoints.insert((row, state), at: i)
            }
        } else {
            r.checkpoints.append((row, state))
        }
        if r.checkpoints.count > 8 { r.checkpoints.removeFirst() }
        running[id] = r
    }

    /// Per-ticker recursive series' values by series id: the rows they cover and their buffer.
    private var prefixes: [Int: (rows: Range<Int>, pointer: UnsafeMutablePointer<Double>, capacity: Int)] = [:]

    /// The buffer of series `id` over `rows`, filled by `fill` unless it already holds them.
    /// One is kept per series and row of the group being screened, so a series read both through
    /// another's argument (for the whole group) and directly (for each row) is computed once.
    func seriesPrefix(_ series: Int, rows: Range<Int>, fill: (UnsafeMutablePointer<Double>) -> Void) -> UnsafeMutablePointer<Double> {
        let id = series * 64 + (asOfGroup?.slot ?? 0) % 64
        if let p = prefixes[id], p.rows == rows { return p.pointer }
        var entry =
            prefixes[id] ?? (rows, UnsafeMutablePointer<Double>.allocate(capacity: Swift.max(rows.count, 1)), Swift.max(rows.count, 1))
        if entry.capacity < rows.count {
            entry.pointer.deallocate()
            entry = (rows, .allocate(capacity: rows.count), rows.count)
        }
        prefixes[id] = (0 ..< 0, entry.pointer, entry.capacity)  // not valid until filled
        fill(entry.pointer)
        prefixes[id] = (rows, entry.pointer, entry.capacity)
        return entry.pointer
    }

    /// The scratch of a program over gathered rows (`ExpressionProgram+Gathered.swift`): its row
    /// numbers are not the table's, so the caches kept by row (scaled prefix sums, shared
    /// windows) are kept apart from this scratch's, and forgotten before each use.
    private var gathered: ExpressionScratch?

    /// The scratch for a program over newly gathered rows, holding nothing from earlier ones.
    func scratchForGatheredRows() -> ExpressionScratch {
        let g = gathered ?? ExpressionScratch()
        gathered = g
        g.forgetRows()
        return g
    }

    /// Drops every value kept by row number (the rows they were kept for now hold others).
    private func forgetRows() {
        for k in scaledPrefixes.indices { scaledPrefixes[k].rows = 0 ..< 0 }
        for m in memos.values { m.pointer.deallocate() }
        memos = [:]
        span = nil
    }

    /// A buffer of at least `count` values, valid until the matching `release()`.
    func acquire(_ count: Int) -> UnsafeMutablePointer<Double> {
        if depth == buffers.count {
            buffers.append((.allocate(capacity: max(count, 1)), max(count, 1)))
        } else if buffers[depth].capacity < count {
            buffers[depth].pointer.deallocate()
            buffers[depth] = (.allocate(capacity: count), count)
        }
        depth += 1
        return buffers[depth - 1].pointer
    }

    func release() { depth -= 1 }

    /// Buffers kept acquired between calls (aggregates evaluate a piece once for several groups).
    private(set) var heldBuffers: [UnsafeMutablePointer<Double>] = []

    /// Keeps `buffers` (the last ones acquired) acquired until `releaseHeld()`.
    func hold(_ buffers: [UnsafeMutablePointer<Double>]) { heldBuffers = buffers }

    /// Releases the held buffers.
    func releaseHeld() {
        depth -= heldBuffers.count
        heldBuffers = []
    }

    /// Block suffix extremes for moving minima and maxima (one window's worth).
    func suffixBuffer(_ count: Int) -> UnsafeMutablePointer<Double> {
        if let suffixes, suffixCapacity >= count { return suffixes }
        suffixes?.deallocate()
        let p = UnsafeMutablePointer<Double>.allocate(capacity: max(count, 1))
        suffixes = p
        suffixCapacity = max(count, 1)
        return p
    }

    deinit {
        for b in buffers { b.pointer.deallocate() }
        for m in memos.values { m.pointer.deallocate() }
        for p in prefixes.values { p.pointer.deallocate() }
        for t in tails.values { t.pointer.deallocate() }
        for l in lanes { l.pointer.deallocate() }
        for p in scaledPrefixes { p.pointer.deallocate() }
        suffixes?.deallocate()
    }
}
