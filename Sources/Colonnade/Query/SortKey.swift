/// One key to order rows by: a value expression, the date or the ticker symbol, ascending or
/// descending. Null and NaN values sort last in either direction; rows equal on every key keep
/// table order (ticker, then date).
///
///     try selection.rows(sortedBy: [SortKey(Field("close").pctChange(), descending: true)], limit: 10)
public struct SortKey: Sendable, Equatable {
    /// What is compared.
    public enum Value: Sendable, Equatable {
        case expression(ValueExpression)
        case date
        case ticker
    }

    public var value: Value
    public var descending: Bool

    public init(_ value: Value, descending: Bool = false) {
        self.value = value
        self.descending = descending
    }

    /// A key on an expression.
    public init(_ expression: ValueExpression, descending: Bool = false) {
        self.init(.expression(expression), descending: descending)
    }

    /// Parses `date`, `ticker` or a value expression, with a leading `-` for descending
    /// (`-pct_change(close)`).
    /// - Throws: `QueryError` from the expression parser, positioned in `text`.
    public static func parse(_ text: String, table: QuoteTable) throws(QueryError) -> SortKey {
        var body = Substring(text)
        while body.first == " " { body.removeFirst() }
        let descending = body.first == "-"
        if descending { body.removeFirst() }
        let word = body.trimmingCharacters(in: " ").lowercased()
        if word == "date" || word == table.dateColumnName.lowercased() { return SortKey(.date, descending: descending) }
        if word == "ticker" { return SortKey(.ticker, descending: descending) }
        do {
            return SortKey(try QueryParser(table: table).parseValue(String(body)), descending: descending)
        } catch {
            // Positions refer to `text`, which has the '-' and any spaces before `body`.
            throw error.shifted(by: text.utf8.count - body.utf8.count)
        }
    }
}

extension Substring {
    fileprivate func trimmingCharacters(in c: Character) -> Substring {
        var s = self
        while s.first == c { s.removeFirst() }
        while s.last == c { s.removeLast() }
        return s
    }
}

extension QueryError {
    /// The same error with its position moved `bytes` (single-byte characters) to the right on line 1.
    fileprivate func shifted(by bytes: Int) -> QueryError {
        var e = self
        e.offset = offset.map { $0 + bytes }
        if line == 1 { e.column = column.map { $0 + bytes } }
        return e
    }
}
