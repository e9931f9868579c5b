/// Interval arithmetic over block summaries: bounds of an expression's values in one zone-map
/// block, from the minimum, maximum and unknown count of each column it reads, so a computed
/// comparison such as `(high - low) / close > 0.05` can skip (or fill) whole blocks as a plain
/// range does.
///
/// Sound because IEEE rounding is monotonic: for `+`, `-`, `*`, `/` the result of any two values
/// inside two intervals lies between the same operation on the intervals' corners, and a column's
/// values are loaded exactly as its summaries were taken (`Int64` → `Double` rounds the same way).
/// Wherever that argument needs care the interval gives up (nil: run the kernel): a corner that is
/// NaN (`inf - inf`, `0 * inf`), a divisor interval that holds 0, `ln` and `exp` (libm is not
/// guaranteed monotonic), series functions (they read other rows), and comparisons of two
/// expressions with an infinite corner (equal infinities compare equal there, but their
/// difference is NaN).
extension ExpressionProgram {
    /// Every non-null value of the expression over a block lies in `[lo, hi]`; `mayBeNull` says
    /// whether some row may be null; `isEmpty` that every row is.
    struct Interval {
        var lo: Double
        var hi: Double
        var mayBeNull: Bool
        var isEmpty = false

        static let empty = Interval(lo: 0, hi: 0, mayBeNull: true, isEmpty: true)

        var hasInfiniteCorner: Bool { lo.isInfinite || hi.isInfinite }
    }

    /// Whether `blockOutcome` can answer for this expression: no series function, no `ln`/`exp`,
    /// every column it reads has block summaries, and it is shallow enough to walk on the
    /// caller's stack (`DeepRecursion.inlineDepth`; a deeper one is evaluated row by row).
    var supportsBlockIntervals: Bool {
        func check(_ node: Node) -> Bool {
            switch node {
            // A column read unmerged has no summaries of the merged rows' blocks.
            case .column(let i): return columns[i].hasSummaries && stitch(ofColumn: i) == nil
            case .constant: return true
            case .negate(let x): return check(x)
            case let .chain(first, steps): return check(first) && steps.allSatisfy { check($0.1) }
            case let .ordering(a, b): return check(a) && check(b)
            case let .math(f, x): return (f == .abs || f == .sqrt) && check(x)
            case .series, .crossTicker, .exactSeries, .materialized, .function, .conditional, .isNull, .shared: return false
            }
        }
        return lookback == 0 && depth <= DeepRecursion.inlineDepth && check(root)
    }

    /// What `bounds` can do in block `block` (of `rows` rows), judged from the summaries alone.
    /// - Precondition: `supportsBlockIntervals`.
    func blockOutcome(_ bounds: RangeBounds<Double>, block: Int, rows: Int) -> BlockOutcome {
        guard let v = interval(root, block: block, rows: rows) else { return .some }
        if v.isEmpty { return .none }
        if let lo = bounds.lower, bounds.lowerInclusive ? v.hi < lo : v.hi <= lo { return .none }
        if let hi = bounds.upper, bounds.upperInclusive ? v.lo > hi : v.lo >= hi { return .none }
        if v.mayBeNull { return .some }
        if let lo = bounds.lower, bounds.lowerInclusive ? !(v.lo >= lo) : !(v.lo > lo) { return .some }
        if let hi = bounds.upper, bounds.upperInclusive ? !(v.hi <= hi) : !(v.hi < hi) { return .some }
        return .all
    }

    private func interval(_ node: Node, block: Int, rows: Int) -> Interval? {
        switch node {
        case .column(let i):
            return ExpressionProgram.interval(columns[i], block: block, rows: rows)
        case .constant(let c):
            return c.isNaN ? .empty : Interval(lo: c, hi: c, mayBeNull: false)
        case .negate(let x):
            guard let v = interval(x, block: block, rows: rows) else { return nil }
            return v.isEmpty ? v : Interval(lo: -v.hi, hi: -v.lo, mayBeNull: v.mayBeNull)
        case let .math(f, x):
            guard let v = interval(x, block: block, rows: rows) else { return nil }
            if v.isEmpty { return v }
            switch f {
            case .abs:
                if v.lo >= 0 { return v }
                if v.hi <= 0 { return Interval(lo: -v.hi, hi: -v.lo, mayBeNull: v.mayBeNull) }
                return Interval(lo: 0, hi: Swift.max(-v.lo, v.hi), mayBeNull: v.mayBeNull)
            case .sqrt:
                // sqrt is correctly rounded (monotonic); of a negative number it is null.
                if v.hi < 0 { return .empty }
                return Interval(lo: Swift.max(v.lo, 0).squareRoot(), hi: v.hi.squareRoot(), mayBeNull: v.mayBeNull || v.lo < 0)
            case .ln, .exp:
                return nil
            }
        case let .chain(first, steps):
            // Left to right, as evaluation runs: the interval of the value so far, then each step.
            guard var x = interval(first, block: block, rows: rows) else { return nil }
            for (op, b) in steps {
                guard let y = interval(b, block: block, rows: rows), let z = ExpressionProgram.combine(op, x, y) else { return nil }
                x = z
            }
            return x
        case let .ordering(a, b):
            guard let x = interval(a, block: block, rows: rows), let y = interval(b, block: block, rows: rows) else { return nil }
            if x.isEmpty || y.isEmpty { return .empty }
            if x.hasInfiniteCorner || y.hasInfiniteCorner { return nil }
            // Finite: a - b is 0 exactly when a == b (gradual underflow), so the order is a - b.
            let lo = x.lo - y.hi, hi = x.hi - y.lo
            if lo.isNaN || hi.isNaN { return nil }
            return Interval(lo: lo, hi: hi, mayBeNull: x.mayBeNull || y.mayBeNull)
        case .series, .crossTicker, .exactSeries, .materialized, .function, .conditional, .isNull, .shared:
            return nil
        }
    }

    /// The interval of `x op y` for values in `x` and `y`, or nil where the bound would not be sound.
    private static func combine(_ op: ValueExpression.Operator, _ x: Interval, _ y: Interval) -> Interval? {
        if x.isEmpty || y.isEmpty { return .empty }
        let corners: [Double]
        switch op {
        case .add: corners = [x.lo + y.lo, x.hi + y.hi]
        case .subtract: corners = [x.lo - y.hi, x.hi - y.lo]
        case .multiply: corners = [x.lo * y.lo, x.lo * y.hi, x.hi * y.lo, x.hi * y.hi]
        case .divide:
            // A divisor that may be 0 (either sign) makes nulls and unbounded quotients.
            if y.lo <= 0 && y.hi >= 0 { return nil }
            corners = [x.lo / y.lo, x.lo / y.hi, x.hi / y.lo, x.hi / y.hi]
        }
        if corners.contains(where: \.isNaN) { return nil }
        // Infinite inputs can meet as inf - inf or 0 * inf in some row: null there.
        let mayBeNull = x.mayBeNull || y.mayBeNull || x.hasInfiniteCorner || y.hasInfiniteCorner
        // Folds as `min()`/`max()` do (the first of equal values wins), without unwrapping:
        // corners holds two or four non-NaN values on every path above.
        let lo = corners.reduce(Double.infinity) { $1 < $0 ? $1 : $0 }
        let hi = corners.reduce(-Double.infinity) { $0 < $1 ? $1 : $0 }
        return Interval(lo: lo, hi: hi, mayBeNull: mayBeNull)
    }

    private static func interval(_ column: AnyColumn, block: Int, rows: Int) -> Interval? {
        switch column {
        case .float64(let c): interval(c.summaries, block: block, rows: rows)
        case .float32(let c): interval(c.summaries, block: block, rows: rows)
        case .int64(let c): interval(c.summaries, block: block, rows: rows)
        case .int32(let c): interval(c.summaries, block: block, rows: rows)
        }
    }

    private static func interval<T: ColumnElement>(_ s: BlockSummaries<T>?, block: Int, rows: Int) -> Interval? {
        guard let s, block < s.count else { return nil }
        let unknown = Int(s.unknownCounts[block])
        if unknown >= rows { return .empty }
        let lo = s.minimums[block].doubleValue, hi = s.maximums[block].doubleValue
        if lo.isNaN || hi.isNaN || lo > hi { return nil }
        return Interval(lo: lo, hi: hi, mayBeNull: unknown > 0)
    }
}
