/// A moving window (`mavg`, `msum`, `mdev`, `mmin`, `mmax`) written more than once in one query —
/// S3's `mavg(close, 50)` on both sides of its `and`, or twice in one expression — computed once
/// per chunk of the evaluator and read by every program that names it (docs/ARCHITECTURE.md,
/// *One query*, Kernels: shared windows).
///
/// The first program that asks for the window's values over rows `R` of a chunk computes them over
/// `[R.start − reach, chunk end)` into a buffer of its worker's scratch (`ExpressionScratch.memo`);
/// every later request within that range, from any program of the query, reads that buffer. `reach`
/// is the largest lookback of the programs that contain the window, so a later program's request
/// (its rows extended by its own lookback) lies within. A window's values do not depend on where
/// evaluation began (`ExpressionProgram`), so the answer is the same to the bit as computing it
/// each time. Outside a chunk (as-of screens, values at rows, aggregates) it is computed as before.
final class SharedWindow: @unchecked Sendable {
    // Safe (@unchecked): `reach` is written only while the query is planned, on one thread;
    // evaluation only reads it.

    /// The window's number within its query (the key of its buffer in a scratch).
    let id: Int
    /// Rows before a request that a program containing the window may ask for.
    var reach = 0

    init(id: Int) { self.id = id }

    /// The windows worth sharing: those that cost a pass of their own (not `prev`, `change` or
    /// `pct_change`, which are a read `n` rows back and cheaper than a shared buffer).
    static func isShareable(_ f: ValueExpression.SeriesFunction) -> Bool {
        switch f {
        case .mavg, .msum, .mdev, .mmin, .mmax: true
        default: false
        }
    }
}

extension SeriesCache {
    /// Counts the shareable windows `predicate` names (outside cross-ticker functions, whose
    /// arguments compile on their own), so that those named more than once are shared.
    func countWindows(in predicate: RowPredicate) {
        var stack = [predicate]
        while let p = stack.popLast() {
            switch p {
            case .compare(let e, _): countWindows(in: e)
            case let .compareExpressions(a, b, _):
                countWindows(in: a)
                countWindows(in: b)
            case .and(let ps), .or(let ps): stack += ps
            case .not(let q): stack.append(q)
            case .range, .integerRange, .dates, .tickers, .constant: break
            }
        }
    }

    /// Counts the shareable windows of `expression` (see `countWindows(in:)` for a predicate).
    func countWindows(in expression: ValueExpression) {
        var stack = [expression]
        while let e = stack.popLast() {
            switch e {
            case .column, .number, .crossTicker: break
            case .negate(let x), .math(_, let x), .nullTest(let x): stack.append(x)
            case let .chain(first, steps):
                stack.append(first)
                stack += steps.map(\.operand)
            case let .series(f, x, _):
                if SharedWindow.isShareable(f) { windowCounts[e, default: 0] += 1 }
                stack.append(x)
            case .function(_, let xs): stack += xs
            case let .conditional(branches, otherwise):
                for b in branches {
                    countWindows(in: b.condition)
                    stack.append(b.value)
                }
                if let otherwise { stack.append(otherwise) }
            }
        }
    }

    /// The shared window for `expression` when it was counted more than once, else nil.
    func sharedWindow(_ expression: ValueExpression) -> SharedWindow? {
        guard shareWindows, (windowCounts[expression] ?? 0) > 1 else { return nil }
        if let known = sharedWindows[expression] { return known }
        let window = SharedWindow(id: sharedWindows.count)
        sharedWindows[expression] = window
        return window
    }
}

extension ExpressionProgram {
    /// The values of shared window `window` (whose own node is `x`) over `range`: from its buffer
    /// in `scratch` when that covers `range`, else computed to the end of the chunk into it, or,
    /// outside a chunk, computed into `dst` as any node.
    func evaluateShared(
        _ window: SharedWindow, _ x: Node, _ range: Range<Int>, into dst: UnsafeMutablePointer<Double>,
        _ scratch: ExpressionScratch
    ) -> UnsafePointer<Double> {
        if let held = scratch.memo(window.id, covering: range) { return held }
        guard let span = scratch.span, range.lowerBound >= span.lowerBound - window.reach, range.upperBound <= span.upperBound
        else { return evaluate(x, range, into: dst, scratch) }
        let rows = Swift.max(0, range.lowerBound - window.reach) ..< span.upperBound
        let buffer = scratch.memoBuffer(window.id, rows: rows)
        let values = evaluate(x, rows, into: buffer, scratch)
        if values != UnsafePointer(buffer) { buffer.update(from: values, count: rows.count) }
        return UnsafePointer(buffer) + (range.lowerBound - rows.lowerBound)
    }

    /// Raises each shared window's reach to `programLookback`: a program evaluates every node over
    /// its rows extended by its lookback.
    static func extendSharedReach(_ root: Node, programLookback: Int) {
        func walk(_ node: Node) {
            switch node {
            case .column, .constant, .materialized, .crossTicker: break
            case .negate(let x), .math(_, let x), .isNull(let x), .series(_, let x, _), .exactSeries(_, let x, _, _): walk(x)
            case let .chain(first, steps):
                walk(first)
                for (_, x) in steps { walk(x) }
            case let .ordering(a, b):
                walk(a)
                walk(b)
            case .function(_, let xs): for x in xs { walk(x) }
            case let .conditional(branches, otherwise):
                for (c, x) in branches {
                    walkCondition(c)
                    walk(x)
                }
                if let otherwise { walk(otherwise) }
            case let .shared(window, x):
                window.reach = Swift.max(window.reach, programLookback)
                walk(x)
            }
        }
        func walkCondition(_ c: Condition) {
            switch c {
            case .value(let x, _): walk(x)
            case .not(let d): walkCondition(d)
            case .and(let ds), .or(let ds): for d in ds { walkCondition(d) }
            case .dates, .rows, .constant: break
            }
        }
        walk(root)
    }
}
