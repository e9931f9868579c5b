/// A table of daily quotes: named value columns of equal length, a date column, and a ticker
/// dictionary with its index.
///
/// Physical layout (after kdb+'s parted, sorted tables): rows are grouped by ticker in ticker-number
/// order; within a ticker, dates ascend and are unique. `tickers[number]` gives the ticker's symbol,
/// metadata and row range, so a ticker filter is a slice and a date range two binary searches.
///
///     var table = try QuoteTable(symbol: "FDX", dates: [...], columns: [...])
///     table.upsert(refetched)                                 // newer rows win, by date
///     let hits = try table.select(where: "80 < high < 83 and 78 < low < 82")
public struct QuoteTable: Sendable {
    /// The value columns' names, identifiers and types, in source order.
    public internal(set) var schema: [ColumnDescriptor]
    /// The value columns, parallel to `schema`.
    public internal(set) var columns: [AnyColumn]
    /// Days since 1970-01-01 of every row.
    public internal(set) var dates: Column<Int32>
    /// The ticker dictionary and index: the number of a ticker is its position here.
    public internal(set) var tickers: [TickerEntry]
    /// The source's name for the date column (usually `Date`).
    public var dateColumnName: String
    /// Free-form table metadata, for example `["source": "synthetic sample"]`.
    public var metadata: [String: String]

    var numberBySymbol: [String: Int32]

    /// The number of rows.
    public var rowCount: Int { dates.count }

    /// An empty table with the given value columns.
    public init(schema: [ColumnDescriptor] = [], dateColumnName: String = "Date", metadata: [String: String] = [:]) {
        self.schema = schema
        self.columns = schema.map { AnyColumn(emptyOf: $0.type) }
        self.dates = Column()
        self.tickers = []
        self.dateColumnName = dateColumnName
        self.metadata = metadata
        self.numberBySymbol = [:]
    }

    /// A table from parts already in table order (for the snapshot loader and builders).
    ///
    /// Checks lengths, the column count (at most `maximumColumnCount`), that every identifier
    /// is usable (`ColumnDescriptor.unusableIdentifierReason`) and unique, and that the ticker index tiles the rows; with
    /// `checkDates`, also that dates ascend strictly within every ticker.
    public init(
        schema: [ColumnDescriptor], columns: [AnyColumn], dates: Column<Int32>, tickers: [TickerEntry],
        dateColumnName: String = "Date", metadata: [String: String] = [:], checkDates: Bool = true
    ) throws(TableError) {
        try self.init(
            schema: schema, columns: columns, dates: dates, tickers: tickers, numberBySymbol: nil,
            dateColumnName: dateColumnName, metadata: metadata, checkDates: checkDates)
    }

    /// The public initializer, given `numberBySymbol` when the caller has it already: each
    /// symbol of `tickers` (all distinct) mapped to its position, as a snapshot footer's decode
    /// makes it once for the files of a store that share a ticker dictionary.
    init(
        schema: [ColumnDescriptor], columns: [AnyColumn], dates: Column<Int32>, tickers: [TickerEntry],
        numberBySymbol: [String: Int32]?, dateColumnName: String = "Date", metadata: [String: String] = [:],
        checkDates: Bool = true
    ) throws(TableError) {
        precondition(schema.count == columns.count, "schema and columns differ in count")
        if schema.count > QuoteTable.maximumColumnCount {
            throw .tooManyColumns(count: schema.count, limit: QuoteTable.maximumColumnCount)
        }
        let dateIdentifier = ColumnDescriptor.identifier(for: dateColumnName)
        var seen = Set<String>()
        for (d, c) in zip(schema, columns) {
            if let reason = ColumnDescriptor.unusableIdentifierReason(d.identifier, dateColumnIdentifier: dateIdentifier) {
                throw .unusableColumn(name: d.name, reason: reason)
            }
            if !seen.insert(d.identifier).inserted { throw .duplicateColumn(d.identifier) }
            if c.count != dates.count { throw .lengthMismatch(column: d.name, expected: dates.count, actual: c.count) }
        }
        var next = 0
        precondition(numberBySymbol.map { $0.count == tickers.count } ?? true, "numberBySymbol does not match the tickers")
        var numbers = numberBySymbol ?? [String: Int32](minimumCapacity: tickers.count)
        for (number, t) in tickers.enumerated() {
            if t.firstRow != next { throw .inconsistentIndex(ticker: t.symbol, detail: "first row \(t.firstRow), expected \(next)") }
            if t.rowCount < 0 { throw .inconsistentIndex(ticker: t.symbol, detail: "negative row count") }
            if numberBySymbol == nil && numbers.updateValue(Int32(number), forKey: t.symbol) != nil {
                throw .inconsistentIndex(ticker: t.symbol, detail: "symbol appears twice")
            }
            next += t.rowCount
        }
        if next != dates.count {
            throw .inconsistentIndex(ticker: tickers.last?.symbol ?? "(none)", detail: "index covers \(next) rows of \(dates.count)")
        }
        if let row = dates.validity?.firstClearRow {
            throw .nullDate(ticker: tickers.last { $0.firstRow <= row && $0.rowCount > 0 }?.symbol ?? "(none)", row: row)
        }
        if checkDates {
            if let problem = QuoteTable.dateOrderProblem(dates, tickers) { throw problem }
        }
        // Dates ascend within a ticker (checked above, or the caller's promise), so each ticker's
        // first and last rows bound its dates.
        if let problem = QuoteTable.dateRangeProblem(dates, tickers, everyRow: false) { throw problem }
        self.schema = schema
        self.columns = columns
        self.dates = dates
        self.tickers = tickers
        self.dateColumnName = dateColumnName
        self.metadata = metadata
        self.numberBySymbol = numbers
    }

    /// The first place where dates do not ascend strictly within a ticker, if any.
    static func dateOrderProblem(_ dates: Column<Int32>, _ tickers: [TickerEntry]) -> TableError? {
        dates.withUnsafeBufferPointer { d in
            for t in tickers where t.rowCount > 1 {
                for r in t.firstRow + 1 ..< t.firstRow + t.rowCount where d[r] <= d[r - 1] {
                    if d[r] == d[r - 1] { return .duplicateDate(ticker: t.symbol, day: d[r], rows: [r - 1, r]) }
                    return .unsortedDates(ticker: t.symbol, row: r)
                }
            }
            return nil
        }
    }

    /// The first row whose date is outside `Day.storableDayNumbers`, if any: every row with
    /// `everyRow` (what `verify` checks), else each ticker's first and last rows, which bound the
    /// rest when dates ascend within every ticker.
    static func dateRangeProblem(_ dates: Column<Int32>, _ tickers: [TickerEntry], everyRow: Bool) -> TableError? {
        let range = Day.storableDayNumbers
        return dates.withUnsafeBufferPointer { d in
            for t in tickers where t.rowCount > 0 {
                let last = t.firstRow + t.rowCount - 1
                // Every row, or the first and the last (a stride of `last − first` from the first).
                for r in stride(from: t.firstRow, through: last, by: everyRow ? 1 : Swift.max(1, last - t.firstRow))
                where !range.contains(d[r]) {
                    return .dateOutOfRange(ticker: t.symbol, row: r, day: d[r])
                }
            }
            return nil
        }
    }

    /// The number of `symbol`, or nil if the table has no such ticker.
    public func tickerNumber(of symbol: String) -> Int32? { numberBySymbol[symbol] }

    /// The ticker entry of `symbol`.
    public func ticker(_ symbol: String) -> TickerEntry? { numberBySymbol[symbol].map { tickers[Int($0)] } }

    /// The number of the ticker that owns `row`.
    /// - Complexity: O(log tickers).
    public func tickerNumber(ofRow row: Int) -> Int32 {
        precondition(row >= 0 && row < rowCount, "row \(row) out of range")
        var lo = 0, hi = tickers.count - 1
        while lo < hi {
            let mid = (lo + hi + 1) / 2
            if tickers[mid].firstRow <= row { lo = mid } else { hi = mid - 1 }
        }
        return Int32(lo)
    }

    /// The first row of every ticker that has rows, ascending: where per-ticker series restart.
    /// Read from the index in place (an entry's symbol and metadata are not copied, so a query
    /// that plans several programs pays no reference counting per ticker for this).
    /// - Complexity: O(tickers).
    var nonEmptyTickerStarts: [Int] {
        tickers.withUnsafeBufferPointer { entries in
            var starts = [Int]()
            starts.reserveCapacity(entries.count)
            for i in entries.indices where entries[i].rowCount > 0 { starts.append(entries[i].firstRow) }
            return starts
        }
    }

    /// The most value columns a table may have (SQLite's default limit): decoders and the
    /// snapshot reader refuse more, with an error naming the count. Wide inputs stay linear
    /// anyway; the limit bounds memory and output width.
    public static let maximumColumnCount = 2_000

    /// The indices of the columns named `names` (identifiers or source names, as
    /// `columnIndex(named:)`), nil for unknown names.
    /// - Complexity: O(columns + names): one dictionary, not a search per name.
    public func columnIndices(named names: [String]) -> [Int?] {
        var byIdentifier = [String: Int](minimumCapacity: schema.count), byName = [String: Int](minimumCapacity: schema.count)
        for (i, d) in schema.enumerated() {
            if byIdentifier[d.identifier] == nil { byIdentifier[d.identifier] = i }
            if byName[d.name] == nil { byName[d.name] = i }
        }
        return names.map { byIdentifier[$0] ?? byName[$0] }
    }

    /// The index of the column named `name` — its identifier (`adj_close`) or its source name
    /// (`Adj. Close`) — or nil.
    public func columnIndex(named name: String) -> Int? {
        if let i = schema.firstIndex(where: { $0.identifier == name }) { return i }
        if let i = schema.firstIndex(where: { $0.name == name }) { return i }
        return nil
    }

    /// The column named `name` (identifier or source name), or nil.
    public func column(named name: String) -> AnyColumn? { columnIndex(named: name).map { columns[$0] } }

    /// Sets metadata of an existing ticker (merged into what it has).
    public mutating func updateMetadata(ofTicker symbol: String, _ values: [String: String]) {
        guard let number = numberBySymbol[symbol] else { return }
        tickers[Int(number)].metadata.merge(values) { _, new in new }
    }

    /// Computes block summaries for every column (dates included). Queries use them when present.
    /// - Complexity: one pass over every column.
    public mutating func computeSummaries() {
        dates.computeSummaries()
        for i in columns.indices { columns[i].computeSummaries() }
    }

    /// Whether every column carries block summaries.
    public var hasSummaries: Bool { dates.hasSummaries && columns.allSatisfy(\.hasSummaries) }

    /// Frees unused capacity in every column and drops validity bitmaps without nulls.
    public mutating func shrinkToFit() {
        dates.shrinkToFit()
        for i in columns.indices {
            switch columns[i] {
            case .int32(var c):
                c.shrinkToFit()
                columns[i] = .int32(c)
            case .int64(var c):
                c.shrinkToFit()
                columns[i] = .int64(c)
            case .float32(var c):
                c.shrinkToFit()
                columns[i] = .float32(c)
            case .float64(var c):
                c.shrinkToFit()
                columns[i] = .float64(c)
            }
        }
    }

    /// Bytes held by column values and validity bitmaps.
    public var byteCount: Int {
        var total = dates.count * 4
        for c in columns {
            total += c.count * c.elementType.byteWidth + (c.validity.map { $0.wordCount * 8 } ?? 0)
        }
        return total
    }
}

extension QuoteTable: Equatable {
    /// Tables are equal when schema, tickers (with metadata and ranges), dates, every value
    /// (bit for bit, nulls alike), the date column's name and the table metadata are equal.
    public static func == (lhs: QuoteTable, rhs: QuoteTable) -> Bool {
        lhs.schema == rhs.schema && lhs.tickers == rhs.tickers && lhs.dates == rhs.dates
            && lhs.columns == rhs.columns && lhs.dateColumnName == rhs.dateColumnName && lhs.metadata == rhs.metadata
    }
}
