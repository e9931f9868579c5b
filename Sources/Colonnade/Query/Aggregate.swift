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
        /// The median: `quantile(x, 0.5)`.
        case median
        /// `quantile(x, q)`: linear interpolation between the closest ranks (DuckDB's
        /// `quantile_cont`, NumPy's default): position `q · (count − 1)` in the sorted values.
        case quantile
        /// `corr(x, y)`: Pearson's correlation over the rows where both are known; nil with fewer
        /// than two pairs or a zero variance (a side of equal values, one repeated infinity
        /// included); NaN where a value is otherwise infinite.
        case corr

        /// The name in the query language (`avg` for the mean).
        public var label: String { self == .mean ? "avg" : rawValue }
    }

    /// The function.
    public var function: Function
    /// The argument, nil for `count(*)`.
    public var argument: ValueExpression?
    /// The second argument of `corr(x, y)`.
    public var second: ValueExpression?
    /// `q` of `quantile(x, q)`, in 0...1.
    public var parameter: Double?
    /// The output name given with `as` (`avg(volume) as v`), nil for the default (`description`).
    public var name: String?

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
    /// `median(x)`.
    public static func median(_ x: ValueExpression) -> Aggregate { Aggregate(.median, x) }
    /// `quantile(x, q)` (linear interpolation, DuckDB's `quantile_cont`).
    /// - Precondition: `0 <= q <= 1`.
    public static func quantile(_ x: ValueExpression, _ q: Double) -> Aggregate {
        precondition(q >= 0 && q <= 1, "a quantile lies in 0...1")
        var a = Aggregate(.quantile, x)
        a.parameter = q
        return a
    }
    /// `corr(x, y)`: Pearson's correlation.
    public static func corr(_ x: ValueExpression, _ y: ValueExpression) -> Aggregate {
        var a = Aggregate(.corr, x)
        a.second = y
        return a
    }

    /// The same aggregate, output under `name` (`as`).
    public func named(_ name: String) -> Aggregate {
        var a = self
        a.name = name
        return a
    }

    /// The output name: the `as` name, else the text (`avg(volume)`).
    public var outputName: String { name ?? text }

    /// `count(*)`, `sum(close)`, `avg(high - low)`, `quantile(close, 0.9)`, `avg(volume) as v`, …
    public var description: String { name.map { text + " as " + $0 } ?? text }

    /// The aggregate without its `as` name.
    var text: String {
        var args: [String]
        switch argument {
        case nil: args = ["*"]
        case .column(let name)?: args = [name]
        case let e?: args = [e.description]
        }
        if let second { args.append(second.description) }
        if let parameter {
            args.append(parameter == parameter.rounded() && Swift.abs(parameter) < 1e15 ? String(Int64(parameter)) : "\(parameter)")
        }
        return "\(function.label)(\(args.joined(separator: ", ")))"
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
            var item = raw.trimmingSpaces()
            let leading = raw.utf8.count - raw.drop { $0 == " " || $0 == "\t" }.utf8.count
            let position = offset + leading + 1
            guard !item.isEmpty else { throw QueryError("empty aggregate in list", line: 1, column: offset + 1, offset: offset) }
            // `… as name`: the last top-level ` as ` (outside parentheses and quotes).
            var outputName: String?
            if let (body, name, nameOffset) = splitAs(item) {
                guard Aggregate.isPlainName(name) else {
                    throw QueryError(
                        "'\(name)' cannot name an aggregate; a name is letters, digits and '_', not starting with a digit",
                        line: 1, column: position + nameOffset, offset: position - 1 + nameOffset)
                }
                item = body
                outputName = name
            }
            var name = item, argumentText: String? = nil, argumentOffset = 0
            if let open = item.firstIndex(of: "(") {
                guard item.hasSuffix(")") else {
                    throw QueryError("missing ')' in aggregate '\(item)'", line: 1, column: position, offset: position - 1)
                }
                name = String(item[..<open]).trimmingSpaces()
                let innerRaw = item[item.index(after: open) ..< item.index(before: item.endIndex)]
                let inner = innerRaw.trimmingSpaces()
                argumentOffset =
                    position - 1 + item.utf8.distance(from: item.startIndex, to: open) + 1
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
            case "median": function = .median
            case "quantile": function = .quantile
            case "corr": function = .corr
            default:
                throw QueryError(
                    "unknown aggregate '\(name)'", kind: .unknownAggregate, line: 1, column: position, offset: position - 1,
                    suggestions: Suggestions.closest(
                        to: lowered,
                        among: [
                            "count", "sum", "min", "max", "avg", "mean",
                            "first", "last", "stddev", "median", "quantile", "corr",
                        ]))
            }
            guard let argumentText, !argumentText.isEmpty else {
                if function != .count {
                    throw QueryError(
                        "aggregate '\(lowered)' needs a column or expression, as in \(lowered)(close)",
                        line: 1, column: position, offset: position - 1)
                }
                out.append(Aggregate(.count).named(outputName))
                continue
            }
            // The arguments: one, or two for quantile (x, q) and corr (x, y).
            let parts = splitTopLevel(argumentText)
            let wanted = function == .quantile || function == .corr ? 2 : 1
            guard parts.count == wanted else {
                let shape = function == .quantile ? "quantile(x, q)" : function == .corr ? "corr(x, y)" : "\(lowered)(x)"
                throw QueryError(
                    "aggregate '\(lowered)' takes \(wanted == 1 ? "one argument" : "two arguments"), as in \(shape)",
                    line: 1, column: position, offset: position - 1)
            }
            func part(_ k: Int) -> (String, Int) {
                let (raw, o) = parts[k]
                let lead = raw.utf8.count - raw.drop { $0 == " " || $0 == "\t" }.utf8.count
                return (raw.trimmingSpaces(), argumentOffset + o + lead)
            }
            let (xText, xOffset) = part(0)
            var aggregate = Aggregate(function, try argument(xText, at: xOffset, parser: parser))
            if function == .corr {
                let (yText, yOffset) = part(1)
                aggregate.second = try argument(yText, at: yOffset, parser: parser)
            } else if function == .quantile {
                let (qText, qOffset) = part(1)
                guard let q = Double(qText), q >= 0, q <= 1 else {
                    throw QueryError(
                        "the q of quantile must be a number from 0 to 1, not '\(qText)'", line: 1, column: qOffset + 1, offset: qOffset)
                }
                aggregate.parameter = q
            }
            out.append(aggregate.named(outputName))
        }
        return out
    }

    /// `self` named `name`, or unchanged when `name` is nil.
    func named(_ name: String?) -> Aggregate { name.map { named($0) } ?? self }

    /// Whether `name` can name an aggregate's output: an identifier.
    static func isPlainName(_ name: String) -> Bool {
        guard let first = name.first, first.isLetter || first == "_" else { return false }
        return name.allSatisfy { $0.isLetter || $0.isNumber || $0 == "_" }
    }

    /// `body as name` split at the last ` as ` outside parentheses and quotes, with the name's
    /// UTF-8 offset in `item`; nil when there is none.
    static func splitAs(_ item: String) -> (String, String, Int)? {
        var depth = 0, quote: Character? = nil, offset = 0
        var found: (String.Index, Int)?
        let chars = Array(item.indices)
        for (k, i) in chars.enumerated() {
            let c = item[i]
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "\"" || c == "'" {
                quote = c
            } else if c == "(" {
                depth += 1
            } else if c == ")" {
                depth = Swift.max(0, depth - 1)
            } else if depth == 0, c == " " || c == "\t", k + 3 < chars.count,
                item[chars[k + 1]].lowercased() == "a", item[chars[k + 2]].lowercased() == "s",
                item[chars[k + 3]] == " " || item[chars[k + 3]] == "\t"
            {
                found = (i, offset)
            }
            offset += c.utf8.count
        }
        guard let (at, atOffset) = found else { return nil }
        let body = String(item[..<at]).trimmingSpaces()
        let rest = item[item.index(at, offsetBy: 4)...]
        let name = rest.trimmingSpaces()
        let nameOffset = atOffset + 4 + (rest.utf8.count - rest.drop { $0 == " " || $0 == "\t" }.utf8.count)
        guard !body.isEmpty else { return nil }
        return (body, name, nameOffset)
    }

    /// A bare identifier or quoted source name is a column; anything else an expression.
    private static func argument(_ text: String, at offset: Int, parser: QueryParser?) throws(QueryError) -> ValueExpression {
        if text.hasPrefix("\""), text.hasSuffix("\""), text.count >= 2, !text.dropFirst().dropLast().contains("\"") {
            return .column(String(text.dropFirst().dropLast()))
        }
        if let first = text.first, first.isLetter || first == "_",
            text.allSatisfy({ $0.isLetter || $0.isNumber || $0 == "_" })
        {
            return .column(text)
        }
        guard let parser else {
            throw QueryError(
                "the aggregate argument '\(text)' is an expression; parsing it needs the table's columns",
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
