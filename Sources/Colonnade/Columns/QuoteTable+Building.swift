extension Column {
    /// A column of the rows `rows` of this one, in that order.
    public func gathering(_ rows: some Collection<Int>) -> Column {
        var out = Column()
        out.reserveCapacity(rows.count)
        if validity == nil {
            withUnsafeBufferPointer { src in
                out = Column(unsafeUninitializedCount: rows.count) { dst in
                    var i = 0
                    for r in rows {
                        dst[i] = src[r]
                        i += 1
                    }
                }
            }
        } else {
            for r in rows { out.append(value(at: r)) }
        }
        return out
    }
}

private struct Gather: ColumnMapper {
    let rows: [Int]
    func map<T: ColumnElement>(_ column: Column<T>) -> Column<T> { column.gathering(rows) }
}

extension QuoteTable {
    /// Builds a table from rows in any order: sorts them by ticker, then date, and rejects a date
    /// that appears twice for one ticker.
    ///
    /// - Parameters:
    ///   - tickers: the tickers, by code; their row ranges are computed here.
    ///   - rowTickers: the ticker number of each row, or nil when every row belongs to ticker 0.
    ///   - dates: days since 1970-01-01 of each row.
    ///   - schema: the value columns' descriptors, one per column.
    ///   - columns: the value columns, each as long as `dates`.
    ///   - dateColumnName: the source's name for the date column (usually `Date`).
    ///   - metadata: free-form table metadata, for example `["source": "synthetic sample"]`.
    /// - Throws: `TableError.duplicateDate` naming the ticker, the date and both input rows.
    /// - Complexity: O(n) when rows arrive ascending or descending per ticker, O(n log n) otherwise.
    public init(
        sortingRows tickers: [TickerEntry], rowTickers: [Int32]?, dates: Column<Int32>,
        schema: [ColumnDescriptor], columns: [AnyColumn], dateColumnName: String = "Date",
        metadata: [String: String] = [:]
    ) throws(TableError) {
        let n = dates.count
        precondition(rowTickers == nil || rowTickers!.count == n, "row tickers and dates differ in length")
        precondition(rowTickers != nil || n == 0 || !tickers.isEmpty, "rows without a ticker")
        let order: [Int]? = dates.withUnsafeBufferPointer { d in
            QuoteTable.sortOrder(rowTickers: rowTickers, dates: d)
        }
        var counts = [Int](repeating: 0, count: tickers.count)
        if let rowTickers { for t in rowTickers { counts[Int(t)] += 1 } } else if !tickers.isEmpty { counts[0] = n }
        var entries = tickers
        var next = 0
        for i in entries.indices {
            entries[i].firstRow = next
            entries[i].rowCount = counts[i]
            next += counts[i]
        }

        let sortedDates = order.map { dates.gathering($0) } ?? dates
        let sortedColumns = order.map { o in columns.map { $0.map(Gather(rows: o)) } } ?? columns
        // Duplicate check on the sorted dates; report the input rows.
        let duplicate: TableError? = sortedDates.withUnsafeBufferPointer { d in
            for t in entries where t.rowCount > 1 {
                for r in t.firstRow + 1 ..< t.firstRow + t.rowCount where d[r] == d[r - 1] {
                    let inputRows = order.map { [$0[r - 1], $0[r]].sorted() } ?? [r - 1, r]
                    return .duplicateDate(ticker: t.symbol, day: d[r], rows: inputRows)
                }
            }
            return nil
        }
        if let duplicate { throw duplicate }
        try self.init(
            schema: schema, columns: sortedColumns, dates: sortedDates, tickers: entries,
            dateColumnName: dateColumnName, metadata: metadata, checkDates: false)
    }

    /// The permutation that sorts rows by (ticker, date), or nil when they already are.
    /// Stable, so equal keys keep input order (duplicates are then adjacent).
    private static func sortOrder(rowTickers: [Int32]?, dates d: UnsafeBufferPointer<Int32>) -> [Int]? {
        let n = d.count
        func key(_ r: Int) -> (Int32, Int32) { (rowTickers?[r] ?? 0, d[r]) }
        var ascending = true, descendingWithinTicker = true
        var r = 1
        while r < n && (ascending || descendingWithinTicker) {
            let a = key(r - 1), b = key(r)
            if a > b { ascending = false }
            if a.0 != b.0 || a.1 < b.1 { descendingWithinTicker = false }
            r += 1
        }
        if ascending { return nil }
        if descendingWithinTicker && rowTickers == nil {
            return Array((0 ..< n).reversed())
        }
        var order = Array(0 ..< n)
        order.sort { key($0) < key($1) || (key($0) == key($1) && $0 < $1) }
        return order
    }
}
