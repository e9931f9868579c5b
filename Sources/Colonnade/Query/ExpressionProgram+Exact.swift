extension ExpressionProgram {
    /// The exact node for `f(child, w)` when `child`'s values are decimals with a known scale — a
    /// Float64 column with a decimal scale, or an expression over such columns and decimal
    /// constants that `decimalBound` can follow (`mavg(close - open, 5)`, `msum(high - low, 20)`,
    /// `mavg(greatest(high - low, abs(high - prev(close))), 14)`) — and `f` has an exact kernel
    /// there (`SeriesKernels.hasExactKernel`), else nil. Its lookback is `w - 1` past the child's:
    /// exact sums need no restart points.
    static func exactSeries(_ f: ValueExpression.SeriesFunction, _ child: Node, window w: Int, table: QuoteTable) -> Node? {
        guard f == .msum || f == .mavg || f == .mdev, let scale = decimalScale(of: child, columns: table.columns),
            SeriesKernels.hasExactKernel(f, window: w, scale: scale)
        else { return nil }
        return .exactSeries(f, child, window: w, scale: scale)
    }

    /// The scale of the program's values when they are decimals (see `decimalScale(of:columns:)`).
    var decimalScale: DecimalScale? { ExpressionProgram.decimalScale(of: root, columns: columns) }

    /// The scale at which every value of `node` is, after `(x·10^digits).rounded()`, exactly the
    /// decimal that exact arithmetic on the columns' decimals gives, or nil. A bare column with a
    /// decimal scale is that scale (each stored value round-trips). Otherwise the evaluation in
    /// Float64 is followed with `decimalBound`: the scaled error of each step (a stored value is
    /// within half an ulp of its decimal, each `+`, `-`, `*` rounds once more) must stay below a
    /// quarter of a unit of the last digit, so that rounding recovers the exact scaled integer; and
    /// the scaled values stay below 2^52.
    static func decimalScale(of node: Node, columns: [AnyColumn]) -> DecimalScale? {
        if case .column(let i) = node, case .float64(let c) = columns[i] { return c.decimalScale }
        guard let b = decimalBound(node, columns: columns, depth: 0), b.maxScaled < DecimalScale.scaledLimit,
            b.error + (b.maxScaled + b.error) * unitRoundoff < 0.25
        else { return nil }
        return DecimalScale(digits: b.digits, maxScaled: b.maxScaled)
    }

    /// Scaled integers (`digits` fractional digits) bounding a node's exact decimal values
    /// (`maxScaled`) and the distance of its Float64 values from them (`error`, in units of
    /// 10^-digits). Every value the node takes is a value of its operands combined exactly, or
    /// one of them (`greatest`, `if`, `prev`), or null.
    struct DecimalBound {
        var digits: Int
        var maxScaled: Double
        var error: Double

        func rescaled(to d: Int) -> DecimalBound {
            let f = DecimalScale.powers[d - digits]
            return DecimalBound(digits: d, maxScaled: maxScaled * f, error: error * f)
        }
    }

    /// 2^-53: a rounded Float64 operation's relative error at most.
    private static let unitRoundoff = 1.1102230246251565e-16

    private static func decimalBound(_ node: Node, columns: [AnyColumn], depth: Int) -> DecimalBound? {
        // Deep trees give up (the walk recurses): the bound is only an optimization of exactness.
        guard depth < DeepRecursion.inlineDepth else { return nil }
        let u = unitRoundoff
        func bound(_ n: Node) -> DecimalBound? { decimalBound(n, columns: columns, depth: depth + 1) }
        /// The bound of a value that is one of `bs` (or null).
        func either(_ bs: [DecimalBound]) -> DecimalBound? {
            guard let d = bs.map(\.digits).max() else { return nil }
            let r = bs.map { $0.rescaled(to: d) }
            return DecimalBound(digits: d, maxScaled: r.map(\.maxScaled).max() ?? 0, error: r.map(\.error).max() ?? 0)
        }
        switch node {
        case .column(let i):
            switch columns[i] {
            case .float64(let c):
                // A stored value is the Double nearest its decimal: within half an ulp.
                guard let s = c.decimalScale else { return nil }
                return DecimalBound(digits: s.digits, maxScaled: s.maxScaled, error: s.maxScaled * u)
            case .int32:
                return DecimalBound(digits: 0, maxScaled: 2_147_483_648, error: 0)
            case .int64(let c):
                // Whole numbers, exact in Double below 2^52 (known from the block summaries).
                guard let s = c.summaries else { return nil }
                var m = 0.0
                for b in 0 ..< s.count {
                    m = Swift.max(m, Swift.abs(Double(s.minimums[b])), Swift.abs(Double(s.maximums[b])))
                }
                return m < DecimalScale.scaledLimit ? DecimalBound(digits: 0, maxScaled: m, error: 0) : nil
            case .float32:
                return nil
            }
        case .constant(let c):
            guard c.isFinite, let k = DecimalScale.fractionDigits(of: c, atLeast: 0) else { return nil }
            let m = Swift.abs((c * DecimalScale.powers[k]).rounded())
            return DecimalBound(digits: k, maxScaled: m, error: m * u)
        case .negate(let x):
            return bound(x)
        case let .math(f, x):
            return f == .abs ? bound(x) : nil
        case let .chain(first, steps):
            guard var a = bound(first) else { return nil }
            for (op, operand) in steps {
                guard let b = bound(operand) else { return nil }
                switch op {
                case .add, .subtract:
                    let d = Swift.max(a.digits, b.digits)
                    let x = a.rescaled(to: d), y = b.rescaled(to: d)
                    let m = x.maxScaled + y.maxScaled, e = x.error + y.error
                    a = DecimalBound(digits: d, maxScaled: m, error: e + (m + e) * u)
                case .multiply:
                    guard a.digits + b.digits <= 15 else { return nil }
                    let m = a.maxScaled * b.maxScaled
                    let e = a.maxScaled * b.error + b.maxScaled * a.error + a.error * b.error
                    a = DecimalBound(digits: a.digits + b.digits, maxScaled: m, error: e + (m + e) * u)
                case .divide:
                    return nil
                }
                if a.maxScaled >= DecimalScale.scaledLimit { return nil }
            }
            return a
        case let .series(f, x, _):
            guard let b = bound(x) else { return nil }
            switch f {
            case .prev: return b
            case .change:
                let m = 2 * b.maxScaled, e = 2 * b.error
                return DecimalBound(digits: b.digits, maxScaled: m, error: e + (m + e) * u)
            default: return nil
            }
        case let .function(f, xs):
            // greatest, least and coalesce each take one of their arguments' values.
            guard f == .greatest || f == .least || f == .coalesce else { return nil }
            var bs = [DecimalBound]()
            for x in xs {
                guard let b = bound(x) else { return nil }
                bs.append(b)
            }
            return either(bs)
        case let .conditional(branches, otherwise):
            var bs = [DecimalBound]()
            for (_, x) in branches {
                guard let b = bound(x) else { return nil }
                bs.append(b)
            }
            if let otherwise {
                guard let b = bound(otherwise) else { return nil }
                bs.append(b)
            }
            return either(bs)
        case .shared(_, let x):
            return bound(x)
        case .ordering, .exactSeries, .materialized, .isNull, .crossTicker:
            return nil
        }
    }
}

extension ExpressionProgram {
    /// Prefix sums of column `column`'s scaled values (`SeriesKernels.scaledPrefixSums`) from row
    /// `range.lowerBound` on, shared by the exact `msum`/`mavg` windows over the column: held in
    /// the worker's scratch, so a window whose rows lie within those of an earlier request reads
    /// them (S3's `mavg(close, 200)` in each piece reads the sums that the chunk's shared
    /// `mavg(close, 50)` made: `close` is scaled and summed once); else computed over `range`.
    /// Nil when a row of `range` is null: the windows then run per segment
    /// (`SeriesKernels.runExact`), which counts nulls. A window's sum is a difference of prefixes
    /// wherever they start, so the values are the same to the bit.
    /// - Precondition: `scale` is the column's (`decimalScale(of:columns:)`) and below 2^51.
    func scaledPrefix(
        _ column: Int, scale: DecimalScale, covering range: Range<Int>, _ scratch: ExpressionScratch
    ) -> UnsafePointer<Int64>? {
        scratch.scaledPrefix(column, covering: range) { q in
            let buffer = scratch.acquire(range.count)
            defer { scratch.release() }
            let src = evaluate(.column(column), range, into: buffer, scratch)
            return SeriesKernels.scaledPrefixSums(src, count: range.count, scale: scale, into: q) == 0
        }
    }
}
