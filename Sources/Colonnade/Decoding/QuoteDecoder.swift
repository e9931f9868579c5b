/// Decodes Nasdaq Data Link (Quandl) responses straight from bytes into a `QuoteTable`.
///
///     let response = try data.withUnsafeBytes { bytes in
///         try QuoteDecoder.decode(bytes, ticker: "FDX", source: "WIKI-FDX.json")
///     }
///     response.table.rowCount
///
/// One pass over the bytes appends each value to its typed column buffer — no `JSONSerialization`,
/// no `Codable`, no per-row objects, no `String` per value. Numbers go through
/// `DecimalParser.parseDouble` (equal to `Double(String)` bit for bit), dates through
/// `CivilDate.parseDay`. Every value column is Float64 (volumes too: the Tables API writes integers
/// where the time-series API writes `2411643.0`); JSON `null` and empty CSV fields are nulls.
///
/// Shapes (see `QuoteFormat`), told apart by sniffing: JSON when the first non-blank byte is `{`,
/// by its top-level key (`dataset_data`, `dataset`, `datatable`, `quandl_error`, or the legacy v1
/// flat object with `column_names`); otherwise CSV, by its header (a `ticker` column means a
/// datatable; `code,message` an error body). Columns are matched by name: unknown keys at any
/// level are skipped, and the schema is whatever `column_names` / `columns` / the header lists.
///
/// Rules worth knowing:
/// - Time-series responses hold one ticker: `ticker` if given, else the body's `dataset_code`
///   (legacy: `code`) mapped through `DataLinkSymbols.symbol(fromCode:)`, else `fallbackTicker`.
///   Datatables carry a ticker per row (`BRK_A` → `BRK.A`) and ignore both.
/// - Time-series: the first column is the date column. Datatables: the column named `date`
///   (JSON: the `Date`-typed column named `date`, or the only `Date` column).
/// - Datatable JSON column types: `String`, `Date`, `BigDecimal(p,s)`, `double`, `float`,
///   `Integer`/`integer`, `long`, `BigInteger` (case-insensitive); anything else is
///   `DecodeError.unknownColumnType`. A `String` column other than `ticker`, and a second `Date`
///   column, are skipped (their values must still be well-formed JSON).
/// - CSV has no column types: every column but `ticker` and the date must hold numbers (or be
///   empty); fields may be double-quoted; blank lines are skipped.
/// - Numbers may be integers, have exponents, or be quoted (`"86.90000000000001"`); `true`, `{}`,
///   `"abc"` are errors. A row's date must be a valid `YYYY-MM-DD`.
/// - Rows may arrive newest first (the API default), oldest first or in any order; the table is
///   sorted by (ticker, date). Two rows for one ticker and date are `DecodeError.duplicateDate`.
/// - Datatable JSON lists `data` before `columns`; the decoder then skips the data array once
///   (a structural scan, no number parsing) and decodes it after reading the columns.
public enum QuoteDecoder {
    /// Decodes one response.
    ///
    /// - Parameters:
    ///   - bytes: The whole response body.
    ///   - format: The expected shape, or nil to accept any (the shape is always sniffed; a
    ///     different one is `DecodeError.notAQuandlResponse`).
    ///   - ticker: The symbol for a time-series response, overriding what the body says.
    ///   - fallbackTicker: The symbol to use when neither `ticker` nor the body names one (for
    ///     example, inferred from a file name).
    ///   - source: The input's name, used in error messages (usually the file name).
    /// - Returns: The rows as a sorted table, the decoded shape and the next cursor id.
    /// - Throws: `DecodeError`; an API error body is `.apiError(code:message:)`.
    /// - Complexity: O(bytes) for rows in ascending or descending order, plus O(n log n) for
    ///   unordered rows. Peak memory: the input, the column buffers and one more column.
    public static func decode(_ bytes: UnsafeRawBufferPointer, format: QuoteFormat? = nil, ticker: String? = nil,
                              fallbackTicker: String? = nil, source: String) throws(DecodeError) -> DecodedResponse {
        guard let raw = bytes.baseAddress, bytes.count > 0 else { throw .empty(source: source) }
        let input = ByteInput(base: raw.assumingMemoryBound(to: UInt8.self), count: bytes.count, source: source)
        var start = 0
        // A UTF-8 byte order mark, then blanks.
        if input.count >= 3 && input.base[0] == 0xEF && input.base[1] == 0xBB && input.base[2] == 0xBF { start = 3 }
        while start < input.count && isBlank(input.base[start]) { start += 1 }
        guard start < input.count else { throw .empty(source: source) }

        let response: DecodedResponse
        switch input.base[start] {
        case UInt8(ascii: "{"):
            var decoder = JSONQuoteDecoder(input: input, position: start)
            response = try decoder.decode(ticker: ticker, fallbackTicker: fallbackTicker)
        case UInt8(ascii: "["):
            throw .notAQuandlResponse(source: source, detail: "a JSON array, expected an object with 'dataset_data', 'dataset' or 'datatable'")
        case UInt8(ascii: "<"):
            throw .notAQuandlResponse(source: source, detail: "an HTML or XML document")
        default:
            var decoder = CSVQuoteDecoder(input: input, position: start)
            response = try decoder.decode(ticker: ticker, fallbackTicker: fallbackTicker)
        }
        if let format, format != response.format {
            throw .notAQuandlResponse(source: source, detail: "expected \(format), found \(response.format)")
        }
        return response
    }

    /// Decodes one response held in an array.
    /// - SeeAlso: `decode(_:format:ticker:fallbackTicker:source:)`.
    public static func decode(_ bytes: [UInt8], format: QuoteFormat? = nil, ticker: String? = nil,
                              fallbackTicker: String? = nil, source: String) throws(DecodeError) -> DecodedResponse {
        do {
            return try bytes.withUnsafeBytes { raw in
                try decode(raw, format: format, ticker: ticker, fallbackTicker: fallbackTicker, source: source)
            }
        } catch let error as DecodeError {
            throw error
        } catch {
            preconditionFailure("unexpected error \(error)")
        }
    }

    @inline(__always)
    static func isBlank(_ b: UInt8) -> Bool {
        b == UInt8(ascii: " ") || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") || b == UInt8(ascii: "\t")
    }

    // MARK: Assembly

    /// Moves decoded rows into a sorted `QuoteTable`.
    ///
    /// Ascending rows are copied column by column; rows descending per ticker, or unordered, go
    /// through a permutation (4 bytes per row) as they are copied, so no column exists twice.
    static func makeTable(_ buffers: RowBuffers, valueNames: [String], tickers: [TickerEntry],
                          dateColumnName: String, source: String) throws(DecodeError) -> QuoteTable {
        let order = try rowOrder(buffers, tickers: tickers, source: source)
        let schema = valueNames.map { ColumnDescriptor(name: $0, type: .float64) }
        let table: QuoteTable
        do {
            if let order {
                table = try order.withUnsafeBufferPointer { o throws(TableError) in
                    try build(buffers, schema: schema, tickers: tickers, order: o, dateColumnName: dateColumnName)
                }
            } else {
                table = try build(buffers, schema: schema, tickers: tickers, order: nil, dateColumnName: dateColumnName)
            }
        } catch {
            switch error {
            case let .duplicateDate(ticker, day, rows):
                throw .duplicateDate(source: source, ticker: ticker, date: CivilDate.format(day: day), rows: rows.map { $0 + 1 })
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
        return table
    }

    private static func build(_ buffers: RowBuffers, schema: [ColumnDescriptor], tickers: [TickerEntry],
                              order: UnsafeBufferPointer<Int32>?, dateColumnName: String) throws(TableError) -> QuoteTable {
        let dates = buffers.takeDates(order: order)
        let rowTickers = buffers.takeTickerCodes(order: order)
        var columns = [AnyColumn]()
        columns.reserveCapacity(schema.count)
        for c in 0 ..< schema.count {
            var column = buffers.takeColumn(c, order: order)
            column.shrinkToFit()
            columns.append(.float64(column))
        }
        // Rows are sorted now, so this only checks them and builds the ticker index.
        return try QuoteTable(sortingRows: tickers, rowTickers: rowTickers, dates: dates, schema: schema,
                              columns: columns, dateColumnName: dateColumnName)
    }

    /// The permutation that sorts the rows by (ticker code, date), nil when they already are.
    /// - Throws: `.duplicateDate` naming both input rows (1-based).
    static func rowOrder(_ buffers: RowBuffers, tickers: [TickerEntry], source: String) throws(DecodeError) -> [Int32]? {
        let n = buffers.count
        guard n > 1 else { return nil }
        let dates = buffers.dates
        let codes = buffers.tickerCodes
        @inline(__always) func code(_ i: Int) -> Int32 { codes?[i] ?? 0 }
        @inline(__always) func key(_ i: Int) -> UInt64 {
            UInt64(UInt32(bitPattern: code(i))) << 32 | UInt64(UInt32(bitPattern: dates[i]) ^ 0x8000_0000)
        }
        var ascending = true
        var i = 1
        while i < n { if key(i - 1) >= key(i) { ascending = false; break }; i += 1 }
        if ascending { return nil }

        // Newest first within each ticker, tickers in code order: reverse each run.
        var descending = true
        i = 1
        while i < n {
            let a = code(i - 1), b = code(i)
            if b < a || (a == b && dates[i] >= dates[i - 1]) { descending = false; break }
            i += 1
        }
        if descending {
            var order = [Int32](repeating: 0, count: n)
            var runStart = 0
            while runStart < n {
                var runEnd = runStart + 1
                while runEnd < n && code(runEnd) == code(runStart) { runEnd += 1 }
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
            let symbol = tickers.indices.contains(Int(code(row))) ? tickers[Int(code(row))].symbol : "?"
            throw .duplicateDate(source: source, ticker: symbol, date: CivilDate.format(day: dates[row]),
                                 rows: [Int(keyed[r - 1].row) + 1, row + 1])
        }
        return keyed.map(\.row)
    }

    /// Checks value column names before any row is decoded: at most
    /// `QuoteTable.maximumColumnCount` of them, each reachable by a query (see
    /// `ColumnDescriptor.unusableIdentifierReason`), and distinct as identifiers.
    /// - Complexity: O(names), whatever their number (a hostile header may hold millions).
    static func checkColumnNames(_ names: [String], dateColumnName: String, source: String) throws(DecodeError) {
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
