import Foundation

/// Conditionals and null functions of the expression language.
///
///     if(close > prev(close), volume, 0)
///     case when close > open then 1 when close < open then -1 else 0 end
///     greatest(high - low, abs(high - prev(close)), abs(low - prev(close)))   // true range
///     coalesce(adj_close, close)
///     close is null, volume is not null
///
/// The NaN rule, once: within an expression a NaN is null. So `x is null` holds for a NaN as for
/// a missing value, agreeing with `count(x)`, which counts neither. `greatest` and `least` are
/// null when any argument is null (like arithmetic; DuckDB, Spark and Polars ignore nulls there
/// instead). A condition that is unknown (it compares a null) takes the `else` branch.
extension ValueExpression {
    /// Functions of several arguments, row by row.
    public enum RowFunction: String, Sendable, Hashable, CaseIterable {
        /// The largest argument; null when any is null.
        case greatest
        /// The smallest argument; null when any is null.
        case least
        /// The first non-null argument; null when all are.
        case coalesce
    }

    /// One `when condition then value` of a conditional.
    public struct Branch: Sendable, Hashable {
        /// The condition; only a true one selects `value` (not a false or an unknown one).
        public var condition: RowPredicate
        /// The value where the condition holds.
        public var value: ValueExpression

        /// `when condition then value`.
        public init(_ condition: RowPredicate, _ value: ValueExpression) {
            self.condition = condition
            self.value = value
        }
    }

    /// `f(values…)` under the expression rules (NaN is null).
    static func apply(_ f: RowFunction, _ values: [Double]) -> Double {
        guard var result = values.first else { return .nan }
        for v in values.dropFirst() {
            switch f {
            case .greatest: result = result.isNaN || v.isNaN ? .nan : Swift.max(result, v)
            case .least: result = result.isNaN || v.isNaN ? .nan : Swift.min(result, v)
            case .coalesce: if result.isNaN { result = v }
            }
        }
        return result
    }

    /// `if(c, a, b)`.
    public static func `if`(_ condition: RowPredicate, _ then: ValueExpression, _ otherwise: ValueExpression) -> ValueExpression {
        .conditional([Branch(condition, then)], otherwise: otherwise)
    }

    /// `greatest(a, b, …)`.
    public static func greatest(_ xs: ValueExpression...) -> ValueExpression { .function(.greatest, xs) }
    /// `least(a, b, …)`.
    public static func least(_ xs: ValueExpression...) -> ValueExpression { .function(.least, xs) }
    /// `coalesce(a, b, …)`.
    public static func coalesce(_ xs: ValueExpression...) -> ValueExpression { .function(.coalesce, xs) }

    /// `x is null` (a NaN is null).
    public var isNull: RowPredicate { .compare(.nullTest(self), .equal(to: 1)) }
    /// `x is not null`.
    public var isNotNull: RowPredicate { .compare(.nullTest(self), .equal(to: 0)) }

    /// The text of a function, conditional or null test (see `description`).
    func conditionalText(depth: Int) -> String {
        switch self {
        case let .function(f, xs):
            return "\(f.rawValue)(" + xs.map { $0.description }.joined(separator: ", ") + ")"
        case let .conditional(branches, otherwise):
            if branches.count == 1, let otherwise {
                return "if(\(branches[0].condition.expressionText), \(branches[0].value), \(otherwise))"
            }
            var s = "case"
            for b in branches { s += " when \(b.condition.expressionText) then \(b.value)" }
            if let otherwise { s += " else \(otherwise)" }
            return s + " end"
        case .nullTest(let x):
            return "if(\(x) is null, 1, 0)"
        default:
            return description
        }
    }
}

extension Field {
    /// `if(c, a, b)`.
    public static func `if`(_ condition: RowPredicate, _ then: ValueExpression, _ otherwise: ValueExpression) -> ValueExpression {
        .conditional([ValueExpression.Branch(condition, then)], otherwise: otherwise)
    }
    /// `x is null`.
    public var isNull: RowPredicate { expression.isNull }
    /// `x is not null`.
    public var isNotNull: RowPredicate { expression.isNotNull }
}

extension RowPredicate {
    /// The value expressions the predicate compares (for the columns it reads).
    var valueExpressions: [ValueExpression] {
        switch self {
        case .range(let c, _), .integerRange(let c, _): [.column(c)]
        case .compare(let e, _): [e]
        case let .compareExpressions(l, r, _): [l, r]
        case .dates, .tickers, .constant: []
        case .not(let p): p.valueExpressions
        case .and(let ps), .or(let ps): ps.flatMap(\.valueExpressions)
        }
    }

    /// A condition that is unknown on every row (a comparison of a null).
    static let unknownText = "(if(true, 0 / 0, 0) > 0)"

    /// The predicate in the query language, for printing a conditional (parses back to the same rows).
    var expressionText: String {
        func bound(_ x: String, _ b: RangeBounds<Double>) -> String {
            if let lo = b.lower, let hi = b.upper, lo == hi, b.lowerInclusive, b.upperInclusive { return "\(x) = \(lo)" }
            var parts = [String]()
            if let lo = b.lower { parts.append("\(x) \(b.lowerInclusive ? ">=" : ">") \(lo)") }
            if let hi = b.upper { parts.append("\(x) \(b.upperInclusive ? "<=" : "<") \(hi)") }
            return parts.isEmpty ? "\(x) = \(x)" : parts.joined(separator: " and ")
        }
        switch self {
        case let .range(c, b): return "(" + bound(ValueExpression.quotedName(c), b) + ")"
        case let .integerRange(c, b):
            return "("
                + bound(
                    ValueExpression.quotedName(c),
                    RangeBounds(
                        lower: b.lower.map(Double.init), lowerInclusive: b.lowerInclusive,
                        upper: b.upper.map(Double.init), upperInclusive: b.upperInclusive)) + ")"
        case let .compare(.nullTest(x), b) where b.lower == b.upper && (b.lower == 1 || b.lower == 0):
            return "(\(x) is \(b.lower == 1 ? "" : "not ")null)"
        case let .compare(e, b) where e.constantValue != nil:
            // The parser takes no comparison of two numbers: its truth, or an unknown one.
            let c = e.constantValue ?? .nan
            return c.isNaN ? RowPredicate.unknownText : b.matches(c) ? "true" : "false"
        case let .compare(e, b): return "(" + bound("\(e)", b) + ")"
        case let .compareExpressions(l, r, b) where l.constantValue != nil && r.constantValue != nil:
            let x = l.constantValue ?? .nan, y = r.constantValue ?? .nan
            if x.isNaN || y.isNaN { return RowPredicate.unknownText }
            return b.matches(x == y ? 0 : x - y) ? "true" : "false"
        case let .compareExpressions(l, r, b):
            let op: String
            switch (b.lower != nil, b.upper != nil, b.lowerInclusive, b.upperInclusive) {
            case (true, true, _, _): op = "="
            case (true, false, true, _): op = ">="
            case (true, false, false, _): op = ">"
            case (false, true, _, true): op = "<="
            default: op = "<"
            }
            return "(\(l) \(op) \(r))"
        case let .dates(b):
            var parts = [String]()
            if let lo = b.lower { parts.append("date \(b.lowerInclusive ? ">=" : ">") \(Day(daysSinceEpoch: lo))") }
            if let hi = b.upper { parts.append("date \(b.upperInclusive ? "<=" : "<") \(Day(daysSinceEpoch: hi))") }
            return "(" + (parts.isEmpty ? "true" : parts.joined(separator: " and ")) + ")"
        case let .tickers(symbols):
            return "(ticker in (" + symbols.map { "'" + $0.replacingOccurrences(of: "'", with: "''") + "'" }.joined(separator: ", ") + "))"
        case .constant(let v): return v ? "true" : "false"
        case .not(let p): return "not " + p.expressionText
        case .and(let ps): return "(" + ps.map(\.expressionText).joined(separator: " and ") + ")"
        case .or(let ps): return "(" + ps.map(\.expressionText).joined(separator: " or ") + ")"
        }
    }
}
