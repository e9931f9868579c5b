import Colonnade

/// Seeded tables and expressions for testing the expression language against `ExpressionOracle`.
public enum SeriesTables {
    /// Value columns of `random(tickerLengths:seed:)`.
    public static let columns = ["open", "high", "low", "close", "volume", "f32"]

    /// One ticker per entry of `tickerLengths` (0 allowed), dates ascending; each value column is a
    /// random walk of quarter-integers (so sums of a window are exact in Double and in any order),
    /// with about `nullRate` nulls and `specialRate` NaN, ±0 and ±∞. `volume` is Int64, `f32` Float.
    public static func random(
        tickerLengths: [Int], seed: UInt64, nullRate: Double = 0.04,
        specialRate: Double = 0.02
    ) -> QuoteTable {
        var rng = SplitMix64(seed: seed)
        let specials: [Double] = [.nan, 0.0, -0.0, .infinity, -.infinity]
        var rowTickers = [Int32](), dates = Column<Int32>()
        var open = Column<Double>(), high = Column<Double>(), low = Column<Double>(), close = Column<Double>()
        var volume = Column<Int64>(), f32 = Column<Float>()
        for (t, length) in tickerLengths.enumerated() {
            var day = Int32(12_000 + rng.below(50))
            // Ticker levels differ a lot, so a window that crossed tickers would change answers.
            var level = Double(rng.inRange(1 ... 400)) * (t % 2 == 0 ? 1 : 25)
            for _ in 0 ..< length {
                rowTickers.append(Int32(t))
                dates.append(day)
                day += Int32(1 + rng.below(3))
                level = max(0.25, level + Double(rng.inRange(-8 ... 8)) / 4)
                func value(_ x: Double) -> Double? {
                    if rng.nextUnit() < nullRate { return nil }
                    if rng.nextUnit() < specialRate { return specials[rng.below(specials.count)] }
                    return x
                }
                let o = level + Double(rng.inRange(-4 ... 4)) / 4
                open.append(value(o))
                close.append(value(level))
                high.append(value(max(o, level) + Double(rng.below(8)) / 4))
                low.append(value(min(o, level) - Double(rng.below(8)) / 4))
                if rng.nextUnit() < nullRate { volume.appendNull() } else { volume.append(Int64(rng.inRange(0 ... 50)) * 100) }
                f32.append(value(Double(rng.inRange(-40 ... 40)) / 4).map(Float.init))
            }
        }
        let schema = columns.map { ColumnDescriptor(name: $0, type: $0 == "volume" ? .int64 : $0 == "f32" ? .float32 : .float64) }
        do {
            var table = try QuoteTable(
                sortingRows: tickerLengths.indices.map { TickerEntry(symbol: "T\($0)") },
                rowTickers: rowTickers, dates: dates, schema: schema,
                columns: [
                    AnyColumn(open), AnyColumn(high), AnyColumn(low), AnyColumn(close),
                    AnyColumn(volume), AnyColumn(f32),
                ])
            table.computeSummaries()
            return table
        } catch {
            preconditionFailure("test table: \(error)")
        }
    }
}

/// Random expressions and predicates over `SeriesTables` columns.
///
/// Moving sums, averages and deviations are only taken over *exact* expressions (columns, `+`,
/// `-`, small integer multiples, `prev`, `change`, `mmin`, `mmax`, `msum`, `abs`) of quarter-integer
/// data: their window sums are then exact in any order, so the engine's sliding sums and the
/// oracle's plain loops must agree bit for bit and masks can be compared exactly. `mdev` is left
/// out of masks (its rounding depends on the algorithm) and checked against a two-pass reference
/// with a tolerance instead.
public struct ExpressionGenerator {
    public var rng: SplitMix64
    public var maxWindow: Int

    public init(seed: UInt64, maxWindow: Int = 400) {
        rng = SplitMix64(seed: seed)
        self.maxWindow = maxWindow
    }

    public mutating func window() -> Int {
        rng.chance(6) ? rng.inRange(1 ... maxWindow) : rng.inRange(1 ... min(12, maxWindow))
    }

    mutating func leaf() -> ValueExpression {
        rng.chance(6) ? .number(Double(rng.inRange(-8 ... 8)) / 4) : .column(SeriesTables.columns[rng.below(SeriesTables.columns.count)])
    }

    /// An expression whose window sums are exact.
    public mutating func exact(_ depth: Int) -> ValueExpression {
        if depth == 0 || rng.chance(3) { return leaf() }
        switch rng.below(9) {
        case 0: return exact(depth - 1) + exact(depth - 1)
        case 1: return exact(depth - 1) - exact(depth - 1)
        case 2: return Double(rng.inRange(-3 ... 3)) * exact(depth - 1)
        case 3: return -exact(depth - 1)
        case 4: return exact(depth - 1).prev(rng.chance(2) ? 1 : window())
        case 5: return exact(depth - 1).change(rng.chance(2) ? 1 : window())
        case 6: return rng.chance(2) ? exact(depth - 1).mmin(window()) : exact(depth - 1).mmax(window())
        case 7: return exact(depth - 1).msum(window())
        default: return exact(depth - 1).abs
        }
    }

    /// Any expression except `mdev` (see the type's note).
    public mutating func any(_ depth: Int) -> ValueExpression {
        if depth == 0 || rng.chance(4) { return leaf() }
        switch rng.below(10) {
        case 0, 1:
            let ops = ValueExpression.Operator.allCases
            return .arithmetic(ops[rng.below(ops.count)], any(depth - 1), any(depth - 1))
        case 2: return -any(depth - 1)
        case 3:
            let fs = ValueExpression.MathFunction.allCases
            return .math(fs[rng.below(fs.count)], any(depth - 1))
        case 4: return any(depth - 1).prev(rng.chance(2) ? 1 : window())
        case 5: return rng.chance(2) ? any(depth - 1).change(window()) : any(depth - 1).pctChange(rng.chance(2) ? 1 : window())
        case 6: return rng.chance(2) ? any(depth - 1).mmin(window()) : any(depth - 1).mmax(window())
        case 7: return exact(depth - 1).mavg(window())
        case 8: return exact(depth - 1).msum(window())
        default: return exact(depth)
        }
    }

    /// An expression with recursive series (`ema`, `rma`, `rsi`, `cum*`) at up to `depth` levels,
    /// over any expression, windows of 1 … `maxWindow`.
    public mutating func recursive(_ depth: Int) -> ValueExpression {
        if depth == 0 || rng.chance(5) { return rng.chance(2) ? leaf() : any(1) }
        let x = rng.chance(3) ? any(1) : recursive(depth - 1)
        switch rng.below(8) {
        case 0: return x.ema(window())
        case 1: return x.rma(window())
        case 2: return x.rsi(window())
        case 3: return x.cumsum
        case 4: return x.cummax
        case 5: return x.cummin
        case 6: return recursive(depth - 1) - x.ema(window())
        default: return x.prev(rng.chance(2) ? 1 : window())
        }
    }

    /// An expression with conditionals and null functions (`if`, `case`, `greatest`, `least`,
    /// `coalesce`, `is null`) over any expressions and recursive series.
    public mutating func conditional(_ depth: Int) -> ValueExpression {
        if depth == 0 || rng.chance(5) { return rng.chance(2) ? any(1) : recursive(1) }
        switch rng.below(7) {
        case 0: return .conditional([ValueExpression.Branch(predicate(1), conditional(depth - 1))], otherwise: conditional(depth - 1))
        case 1:
            let branches = (0 ..< rng.inRange(1 ... 3)).map { _ in ValueExpression.Branch(predicate(1), conditional(depth - 1)) }
            return .conditional(branches, otherwise: rng.chance(2) ? nil : conditional(depth - 1))
        case 2: return .function(.greatest, (0 ..< rng.inRange(1 ... 3)).map { _ in conditional(depth - 1) })
        case 3: return .function(.least, (0 ..< rng.inRange(1 ... 3)).map { _ in conditional(depth - 1) })
        case 4: return .function(.coalesce, (0 ..< rng.inRange(1 ... 3)).map { _ in conditional(depth - 1) })
        case 5:
            let test = rng.chance(2) ? any(1).isNull : any(1).isNotNull
            return .conditional([ValueExpression.Branch(test, conditional(depth - 1))], otherwise: any(1))
        default: return rng.chance(2) ? conditional(depth - 1).cumsum : conditional(depth - 1).ema(window())
        }
    }

    /// Bounds against a small constant.
    public mutating func bounds() -> RangeBounds<Double> {
        let points: [Double] = [-2, -0.25, 0, 0.25, 1, 5, 60, 100, 400]
        let a = points[rng.below(points.count)], b = points[rng.below(points.count)]
        switch rng.below(6) {
        case 0: return .greater(than: a)
        case 1: return .atLeast(a)
        case 2: return .less(than: a)
        case 3: return .atMost(a)
        case 4: return .equal(to: a)
        default: return RangeBounds(lower: min(a, b), lowerInclusive: rng.chance(2), upper: max(a, b), upperInclusive: rng.chance(2))
        }
    }

    /// A comparison of two expressions, as bounds against 0.
    public mutating func order() -> RangeBounds<Double> {
        [.greater(than: 0), .atLeast(0), .less(than: 0), .atMost(0), .equal(to: 0)][rng.below(5)]
    }

    /// A random predicate: expression comparisons mixed with plain ranges, combined with and/or/not.
    public mutating func predicate(_ depth: Int) -> RowPredicate {
        if depth == 0 || rng.chance(3) {
            switch rng.below(5) {
            case 0, 1: return .compare(any(2), bounds())
            case 2, 3: return .compareExpressions(any(2), any(2), order())
            default: return .range(column: SeriesTables.columns[rng.below(SeriesTables.columns.count)], bounds: bounds())
            }
        }
        switch rng.below(3) {
        case 0: return .and([predicate(depth - 1), predicate(depth - 1)])
        case 1: return .or([predicate(depth - 1), predicate(depth - 1)])
        default: return .not(predicate(depth - 1))
        }
    }
}
