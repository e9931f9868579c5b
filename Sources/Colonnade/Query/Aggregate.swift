/// An aggregate over the matching rows: `count(*)`, or count / sum / min / max / mean / first /
/// last / stddev of a column or of a value expression.
///
///     [.count, .sum("close"), .mean(Field("high") - Field("low")), .max(Field("close").pctChange())]
///     try Aggregate.parseList("count, avg(high - low), max(pct_change(close)), last(close)", table: table)
///
/// The argument of an aggregate is a `ValueExpression`. A NaN is null to `count(x)`, as to
/// `x is null`: `count(x)` counts the rows where `x is not null` holds, for a bare column as for
/// any expression (DuckDB counts a stored NaN; we do not). A bare column otherwise keeps its own
/// values: a stored NaN makes sum, mean and stddev NaN (as in DuckDB), while min, max, first and
/// last skip it. Any other expression follows the expression rules (`ValueExpression`): a NaN
/// there is null, and nulls are skipped.
public struct Aggregate: Sendable, Hashable, CustomStringConvertible {
    /// What to compute.
    public enum Function: String, Sendable, Hashable, CaseIterable {
        /// Rows (`count(*)`) or non-null values.
        case count
        /// The sum of the values (nil when there are none).
        case sum
        /// The smallest value.
        case min
        /// The largest value.
        case max
        /// sum / count.
        case mean
        /// The value of the group's earliest row by date that has one (ties: table order, so the
        /// first ticker's), like pandas' `first()`, which skips nulls.
        case first
        /// The value of the group's latest row by date that has one (ties: the last in table order).
        case last
        /// The sample standard deviation (divisor count − 1; nil for fewer than two values).
        case stddev
    }

    /// The function.
    public var function: Function
    /// The argument, nil for `count(*)`.
    public var argument: ValueExpression?

    /// The argument's column when it is a bare column (identifier or source name), else nil.
    /// Setting it replaces the argument with that column.
    public var column: String? {
        get {
            if case .column(let name)? = argument { return name }
            return nil
        }
        set { argument = newValue.map(ValueExpression.column) }
    }

    /// An aggregate of a column, or `count(*)` when `column` is nil.
    public init(_ function: Function, _ column: String? = nil) {
        self.function = function
        self.argument = column.map(ValueExpression.column)
    }

    /// An aggregate of a value expression.
    public init(_ function: Function, _ argument: ValueExpression) {
        self.function = function
        self.argument = argument
    }

    /// `count(*)`: matching rows.
    public static var count: Aggregate { Aggregate(.count) }
    /// `count(column)`: matching rows where the column is not null (a stored NaN is null here).
    public static func count(_ column: String) -> Aggregate { Aggregate(.count, column) }
    /// The sum of a column over matching rows (nulls skipped).
    public static func sum(_ column: String) -> Aggregate { Aggregate(.sum, column) }
    /// The minimum (nulls and NaN skipped).
    public static func min(_ column: String) -> Aggregate { Aggregate(.min, column) }
    /// The maximum (nulls and NaN skipped).
    public static func max(_ column: String) -> Aggregate { Aggregate(.max, column) }
    /// The mean: sum / count of non-null values.
    public static func mean(_ column: String) -> Aggregate { Aggregate(.mean, column) }
    /// The earliest value by date (nulls and NaN skipped).
    public static func first(_ column: String) -> Aggregate { Aggregate(.first, column) }
    /// The latest value by date (nulls and NaN skipped).
    public static func last(_ column: String) -> Aggregate { Aggregate(.last, column) }
    /// The sample standard deviation.
    public static func stddev(_ column: String) -> Aggregate { Aggregate(.stddev, column) }

    /// `count(x)` of an expression: rows where it is not null.
    public static func count(_ x: ValueExpression) -> Aggregate { Aggregate(.count, x) }
    /// `sum(x)` of an expression.
    public static func sum(_ x: ValueExpression) -> Aggregate { Aggregate(.sum, x) }
    /// `min(x)` of an expression.
    public static func min(_ x: ValueExpression) -> Aggregate { Aggregate(.min, x) }
    /// `max(x)` of an expression.
    public static func max(_ x: ValueExpression) -> Aggregate { Aggregate(.max, x) }
    /// `avg(x)` of an expression.
    public static func mean(_ x: ValueExpression) -> Aggregate { Aggregate(.mean, x) }
    /// `first(x)` of an expression.
    public static func first(_ x: ValueExpression) -> Aggregate { Aggregate(.first, x) }
    /// `last(x)` of an expression.
    public static func last(_ x: ValueExpression) -> Aggregate { Aggregate(.last, x) }
    /// `stddev(x)` of an expression.
    public static func stddev(_ x: ValueExpression) -> Aggregate { Aggregate(.stddev, x) }

    /// `count(*)`, `sum(close)`, `mean(high - low)`, …
    public var description: String {
        switch argument {
        case nil: "\(function.rawValue)(*)"
        case .column(let name)?: "\(function.rawValue)(\(name))"
        case let e?: "\(function.rawValue)(\(e))"
        }
    }

    /// Parses a list like `count,sum(close),min(low),max(high),avg(volume)` (`avg` is `mean`;
    /// a bare `count` is `count(*)`), with bare columns as arguments.
    /// - Throws: `QueryError` with the position; also for an argument that is an expression, which
    ///   needs the table's columns (`parseList(_:table:)`).
    public static func parseList(_ text: String) throws(QueryError) -> [Aggregate] {
        try parseList(text, parser: nil)
    }

    /// Parses a list of aggregates whose arguments may be value expressions:
    /// `count, avg(high - low), max(pct_change(close)), first(close), stddev(close)`.
    /// Commas inside parentheses or quotes belong to the argument.
    /// - Throws: `QueryError` positioned in `text` (line 1).
    public static func parseList(_ text: String, table: QuoteTable) throws(QueryError) -> [Aggregate] {
        try parseList(text, parser: QueryParser(table: table))
    }

    private static func parseList(_ text: String, parser: QueryParser?) throws(QueryError) -> [Aggregate] {
        var out = [Aggregate]()
        for (raw, offset) in splitTopLevel(text) {
            let item = raw.trimmingSpaces()
            let leading = raw.utf8.count - raw.drop { $0 == " " || $0 == "\t" }.utf8.count
            let position = offset + leading + 1
            guard !item.isEmpty else { throw QueryError("empty aggregate in list", line: 1, column: offset + 1, offset: offset) }
            var name = item, argumentText: String? = nil, argumentOffset = 0
            if let open = item.firstIndex(of: "(") {
                guard item.hasSuffix(")") else {
                    throw QueryError("missing ')' in aggregate '\(item)'", line: 1, column: position, offset: position - 1)
                }
                name = String(item[..<open]).trimmingSpaces()
                let innerRaw = item[item.index(after: open) ..< item.index(before: item.endIndex)]
                let inner = innerRaw.trimmingSpaces()
                argumentOffset = position - 1 + item.utf8.distance(from: item.startIndex, to: open) + 1
                    + (innerRaw.utf8.count - innerRaw.drop { $0 == " " || $0 == "\t" }.utf8.count)
                argumentText = inner == "*" ? nil : inner
            }
            let lowered = name.lowercased()
            let function: Function
            switch lowered {
            case "count": function = .count
            case "sum": function = .sum
            case "min": function = .min
            case "max": function = .max
            case "mean", "avg", "average": function = .mean
            case "first": function = .first
            case "last": function = .last
            case "stddev", "std", "stdev": function = .stddev
            default:
                throw QueryError("unknown aggregate '\(name)'", kind: .unknownAggregate, line: 1, column: position, offset: position - 1,
                                 suggestions: Suggestions.closest(to: lowered, among: ["count", "sum", "min", "max", "avg", "mean",
                                                                                       "first", "last", "stddev"]))
            }
            guard let argumentText, !argumentText.isEmpty else {
                if function != .count {
                    throw QueryError("aggregate '\(lowered)' needs a column or expression, as in \(lowered)(close)",
                                     line: 1, column: position, offset: position - 1)
                }
                out.append(Aggregate(.count))
                continue
            }
            out.append(Aggregate(function, try argument(argumentText, at: argumentOffset, parser: parser)))
        }
        return out
    }

    /// A bare identifier or quoted source name is a column; anything else an expression.
    private static func argument(_ text: String, at offset: Int, parser: QueryParser?) throws(QueryError) -> ValueExpression {
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2, !text.dropFirst().dropLast().contains("\"") {
            return .column(String(text.dropFirst().dropLast()))
        }
        if let first = text.first, first.isLetter || first == "_",
           text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" }) {
            return .column(text)
        }
        guard let parser else {
            throw QueryError("the aggregate argument '\(text)' is an expression; parsing it needs the table's columns",
                             line: 1, column: offset + 1, offset: offset)
        }
        do {
            return try parser.parseValue(text)
        } catch {
            var e = error
            e.offset = e.offset.map { $0 + offset }
            if e.line == 1 { e.column = e.column.map { $0 + offset } }
            throw e
        }
    }

    /// The comma-separated items of `text` with their UTF-8 offsets; commas inside parentheses,
    /// double quotes or single quotes do not separate.
    static func splitTopLevel(_ text: String) -> [(Substring, Int)] {
        var out = [(Substring, Int)]()
        var depth = 0, quote: Character? = nil
        var start = text.startIndex, startOffset = 0, offset = 0
        for i in text.indices {
            let c = text[i]
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "(" {
                depth += 1
            } else if c == ")" {
                depth = Swift.max(0, depth - 1)
            } else if c == "," && depth == 0 {
                out.append((text[start ..< i], startOffset))
                start = text.index(after: i)
                startOffset = offset + 1
            }
            offset += c.utf8.count
        }
        out.append((text[start...], startOffset))
        return out
    }
}

extension StringProtocol {
    func trimmingSpaces() -> String {
        var s = Substring(self)
        while let f = s.first, f == " " || f == "\t" { s = s.dropFirst() }
        while let l = s.last, l == " " || l == "\t" { s = s.dropLast() }
        return String(s)
    }
}
