extension QuoteTable {
    /// The value of `expression` at each of `rows` (any order, repeats allowed), nil for null:
    /// computed output columns such as `pct_change(close)` or `mavg(close, 50)`. Series functions
    /// see each ticker's whole history, whatever rows are asked for; only the rows a window can
    /// reach from the asked rows are evaluated.
    ///
    ///     let rows = try table.select(screen, on: .latest).rows()
    ///     let returns = try table.values(of: Field("close").pctChange(), atRows: rows)
    ///
    /// A bare column gives its values as stored (a NaN stays NaN); any other expression follows
    /// the expression rules, where NaN is null.
    /// - Throws: `QueryError` for an unknown column, `ticker` or `date` in arithmetic, or a window
    ///   that is not positive.
    /// - Precondition: every row is in `0..<rowCount`.
    public func values(of expression: ValueExpression, atRows rows: [Int]) throws(QueryError) -> [Double?] {
        precondition(rows.allSatisfy { $0 >= 0 && $0 < rowCount }, "row out of range")
        if case .column(let name) = expression {
            guard let i = columnIndex(named: name) else {
                if ExpressionProgram.isKeyColumn(name, table: self) {
                    throw QueryError("'\(name)' is not a value column", kind: .typeMismatch)
                }
                throw QueryError(
                    "unknown column '\(name)'", kind: .unknownColumn,
                    suggestions: Suggestions.closest(to: name, among: schema.map(\.identifier)))
            }
            let column = columns[i]
            return rows.map { column.doubleValue(at: $0) }
        }
        let program = try ExpressionProgram(expression, table: self)
        // Evaluate in ascending row order (nearby rows share one pass), then put back in order.
        let ascending = rows.indices.sorted { rows[$0] < rows[$1] }
        var distinct = [Int](), slot = [Int](repeating: 0, count: rows.count)
        for i in ascending {
            if distinct.last != rows[i] { distinct.append(rows[i]) }
            slot[i] = distinct.count - 1
        }
        let values = program.values(atRows: distinct, scratch: ExpressionScratch())
        return slot.map { values[$0].isNaN ? nil : values[$0] }
    }
}

extension Selection {
    /// The value of `expression` at the matching rows, in table order (see
    /// `QuoteTable.values(of:atRows:)`), at most `limit` of them.
    public func values(of expression: ValueExpression, limit: Int? = nil) throws(QueryError) -> [Double?] {
        try table.values(of: expression, atRows: rows(limit: limit))
    }
}
