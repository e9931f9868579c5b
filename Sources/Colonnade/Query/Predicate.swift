/// A filter over a table's rows, as a tree: column ranges, date ranges and ticker sets combined
/// with `and`, `or` and `not`.
///
/// Build one from text with `QueryParser` (`try table.select(where: "80 < high < 83")`) or in
/// Swift without strings:
///
///     let p = Field("high").isInside(80, 83) && Field("low").isInside(78, 82)
///           && .tickers(["FDX", "AAPL"]) && Field.date >= Day(2005, 1, 1)
///     let trend = Field("close") > Field("close").mavg(50) && Field("close").mavg(50) > Field("close").mavg(200)
///
/// Truth is SQL's three-valued logic: a comparison with a null or NaN is *unknown*, unknown never
/// matches, and `not unknown` is still unknown — so `not close > 60` does not match a row whose
/// close is null. `and` and `or` follow SQL's truth tables.
public indirect enum RowPredicate: Sendable, Hashable {
    /// A value column (by identifier or source name) within bounds.
    case range(column: String, bounds: RangeBounds<Double>)
    /// A value column compared exactly with integers a Double cannot hold (the parser's reading of
    /// `volume > 9007199254740993`): an Int64 column compares as Int64; Float64, Float32 and Int32
    /// columns compare their values with the integers as real numbers.
    case integerRange(column: String, bounds: RangeBounds<Int64>)
    /// A computed value within bounds, e.g. `(high - low) / close > 0.05`. A null or NaN value
    /// never matches.
    case compare(ValueExpression, RangeBounds<Double>)
    /// One expression against another, e.g. `close > mavg(close, 50)`: the bounds apply to a number
    /// that is 0 where the two are equal (equal infinities included) and has the sign of
    /// `left - right` otherwise, so `.greater(than: 0)` is `left > right`, `.atMost(0)` is
    /// `left <= right` and `.equal(to: 0)` is `left == right`. A null or NaN on either side never
    /// matches.
    case compareExpressions(ValueExpression, ValueExpression, RangeBounds<Double>)
    /// The row's date (days since 1970-01-01) within bounds.
    case dates(RangeBounds<Int32>)
    /// The row's ticker is one of these symbols.
    case tickers([String])
    /// Every child holds.
    case and([RowPredicate])
    /// At least one child holds.
    case or([RowPredicate])
    /// The child is false (not unknown).
    case not(RowPredicate)
    /// Always true (every row) or always false (no row).
    case constant(Bool)
}

extension RowPredicate {
    /// Both hold.
    public static func && (lhs: RowPredicate, rhs: RowPredicate) -> RowPredicate {
        switch (lhs, rhs) {
        case let (.and(a), .and(b)): .and(a + b)
        case let (.and(a), b): .and(a + [b])
        case let (a, .and(b)): .and([a] + b)
        default: .and([lhs, rhs])
        }
    }

    /// Either holds.
    public static func || (lhs: RowPredicate, rhs: RowPredicate) -> RowPredicate {
        switch (lhs, rhs) {
        case let (.or(a), .or(b)): .or(a + b)
        case let (.or(a), b): .or(a + [b])
        case let (a, .or(b)): .or([a] + b)
        default: .or([lhs, rhs])
        }
    }

    /// The negation (three-valued: unknown stays unknown).
    public static prefix func ! (p: RowPredicate) -> RowPredicate { .not(p) }
}

/// A column named in a Swift-built predicate.
///
///     Field("close") > 60                  // .range(column: "close", bounds: .greater(than: 60))
///     Field("high").isInside(80, 83)       // 80 < high < 83
///     Field("low").isBetween(78, 82)       // 78 <= low <= 82
///     Field.date.isBetween(Day(2005, 1, 1), Day(2014, 5, 10))
public struct Field: Sendable, Hashable {
    /// The column's identifier or source name (`date` for the date column).
    public var name: String

    /// A column by identifier (`adj_close`) or source name (`Adj. Close`).
    public init(_ name: String) { self.name = name }

    /// The date column, compared with days (a ``DateField``: comparing a value column with a
    /// `Day`, or the date column with a number, does not compile).
    public static var date: DateField { DateField() }

    /// `lo < x < hi` (exclusive, as the seed tutorials' filter was).
    public func isInside(_ lo: Double, _ hi: Double) -> RowPredicate { .range(column: name, bounds: .open(lo, hi)) }
    /// `lo <= x <= hi` (inclusive, like SQL's between).
    public func isBetween(_ lo: Double, _ hi: Double) -> RowPredicate { .range(column: name, bounds: .closed(lo, hi)) }

    /// `field > v`.
    public static func > (f: Field, v: Double) -> RowPredicate { .range(column: f.name, bounds: .greater(than: v)) }
    /// `field >= v`.
    public static func >= (f: Field, v: Double) -> RowPredicate { .range(column: f.name, bounds: .atLeast(v)) }
    /// `field < v`.
    public static func < (f: Field, v: Double) -> RowPredicate { .range(column: f.name, bounds: .less(than: v)) }
    /// `field <= v`.
    public static func <= (f: Field, v: Double) -> RowPredicate { .range(column: f.name, bounds: .atMost(v)) }
    /// `field == v`.
    public static func == (f: Field, v: Double) -> RowPredicate { .range(column: f.name, bounds: .equal(to: v)) }
}

/// The date column in a Swift-built predicate: compared with `Day`s only, so a date filter is
/// always asked for by name (`Field.date >= Day(2005, 1, 1)`) and a value column compared with a
/// day (`Field("close") > Day(…)`) is a compile error rather than a silent date filter.
public struct DateField: Sendable, Hashable {
    /// The date column.
    public init() {}

    /// `lo <= date <= hi`.
    public func isBetween(_ lo: Day, _ hi: Day) -> RowPredicate { .dates(.closed(lo.daysSinceEpoch, hi.daysSinceEpoch)) }

    /// `date > d`.
    public static func > (f: DateField, d: Day) -> RowPredicate { .dates(.greater(than: d.daysSinceEpoch)) }
    /// `date >= d`.
    public static func >= (f: DateField, d: Day) -> RowPredicate { .dates(.atLeast(d.daysSinceEpoch)) }
    /// `date < d`.
    public static func < (f: DateField, d: Day) -> RowPredicate { .dates(.less(than: d.daysSinceEpoch)) }
    /// `date <= d`.
    public static func <= (f: DateField, d: Day) -> RowPredicate { .dates(.atMost(d.daysSinceEpoch)) }
    /// `date == d`.
    public static func == (f: DateField, d: Day) -> RowPredicate { .dates(.equal(to: d.daysSinceEpoch)) }
}
