extension QuoteTable {
    /// The values of `expression` at the rows `rows`, one per row, `nil` where the value is null
    /// (a null input, `x / 0`, a window not yet full, a NaN).
    ///
    ///     let ticker = try #require(table.ticker("AAPL"))
    ///     let average = try table.values(of: Field("close").mavg(50), rows: ticker.rows)
    ///     // average[0 ..< 49] are nil: the window is not full before the 50th row.
    ///
    /// Series functions read the rows before `rows` that they need (a `mavg(close, 50)` of a
    /// range starting mid-ticker is the same as over the ticker's whole history), never rows of
    /// another ticker; so the values do not depend on where `rows` starts.
    ///
    /// - Parameters:
    ///   - expression: A value expression (`QueryParser.parseValue` reads one from text).
    ///   - rows: Rows of this table.
    /// - Returns: `rows.count` values; infinities are kept (`ln(0)` is `-inf`).
    /// - Throws: `QueryError` for an unknown column, `ticker` or `date` used as a number, or a
    ///   window that is not positive.
    /// - Precondition: `rows` lies within `0 ..< rowCount`.
    /// - Complexity: O(`rows.count` + the expression's lookback) per node of the expression.
    public func values(of expression: ValueExpression, rows: Range<Int>) throws(QueryError) -> [Double?] {
        precondition(rows.lowerBound >= 0 && rows.upperBound <= rowCount, "rows \(rows) outside 0..<\(rowCount)")
        let program = try ExpressionProgram(expression, table: self)
        guard !rows.isEmpty else { return [] }
        let scratch = ExpressionScratch()
        let buffer = scratch.acquire(rows.count)
        defer { scratch.release() }
        program.evaluate(rows: rows, into: buffer, scratch: scratch)
        // Safe: `evaluate` wrote `rows.count` values to `buffer`, which holds at least that many.
        return UnsafeBufferPointer(start: buffer, count: rows.count).map { $0.isNaN ? nil : $0 }
    }
}
