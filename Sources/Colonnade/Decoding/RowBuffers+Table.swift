/// Turning decoded rows into a table: the decoders' last step, whatever the input format.
extension RowBuffers {
    /// Moves decoded rows into a sorted `QuoteTable`.
    ///
    /// Ascending rows are copied column by column; rows descending per ticker, or unordered, go
    /// through a permutation (4 bytes per row) as they are copied, so no column exists twice.
    /// - Throws: `.duplicateDate` (1-based input rows) or `.duplicateColumn`, naming `source`;
    ///   `.outOfMemory` when a column of the table cannot be allocated.
    package func makeTable(
        valueNames: [String], tickers: [TickerEntry],
        dateColumnName: String, source: String
    ) throws(DecodeError) -> QuoteTable {
        let buffers = self
        let order = try Self.rowOrder(buffers, tickers: tickers, source: source)
        let schema = valueNames.map { ColumnDescriptor(name: $0, type: .float64) }
        let dates: Column<Int32>, rowTickers: [Int32]?, columns: [AnyColumn]
        if let order {
            (dates, rowTickers, columns) = try order.withUnsafeBufferPointer { o throws(DecodeError) in
                try Self.takeColumns(buffers, count: schema.count, order: o)
            }
        } else {
            (dates, rowTickers, columns) = try Self.takeColumns(buffers, count: schema.count, order: nil)
        }
        do {
            // Rows are sorted now, so this only checks them and builds the ticker index.
            return try QuoteTable(
                sortingRows: tickers, rowTickers: rowTickers, dates: dates, schema: schema,
                columns: columns, dateColumnName: dateColumnName)
        } catch {
            switch error {
            case let .duplicateDate(ticker, day, rows):
                throw .duplicateDate(source: source, ticker: ticker, date: Day.format(day: day), rows: rows.map { $0 + 1 })
            case let .duplicateColumn(name):
                throw .duplicateColumn(source: source, name: name)
            case let .unusableColumn(name, reason):
                throw .unusableColumnName(source: source, name: name, reason: reason)
            case let .tooManyColumns(count, limit):
                throw .tooManyColumns(source: source, count: count, limit: limit)
            default:
                preconditionFailure("decoder built an inconsistent table: \(error)")
            }
        }
    }

    /// The dates, ticker numbers and `count` value columns, moved out of `buffers` in `order`.
    /// - Throws: `.outOfMemory` when a column cannot be allocated.
    private static func takeColumns(
        _ buffers: RowBuffers, count: Int, order: UnsafeBufferPointer<Int32>?
    )
        throws(DecodeError) -> (Column<Int32>, [Int32]?, [AnyColumn])
    {
        let dates = try buffers.takeDates(order: order)
        let rowTickers = buffers.takeTickerNumbers(order: order)
        var columns = [AnyColumn]()
        columns.reserveCapacity(count)
        for c in 0 ..< count {
            var column = try buffers.takeColumn(c, order: order)
            column.shrinkToFit()
            columns.append(.float64(column))
        }
        return (dates, rowTickers, columns)
    }

    /// The permutation that sorts the rows by (ticker number, date), nil when they already are.
    /// - Throws: `.duplicateDate` naming both input rows (1-based).
    static func rowOrder(_ buffers: RowBuffers, tickers: [TickerEntry], source: String) throws(DecodeError) -> [Int32]? {
        let n = buffers.count
        guard n > 1 else { return nil }
        let dates = buffers.dates
        let numbers = buffers.tickerNumbers
        @inline(__always) func number(_ i: Int) -> Int32 { numbers?[i] ?? 0 }
        @inline(__always) func key(_ i: Int) -> UInt64 {
            UInt64(UInt32(bitPattern: number(i))) << 32 | UInt64(UInt32(bitPattern: dates[i]) ^ 0x8000_0000)
        }
        var ascending = true
        var i = 1
        while i < n {
            if key(i - 1) >= key(i) {
                ascending = false
                break
            }
            i += 1
        }
        if ascending { return nil }

        // Newest first within each ticker, tickers in number order: reverse each run.
        var descending = true
        i = 1
        while i < n {
            let a = number(i - 1), b = number(i)
            if b < a || (a == b && dates[i] >= dates[i - 1]) {
                descending = false
                break
            }
            i += 1
        }
        if descending {
            var order = [Int32](repeating: 0, count: n)
            var runStart = 0
            while runStart < n {
                var runEnd = runStart + 1
                while runEnd < n && number(runEnd) == number(runStart) { runEnd += 1 }
                for k in runStart ..< runEnd { order[k] = Int32(runStart + runEnd - 1 - k) }
                runStart = runEnd
            }
            return order
        }

        // Any order: sort (key, input row); ties keep input order, so duplicates are adjacent.
        var keyed = [(key: UInt64, row: Int32)]()
        keyed.reserveCapacity(n)
        for r in 0 ..< n { keyed.append((key(r), Int32(r))) }
        keyed.sort { $0.key < $1.key || ($0.key == $1.key && $0.row < $1.row) }
        for r in 1 ..< n where keyed[r].key == keyed[r - 1].key {
            let row = Int(keyed[r].row)
            let symbol = tickers.indices.contains(Int(number(row))) ? tickers[Int(number(row))].symbol : "?"
            throw .duplicateDate(
                source: source, ticker: symbol, date: Day.format(day: dates[row]),
                rows: [Int(keyed[r - 1].row) + 1, row + 1])
        }
        return keyed.map(\.row)
    }

    /// Checks value column names before any row is decoded: at most
    /// `QuoteTable.maximumColumnCount` of them, each reachable by a query (see
    /// `ColumnDescriptor.unusableIdentifierReason`), and distinct as identifiers.
    /// - Complexity: O(names), whatever their number (a hostile header may hold millions).
    package static func checkColumnNames(_ names: [String], dateColumnName: String, source: String) throws(DecodeError) {
        guard names.count <= QuoteTable.maximumColumnCount else {
            throw .tooManyColumns(source: source, count: names.count, limit: QuoteTable.maximumColumnCount)
        }
        let dateIdentifier = ColumnDescriptor.identifier(for: dateColumnName)
        var seen = Set<String>()
        for name in names {
            let identifier = ColumnDescriptor.identifier(for: name)
            if let reason = ColumnDescriptor.unusableIdentifierReason(identifier, dateColumnIdentifier: dateIdentifier) {
                throw .unusableColumnName(source: source, name: name, reason: reason)
            }
            if !seen.insert(identifier).inserted { throw .duplicateColumn(source: source, name: name) }
        }
    }
}
