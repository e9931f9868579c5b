// Field as a value in expressions: arithmetic, series functions and comparisons with other
// expressions, so screens can be built in Swift without strings:
//
//     Field("close") > Field("close").mavg(50)
//     Field("open") > 1.03 * Field("close").prev()
//     (Field("high") - Field("low")) / Field("close") > 0.05

extension Field {
    /// The column as an expression.
    public var expression: ValueExpression { .column(name) }

    /// `prev(x, n)`: the value `n` rows earlier in the same ticker.
    public func prev(_ n: Int = 1) -> ValueExpression { expression.prev(n) }
    /// `change(x, n)` = `x - prev(x, n)`.
    public func change(_ n: Int = 1) -> ValueExpression { expression.change(n) }
    /// `pct_change(x, n)` = `x / prev(x, n) - 1`.
    public func pctChange(_ n: Int = 1) -> ValueExpression { expression.pctChange(n) }
    /// `mavg(x, n)`.
    public func mavg(_ n: Int) -> ValueExpression { expression.mavg(n) }
    /// `msum(x, n)`.
    public func msum(_ n: Int) -> ValueExpression { expression.msum(n) }
    /// `mmin(x, n)`.
    public func mmin(_ n: Int) -> ValueExpression { expression.mmin(n) }
    /// `mmax(x, n)`.
    public func mmax(_ n: Int) -> ValueExpression { expression.mmax(n) }
    /// `mdev(x, n)`.
    public func mdev(_ n: Int) -> ValueExpression { expression.mdev(n) }
    /// `ema(x, n)`.
    public func ema(_ n: Int) -> ValueExpression { expression.ema(n) }
    /// `rma(x, n)`.
    public func rma(_ n: Int) -> ValueExpression { expression.rma(n) }
    /// `rsi(x, n)`.
    public func rsi(_ n: Int) -> ValueExpression { expression.rsi(n) }
    /// `cumsum(x)`.
    public var cumsum: ValueExpression { expression.cumsum }
    /// `cummax(x)`.
    public var cummax: ValueExpression { expression.cummax }
    /// `cummin(x)`.
    public var cummin: ValueExpression { expression.cummin }

    /// `x + y`.
    public static func + (l: Field, r: Field) -> ValueExpression { l.expression + r.expression }
    /// `x - y`.
    public static func - (l: Field, r: Field) -> ValueExpression { l.expression - r.expression }
    /// `x * y`.
    public static func * (l: Field, r: Field) -> ValueExpression { l.expression * r.expression }
    /// `x / y`.
    public static func / (l: Field, r: Field) -> ValueExpression { l.expression / r.expression }
    /// `x + y`.
    public static func + (l: Field, r: ValueExpression) -> ValueExpression { l.expression + r }
    /// `x - y`.
    public static func - (l: Field, r: ValueExpression) -> ValueExpression { l.expression - r }
    /// `x * y`.
    public static func * (l: Field, r: ValueExpression) -> ValueExpression { l.expression * r }
    /// `x / y`.
    public static func / (l: Field, r: ValueExpression) -> ValueExpression { l.expression / r }
    /// `x + y`.
    public static func + (l: ValueExpression, r: Field) -> ValueExpression { l + r.expression }
    /// `x - y`.
    public static func - (l: ValueExpression, r: Field) -> ValueExpression { l - r.expression }
    /// `x * y`.
    public static func * (l: ValueExpression, r: Field) -> ValueExpression { l * r.expression }
    /// `x / y`.
    public static func / (l: ValueExpression, r: Field) -> ValueExpression { l / r.expression }
    /// `c * x`.
    public static func * (l: Double, r: Field) -> ValueExpression { .number(l) * r.expression }
    /// `x * c`.
    public static func * (l: Field, r: Double) -> ValueExpression { l.expression * .number(r) }
    /// `x / c`.
    public static func / (l: Field, r: Double) -> ValueExpression { l.expression / .number(r) }
    /// `x + c`.
    public static func + (l: Field, r: Double) -> ValueExpression { l.expression + .number(r) }
    /// `x - c`.
    public static func - (l: Field, r: Double) -> ValueExpression { l.expression - .number(r) }

    /// `x > y`.
    public static func > (l: Field, r: ValueExpression) -> RowPredicate { l.expression > r }
    /// `x >= y`.
    public static func >= (l: Field, r: ValueExpression) -> RowPredicate { l.expression >= r }
    /// `x < y`.
    public static func < (l: Field, r: ValueExpression) -> RowPredicate { l.expression < r }
    /// `x <= y`.
    public static func <= (l: Field, r: ValueExpression) -> RowPredicate { l.expression <= r }
    /// `x > y`.
    public static func > (l: ValueExpression, r: Field) -> RowPredicate { l > r.expression }
    /// `x >= y`.
    public static func >= (l: ValueExpression, r: Field) -> RowPredicate { l >= r.expression }
    /// `x < y`.
    public static func < (l: ValueExpression, r: Field) -> RowPredicate { l < r.expression }
    /// `x <= y`.
    public static func <= (l: ValueExpression, r: Field) -> RowPredicate { l <= r.expression }
    /// `x > y` for two columns.
    public static func > (l: Field, r: Field) -> RowPredicate { l.expression > r.expression }
    /// `x >= y` for two columns.
    public static func >= (l: Field, r: Field) -> RowPredicate { l.expression >= r.expression }
    /// `x < y` for two columns.
    public static func < (l: Field, r: Field) -> RowPredicate { l.expression < r.expression }
    /// `x <= y` for two columns.
    public static func <= (l: Field, r: Field) -> RowPredicate { l.expression <= r.expression }
}
