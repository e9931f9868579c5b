/// A number computed per row: value columns, numbers, arithmetic, math functions and per-ticker
/// series functions (`prev`, `mavg`, …).
///
///     close > mavg(close, 50)                 // text, parsed by QueryParser
///     Field("close") > Field("close").mavg(50) // the same in Swift
///     Field("open") > 1.03 * Field("close").prev()
///
/// Series functions see the rows of one ticker in date order and never cross into another ticker;
/// a window counts rows (trading days present), not calendar days.
///
/// Nulls: any arithmetic with a null is null, `x / 0` is null, and within an expression a NaN is
/// null too (as in pandas); a window holding a null is null, and so is a window that is not yet
/// full (`min_periods = n`). A comparison with null never matches. `sqrt` and `ln` of a negative
/// number are null; `ln(0)` is `-inf`.
public indirect enum ValueExpression: Sendable, Hashable, CustomStringConvertible {
    /// A value column by identifier (`adj_close`) or source name (`Adj. Close`).
    case column(String)
    /// A constant.
    case number(Double)
    /// `-x`.
    case negate(ValueExpression)
    /// `x op₁ y₁ op₂ y₂ …` with `+`, `-`, `*`, `/` (division by zero is null), evaluated left to
    /// right: `((x op₁ y₁) op₂ y₂) …`. A left-associative run in the text (`a + b - c`, `a * b / c`)
    /// is one chain, so a sum of 50,000 terms is one node, not a tree 50,000 deep; build chains
    /// with `arithmetic(_:_:_:)` or the operators, which extend a chain rather than nest it.
    case chain(ValueExpression, [Step])
    /// `abs(x)`, `sqrt(x)`, `ln(x)`, `exp(x)`.
    case math(MathFunction, ValueExpression)
    /// A per-ticker series function with its window in rows (`prev(x, 1)`, `mavg(x, 20)`).
    case series(SeriesFunction, ValueExpression, window: Int)
    /// Across tickers: a cross-sectional function, a reference ticker's value, or a moving
    /// statistic of two series (`xrank(x)`, `ref(x, 'SPY')`, `mbeta(x, y, 60)`; see `CrossTickerExpression`).
    case crossTicker(CrossTickerExpression)
    /// `greatest(a, b, …)`, `least(a, b, …)` (null when any argument is null, as arithmetic) and
    /// `coalesce(a, b, …)` (the first non-null argument). See `ValueExpression+Conditional.swift`.
    case function(RowFunction, [ValueExpression])
    /// `case when c₁ then a₁ [when c₂ then a₂ …] [else d] end`, and `if(c, a, b)`: the value of the
    /// first branch whose condition is true (an unknown condition is not true, as in SQL); else
    /// `otherwise`, or null when there is none.
    case conditional([Branch], otherwise: ValueExpression?)
    /// 1 where `x` is null (a NaN is null), else 0: `x is null` is `nullTest(x) = 1`.
    case nullTest(ValueExpression)

    /// The four arithmetic operators.
    public enum Operator: String, Sendable, Hashable, CaseIterable {
        case add = "+", subtract = "-", multiply = "*", divide = "/"

        /// Binding strength: `*` and `/` (2) bind tighter than `+` and `-` (1).
        public var precedence: Int { self == .add || self == .subtract ? 1 : 2 }
    }

    /// One step of a chain: the operator and its right operand.
    public struct Step: Sendable, Hashable {
        /// The operator applied to the value so far and `operand`.
        public var op: Operator
        /// The right operand.
        public var operand: ValueExpression

        /// `op operand`.
        public init(_ op: Operator, _ operand: ValueExpression) {
            self.op = op
            self.operand = operand
        }
    }

    /// `l op r`: extends `l` when it is a chain whose last operator binds as tightly as `op`
    /// (`(a + b) - c` is the chain `a + b - c`), else a new chain of one step.
    /// - Complexity: O(steps of `l`) for the copy of its steps.
    public static func arithmetic(_ op: Operator, _ l: ValueExpression, _ r: ValueExpression) -> ValueExpression {
        if case .chain(let first, var steps) = l, let last = steps.last, last.op.precedence == op.precedence {
            steps.append(Step(op, r))
            return .chain(first, steps)
        }
        return .chain(l, [Step(op, r)])
    }

    /// Row-wise math functions.
    public enum MathFunction: String, Sendable, Hashable, CaseIterable {
        case abs, sqrt, ln, exp
    }

    /// Per-ticker series functions. `n` counts rows of the same ticker.
    public enum SeriesFunction: String, Sendable, Hashable, CaseIterable {
        /// The value `n` rows earlier; null for a ticker's first `n` rows.
        case prev
        /// `x - prev(x, n)`.
        case change
        /// `x / prev(x, n) - 1`.
        case pctChange = "pct_change"
        /// The mean of the last `n` values (the current one included); null unless all `n` exist.
        case mavg
        /// The sum of the last `n` values.
        case msum
        /// The minimum of the last `n` values.
        case mmin
        /// The maximum of the last `n` values.
        case mmax
        /// The sample standard deviation of the last `n` values (null for `n = 1`).
        case mdev
        // Recursive series over each ticker's whole history (`SeriesKernels+Recursive.swift`).
        /// Exponential average, α = 2/(n+1), seeded by the mean of the first `n` non-null values (TA-Lib's EMA).
        case ema
        /// Wilder's smoothing, α = 1/n, seeded as `ema`.
        case rma
        /// Wilder's relative strength index over `n` changes (TA-Lib's RSI).
        case rsi
        /// The sum of the non-null values so far (no window).
        case cumsum
        /// The largest non-null value so far (no window).
        case cummax
        /// The smallest non-null value so far (no window).
        case cummin

        /// Whether the window may be left out (it is then 1).
        public var windowIsOptional: Bool { self == .prev || self == .change || self == .pctChange }

        /// Whether the function takes a window at all (`cumsum`, `cummax`, `cummin` do not).
        public var takesWindow: Bool { !isRunning }

        /// `cumsum`, `cummax`, `cummin`: from the ticker's first row.
        public var isRunning: Bool { self == .cumsum || self == .cummax || self == .cummin }

        /// Whether a value depends on every earlier row of the ticker (not on a window of them).
        public var isRecursive: Bool { isRunning || self == .ema || self == .rma || self == .rsi }
    }

    /// The expression in the query language, e.g. `mavg(close, 50)` or `(high - low) / close`.
    /// A name that is not a plain identifier is double-quoted, a `"` in it doubled (`"a""b"`).
    /// Nesting past `QueryParser.maximumTreeDepth` levels (only a tree built in Swift has it)
    /// prints as `…`.
    public var description: String { DeepRecursion.run(depth: treeDepth) { text(parentPrecedence: 0, depth: 0) } }

    private var precedence: Int {
        switch self {
        case .chain(let first, let steps): steps.last?.op.precedence ?? first.precedence
        case .negate: 3
        case .number(let v): v < 0 || (v == 0 && v.sign == .minus) ? 3 : 4
        default: 4
        }
    }

    /// `name` as written in an expression: bare when it is an identifier, else in double quotes.
    static func quotedName(_ name: String) -> String {
        if !name.isEmpty && name.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }),
            !(QueryParser.Keyword(rawValue: name.lowercased())?.isReserved ?? false)
        {
            return name
        }
        return QueryParser.doubleQuoted(name)
    }

    private func text(parentPrecedence: Int, depth: Int) -> String {
        if depth > QueryParser.maximumTreeDepth { return "…" }
        let s: String
        switch self {
        case .column(let name):
            s = ValueExpression.quotedName(name)
        case .number(let v):
            s = v == v.rounded() && Swift.abs(v) < 1e15 ? String(Int64(v)) : "\(v)"
        case .negate(let x):
            s = "-" + x.text(parentPrecedence: 3, depth: depth + 1)
        case let .chain(first, steps):
            // Left to right, a step at a time (a long chain is not a deep recursion): the value so
            // far is parenthesised when the next operator binds tighter than the last one did, the
            // right operand when it binds no tighter than its operator (left associativity).
            var text = first.text(parentPrecedence: 0, depth: depth + 1)
            var current = first.precedence
            for step in steps {
                let p = step.op.precedence
                if current < p { text = "(" + text + ")" }
                text += " \(step.op.rawValue) " + step.operand.text(parentPrecedence: p + 1, depth: depth + 1)
                current = p
            }
            s = text
        case let .math(f, x):
            s = "\(f.rawValue)(\(x.text(parentPrecedence: 0, depth: depth + 1)))"
        case .function, .conditional, .nullTest:
            s = conditionalText(depth: depth)
        case let .series(f, x, n):
            s =
                (f.windowIsOptional && n == 1) || !f.takesWindow
                ? "\(f.rawValue)(\(x.text(parentPrecedence: 0, depth: depth + 1)))"
                : "\(f.rawValue)(\(x.text(parentPrecedence: 0, depth: depth + 1)), \(n))"
        case .crossTicker(let c):
            s = c.text { $0.text(parentPrecedence: 0, depth: depth + 1) }
        }
        return precedence < parentPrecedence ? "(\(s))" : s
    }

    /// The value columns the expression reads, in first-mention order.
    public var columns: [String] {
        var out = [String]()
        func walk(_ e: ValueExpression) {
            switch e {
            case .column(let c): if !out.contains(c) { out.append(c) }
            case .number: break
            case .negate(let x), .math(_, let x), .series(_, let x, _): walk(x)
            case let .chain(first, steps):
                walk(first)
                for step in steps { walk(step.operand) }
            case .crossTicker(let c): c.operands.forEach(walk)
            case .function(_, let xs): xs.forEach(walk)
            case .nullTest(let x): walk(x)
            case let .conditional(branches, otherwise):
                for b in branches {
                    b.condition.valueExpressions.forEach(walk)
                    walk(b.value)
                }
                if let otherwise { walk(otherwise) }
            }
        }
        walk(self)
        return out
    }

    /// The value when the expression reads no column (constants folded), else nil.
    public var constantValue: Double? {
        switch self {
        case .column, .series, .crossTicker, .conditional, .nullTest: return nil
        case let .function(f, xs):
            var values = [Double]()
            for x in xs {
                guard let v = x.constantValue else { return nil }
                values.append(v)
            }
            return ValueExpression.apply(f, values)
        case .number(let v): return v
        case .negate(let x): return x.constantValue.map { -$0 }
        case let .math(f, x): return x.constantValue.map { ValueExpression.apply(f, $0) }
        case let .chain(first, steps):
            guard var value = first.constantValue else { return nil }
            for step in steps {
                guard let b = step.operand.constantValue else { return nil }
                value = ValueExpression.apply(step.op, value, b)
            }
            return value
        }
    }

    /// One arithmetic step under the expression rules (null as NaN; `x / 0` is null).
    @inline(__always)
    static func apply(_ op: Operator, _ a: Double, _ b: Double) -> Double {
        switch op {
        case .add: a + b
        case .subtract: a - b
        case .multiply: a * b
        case .divide: b == 0 ? .nan : a / b
        }
    }

    /// One math function under the expression rules.
    static func apply(_ f: MathFunction, _ x: Double) -> Double {
        switch f {
        case .abs: Swift.abs(x)
        case .sqrt: x.squareRoot()
        case .ln: MathFunctions.log(x)
        case .exp: MathFunctions.exp(x)
        }
    }
}

extension ValueExpression {
    /// `x + y`.
    public static func + (l: ValueExpression, r: ValueExpression) -> ValueExpression { .arithmetic(.add, l, r) }
    /// `x - y`.
    public static func - (l: ValueExpression, r: ValueExpression) -> ValueExpression { .arithmetic(.subtract, l, r) }
    /// `x * y`.
    public static func * (l: ValueExpression, r: ValueExpression) -> ValueExpression { .arithmetic(.multiply, l, r) }
    /// `x / y` (null where `y` is 0).
    public static func / (l: ValueExpression, r: ValueExpression) -> ValueExpression { .arithmetic(.divide, l, r) }
    /// `-x`.
    public static prefix func - (x: ValueExpression) -> ValueExpression { .negate(x) }

    /// `x + c`.
    public static func + (l: ValueExpression, r: Double) -> ValueExpression { l + .number(r) }
    /// `x - c`.
    public static func - (l: ValueExpression, r: Double) -> ValueExpression { l - .number(r) }
    /// `x * c`.
    public static func * (l: ValueExpression, r: Double) -> ValueExpression { l * .number(r) }
    /// `x / c`.
    public static func / (l: ValueExpression, r: Double) -> ValueExpression { l / .number(r) }
    /// `c + x`.
    public static func + (l: Double, r: ValueExpression) -> ValueExpression { .number(l) + r }
    /// `c - x`.
    public static func - (l: Double, r: ValueExpression) -> ValueExpression { .number(l) - r }
    /// `c * x`.
    public static func * (l: Double, r: ValueExpression) -> ValueExpression { .number(l) * r }
    /// `c / x`.
    public static func / (l: Double, r: ValueExpression) -> ValueExpression { .number(l) / r }

    /// `abs(x)`.
    public var abs: ValueExpression { .math(.abs, self) }
    /// `sqrt(x)`.
    public var sqrt: ValueExpression { .math(.sqrt, self) }
    /// `ln(x)`.
    public var ln: ValueExpression { .math(.ln, self) }
    /// `exp(x)`.
    public var exp: ValueExpression { .math(.exp, self) }

    /// `prev(x, n)`: the value `n` rows earlier in the same ticker.
    /// - Precondition: `n > 0`.
    public func prev(_ n: Int = 1) -> ValueExpression { series(.prev, n) }
    /// `change(x, n)` = `x - prev(x, n)`.
    public func change(_ n: Int = 1) -> ValueExpression { series(.change, n) }
    /// `pct_change(x, n)` = `x / prev(x, n) - 1`.
    public func pctChange(_ n: Int = 1) -> ValueExpression { series(.pctChange, n) }
    /// `mavg(x, n)`: mean of the last `n` rows.
    public func mavg(_ n: Int) -> ValueExpression { series(.mavg, n) }
    /// `msum(x, n)`: sum of the last `n` rows.
    public func msum(_ n: Int) -> ValueExpression { series(.msum, n) }
    /// `mmin(x, n)`: minimum of the last `n` rows.
    public func mmin(_ n: Int) -> ValueExpression { series(.mmin, n) }
    /// `mmax(x, n)`: maximum of the last `n` rows.
    public func mmax(_ n: Int) -> ValueExpression { series(.mmax, n) }
    /// `mdev(x, n)`: sample standard deviation of the last `n` rows.
    public func mdev(_ n: Int) -> ValueExpression { series(.mdev, n) }
    /// `ema(x, n)`: exponential average, α = 2/(n+1), seeded as TA-Lib's EMA.
    public func ema(_ n: Int) -> ValueExpression { series(.ema, n) }
    /// `rma(x, n)`: Wilder's smoothing, α = 1/n.
    public func rma(_ n: Int) -> ValueExpression { series(.rma, n) }
    /// `rsi(x, n)`: Wilder's relative strength index, as TA-Lib's RSI.
    public func rsi(_ n: Int) -> ValueExpression { series(.rsi, n) }
    /// `cumsum(x)`: sum of the non-null values so far in the ticker.
    public var cumsum: ValueExpression { .series(.cumsum, self, window: 1) }
    /// `cummax(x)`: largest non-null value so far in the ticker.
    public var cummax: ValueExpression { .series(.cummax, self, window: 1) }
    /// `cummin(x)`: smallest non-null value so far in the ticker.
    public var cummin: ValueExpression { .series(.cummin, self, window: 1) }

    private func series(_ f: SeriesFunction, _ n: Int) -> ValueExpression {
        precondition(n > 0, "a window must be a positive number of rows")
        return .series(f, self, window: n)
    }

    // MARK: Comparisons (to predicates)

    /// `x > y`.
    public static func > (l: ValueExpression, r: ValueExpression) -> RowPredicate { .comparing(l, r, .greater(than: 0)) }
    /// `x >= y`.
    public static func >= (l: ValueExpression, r: ValueExpression) -> RowPredicate { .comparing(l, r, .atLeast(0)) }
    /// `x < y`.
    public static func < (l: ValueExpression, r: ValueExpression) -> RowPredicate { .comparing(l, r, .less(than: 0)) }
    /// `x <= y`.
    public static func <= (l: ValueExpression, r: ValueExpression) -> RowPredicate { .comparing(l, r, .atMost(0)) }
    /// `x == y`.
    public static func == (l: ValueExpression, r: ValueExpression) -> RowPredicate { .comparing(l, r, .equal(to: 0)) }

    /// `x > c`.
    public static func > (l: ValueExpression, c: Double) -> RowPredicate { .compare(l, .greater(than: c)) }
    /// `x >= c`.
    public static func >= (l: ValueExpression, c: Double) -> RowPredicate { .compare(l, .atLeast(c)) }
    /// `x < c`.
    public static func < (l: ValueExpression, c: Double) -> RowPredicate { .compare(l, .less(than: c)) }
    /// `x <= c`.
    public static func <= (l: ValueExpression, c: Double) -> RowPredicate { .compare(l, .atMost(c)) }

    /// `lo < x < hi` (exclusive).
    public func isInside(_ lo: Double, _ hi: Double) -> RowPredicate { .compare(self, .open(lo, hi)) }
    /// `lo <= x <= hi` (inclusive).
    public func isBetween(_ lo: Double, _ hi: Double) -> RowPredicate { .compare(self, .closed(lo, hi)) }
}

extension RowPredicate {
    /// `l op r` for two expressions, with `op` given as bounds against 0 (see
    /// `RowPredicate.compareExpressions`). A constant side becomes the bound, so a plain column
    /// against a number stays on the range kernels.
    static func comparing(_ l: ValueExpression, _ r: ValueExpression, _ againstZero: RangeBounds<Double>) -> RowPredicate {
        if let c = r.constantValue, !c.isNaN {
            // x op c: keep the constant as the bound.
            return .compare(
                l,
                RangeBounds(
                    lower: againstZero.lower.map { _ in c }, lowerInclusive: againstZero.lowerInclusive,
                    upper: againstZero.upper.map { _ in c }, upperInclusive: againstZero.upperInclusive))
        }
        if let c = l.constantValue, !c.isNaN {
            // c op x is x (flipped op) c.
            return .compare(
                r,
                RangeBounds(
                    lower: againstZero.upper.map { _ in c }, lowerInclusive: againstZero.upperInclusive,
                    upper: againstZero.lower.map { _ in c }, upperInclusive: againstZero.lowerInclusive))
        }
        return .compareExpressions(l, r, againstZero)
    }
}
