extension QuoteTable {
    /// A table of the rows of `selection` only, in table order, with the tickers that keep rows
    /// (in their code order, metadata kept), the same schema, date column name and metadata.
    ///
    /// - Complexity: O(rows of the table) for the mask walk, plus the copies.
    public func subtable(_ selection: Selection) -> QuoteTable {
        if selection.count == rowCount { return self }
        let rows = selection.rows()
        var entries: [TickerEntry] = []
        var next = 0
        for t in tickers {
            let n = selection.mask.nonzeroBitCount(in: t.rows)
            guard n > 0 else { continue }
            entries.append(TickerEntry(symbol: t.symbol, metadata: t.metadata, firstRow: next, rowCount: n))
            next += n
        }
        let gathered = columns.map { $0.map(RowGather(rows: rows)) }
        // The rows keep their (ticker, date) order, so the parts already form a table.
        return
            (try? QuoteTable(
                schema: schema, columns: gathered, dates: dates.gathering(rows), tickers: entries,
                dateColumnName: dateColumnName, metadata: metadata, checkDates: false)) ?? self
    }
}

private struct RowGather: ColumnMapper {
    let rows: [Int]
    func map<T: ColumnElement>(_ column: Column<T>) -> Column<T> { column.gathering(rows) }
}
