import Colonnade

/// The Nasdaq Data Link JSON response shapes, read with the engine's `JSONScanner`.
extension JSONScanner {
    // MARK: Top level

    /// Decodes the response object at `position` (its `{`). With `keepRows`, the rows stay in the
    /// decoder's buffers (`DecodedResponse.rows`) and `table` is empty.
    mutating func decodeResponse(ticker: String?, fallbackTicker: String?, keepRows: Bool = false) throws(ResponseError) -> DecodedResponse
    {
        var top = TopLevel()
        try ResponseError.wrapping { () throws(DecodeError) in try scanTopLevel(&top) }
        if let (code, message) = top.errorBody {
            // The message may echo the key ("We could not recognize your API key: '…'").
            throw .apiError(
                source: input.source, code: CredentialRedaction.redacting(code), message: CredentialRedaction.redacting(message))
        }
        if var table = top.datatable {
            return try ResponseError.wrapping { () throws(DecodeError) in
                try finishDatatable(&table, nextCursor: top.nextCursor, keepRows: keepRows)
            }
        }
        if let wrapper = top.wrapper {
            return try finishSeries(
                &top.wrapped, format: wrapper, key: wrapper == .datasetJSON ? "dataset" : "dataset_data",
                ticker: ticker, fallbackTicker: fallbackTicker, keepRows: keepRows)
        }
        if top.flat.sawSeriesKey {
            return try finishSeries(
                &top.flat, format: .legacyJSON, key: "the top-level object", ticker: ticker, fallbackTicker: fallbackTicker,
                keepRows: keepRows)
        }
        let keys = top.keys.isEmpty ? "no keys" : "top-level keys " + top.keys.map { "'\($0)'" }.joined(separator: ", ")
        throw .notADataLinkResponse(
            source: input.source,
            detail: "\(keys); expected 'dataset_data', 'dataset', 'datatable' or 'quandl_error'")
    }

    /// Reads the top-level object's keys into `top`; stops at an error body (`quandl_error`).
    private mutating func scanTopLevel(_ top: inout TopLevel) throws(DecodeError) {
        try expect(UInt8(ascii: "{"), "'{'")
        if try beginObject() {
            repeat {
                let key = try readKey()
                let s = key.lowerBound, e = key.upperBound
                if input.matches(s, e, "dataset_data") || input.matches(s, e, "dataset") {
                    top.wrapper = input.matches(s, e, "dataset") ? .datasetJSON : .datasetDataJSON
                    try expectObjectStart("an object")
                    try forEachKey { (d: inout JSONScanner, k: Range<Int>) throws(DecodeError) in
                        if try !d.seriesField(k, &top.wrapped) { try d.skipValue() }
                    }
                } else if input.matches(s, e, "datatable") {
                    var table = Datatable()
                    try decodeDatatableObject(&table)
                    top.datatable = table
                } else if input.matches(s, e, "meta") {
                    top.nextCursor = try decodeMeta()
                } else if input.matches(s, e, "quandl_error") {
                    top.errorBody = try readErrorBody()
                    return
                } else if try seriesField(key, &top.flat) {
                    // legacy v1: the series fields at the top level
                } else {
                    if top.keys.count < 4 { top.keys.append(string(key)) }
                    try skipValue()
                }
            } while try nextMember()
        }
        skipBlanks()
        if position < input.count {
            throw .malformed(
                input.position(position), expected: "end of input after the top-level object", found: input.found(at: position))
        }
    }

    // MARK: Time series

    /// Handles one key of a time-series object; false when the key is not one of its fields.
    private mutating func seriesField(_ key: Range<Int>, _ series: inout Series) throws(DecodeError) -> Bool {
        let s = key.lowerBound, e = key.upperBound
        if input.matches(s, e, "column_names") {
            if series.columnNames != nil { throw duplicateKey(key) }
            series.sawSeriesKey = true
            let namesOffset = position
            let names = try readStringArray(what: "a column name")
            guard !names.isEmpty else {
                throw .malformed(input.position(namesOffset), expected: "at least the date column in 'column_names'", found: "'[]'")
            }
            try RowBuffers.checkColumnNames(Array(names.dropFirst()), dateColumnName: names[0], source: input.source)
            series.columnNames = names
            if let deferred = series.deferredData {
                let resume = position
                position = deferred
                series.buffers = try decodeSeriesRows(names: names)
                position = resume
            }
        } else if input.matches(s, e, "data") {
            if series.buffers != nil || series.deferredData != nil { throw duplicateKey(key) }
            series.sawSeriesKey = true
            if let names = series.columnNames {
                series.buffers = try decodeSeriesRows(names: names)
            } else {
                series.deferredData = position
                try skipValue()
            }
        } else if input.matches(s, e, "name") {
            series.name = try readOptionalString()
        } else if input.matches(s, e, "dataset_code") || input.matches(s, e, "code") {
            series.code = try readOptionalString()
        } else {
            return false
        }
        return true
    }

    private func finishSeries(
        _ series: inout Series, format: QuoteFormat, key: String, ticker: String?,
        fallbackTicker: String?, keepRows: Bool
    ) throws(ResponseError) -> DecodedResponse {
        guard let names = series.columnNames else { throw .decoding(.missing(source: input.source, what: "'column_names' in \(key)")) }
        guard let buffers = series.buffers else { throw .decoding(.missing(source: input.source, what: "'data' in \(key)")) }
        let symbol = ticker ?? series.code.map(DataLinkSymbols.symbol(fromCode:)) ?? fallbackTicker
        guard symbol != nil || buffers.count == 0 else { throw .missingTicker(source: input.source) }
        var metadata: [String: String] = [:]
        if let name = series.name { metadata["name"] = name }
        // No rows (an update with no new days): no ticker, rather than one with no rows.
        let tickers = buffers.count == 0 ? [] : [TickerEntry(symbol: symbol!, metadata: metadata)]
        if keepRows {
            let rows = try ResponseError.wrapping { () throws(DecodeError) in
                try buffers.makeRows(
                    valueNames: Array(names.dropFirst()), tickers: tickers,
                    dateColumnName: names[0], source: input.source)
            }
            return DecodedResponse(rows: rows, format: format)
        }
        let table = try ResponseError.wrapping { () throws(DecodeError) in
            try buffers.makeTable(
                valueNames: Array(names.dropFirst()), tickers: tickers,
                dateColumnName: names[0], source: input.source)
        }
        return DecodedResponse(table: table, format: format)
    }

    // MARK: Datatables

    private mutating func decodeDatatableObject(_ table: inout Datatable) throws(DecodeError) {
        try expectObjectStart("an object")
        try forEachKey { (d: inout JSONScanner, key: Range<Int>) throws(DecodeError) in
            if d.input.matches(key.lowerBound, key.upperBound, "columns") {
                if table.columns != nil { throw d.duplicateKey(key) }
                table.columns = try d.readColumnDescriptions()
                if let deferred = table.deferredData {
                    let resume = d.position
                    d.position = deferred
                    try d.decodeDatatableRows(&table)
                    d.position = resume
                }
            } else if d.input.matches(key.lowerBound, key.upperBound, "data") {
                if table.buffers != nil || table.deferredData != nil { throw d.duplicateKey(key) }
                if table.columns != nil {
                    try d.decodeDatatableRows(&table)
                } else {
                    table.deferredData = d.position
                    try d.skipValue()
                }
            } else {
                try d.skipValue()
            }
        }
    }

    /// `[{"name": …, "type": …}, …]`, other keys skipped.
    private mutating func readColumnDescriptions() throws(DecodeError) -> [(name: String, type: String, offset: Int)] {
        var out: [(name: String, type: String, offset: Int)] = []
        try forEachElement { (d: inout JSONScanner) throws(DecodeError) in
            let offset = d.position
            var name: String?, type: String?
            try d.expectObjectStart("a column description {\"name\", \"type\"}")
            try d.forEachKey { (d2: inout JSONScanner, key: Range<Int>) throws(DecodeError) in
                if d2.input.matches(key.lowerBound, key.upperBound, "name") {
                    name = try d2.readOptionalString()
                } else if d2.input.matches(key.lowerBound, key.upperBound, "type") {
                    type = try d2.readOptionalString()
                } else {
                    try d2.skipValue()
                }
            }
            guard let name, let type else {
                throw .malformed(
                    d.input.position(offset), expected: "a column description with 'name' and 'type'",
                    found: d.input.found(offset, d.position))
            }
            out.append((name, type, offset))
        }
        return out
    }

    private mutating func decodeDatatableRows(_ table: inout Datatable) throws(DecodeError) {
        let columns = table.columns!
        var kinds = [Int32]()
        var valueNames = [String]()
        // The date column: the `Date` column named `date`, else the only `Date` column.
        let dateColumns = columns.indices.filter { columns[$0].type.lowercased() == "date" }
        let dateIndex =
            dateColumns.first { ColumnDescriptor.identifier(for: columns[$0].name) == "date" }
            ?? (dateColumns.count == 1 ? dateColumns[0] : nil)
        guard let dateIndex else { throw .missing(source: input.source, what: "a 'date' column of type Date in 'columns'") }
        var tickerIndex: Int?
        for (i, column) in columns.enumerated() {
            let type = column.type.lowercased()
            if i == dateIndex {
                kinds.append(RowSlot.date)
            } else if type == "string" {
                if tickerIndex == nil && ColumnDescriptor.identifier(for: column.name) == "ticker" {
                    tickerIndex = i
                    kinds.append(RowSlot.ticker)
                } else {
                    kinds.append(RowSlot.skip)
                }
            } else if type == "date" {
                kinds.append(RowSlot.skip)
            } else if Self.isNumericType(type) {
                kinds.append(Int32(valueNames.count))
                valueNames.append(column.name)
            } else {
                throw .unknownColumnType(input.position(column.offset, column: column.name), type: column.type)
            }
        }
        guard tickerIndex != nil else { throw .missing(source: input.source, what: "a 'ticker' column of type String in 'columns'") }
        try RowBuffers.checkColumnNames(valueNames, dateColumnName: columns[dateIndex].name, source: input.source)
        var symbols: [String] = []
        table.buffers = try decodeRows(
            names: columns.map(\.name), kinds: kinds, symbols: &symbols, valueCount: valueNames.count,
            tickerSymbol: DataLinkSymbols.symbol(fromCode:))
        table.symbols = symbols
        table.valueNames = valueNames
        table.dateName = columns[dateIndex].name
    }

    static func isNumericType(_ lowercased: String) -> Bool {
        if lowercased.hasPrefix("bigdecimal") { return true }
        return ["double", "float", "integer", "int", "long", "biginteger", "decimal", "number"].contains(lowercased)
    }

    private func finishDatatable(_ table: inout Datatable, nextCursor: String?, keepRows: Bool) throws(DecodeError) -> DecodedResponse {
        guard table.columns != nil else { throw .missing(source: input.source, what: "'columns' in datatable") }
        guard let buffers = table.buffers else { throw .missing(source: input.source, what: "'data' in datatable") }
        if keepRows {
            let rows = try buffers.makeRows(
                valueNames: table.valueNames, tickers: table.symbols.map { TickerEntry(symbol: $0) },
                dateColumnName: table.dateName, source: input.source)
            return DecodedResponse(rows: rows, format: .datatableJSON, nextCursorID: nextCursor)
        }
        let result = try buffers.makeTable(
            valueNames: table.valueNames, tickers: table.symbols.map { TickerEntry(symbol: $0) },
            dateColumnName: table.dateName, source: input.source)
        return DecodedResponse(table: result, format: .datatableJSON, nextCursorID: nextCursor)
    }

    /// `meta.next_cursor_id`: a string, or a number's text; nil when null, empty or absent
    /// (the last page). The one reader of it: `DataLinkCursor` and `decodeResponse` both use it.
    private mutating func decodeMeta() throws(DecodeError) -> String? {
        var cursor: String?
        try expectObjectStart("an object")
        try forEachKey { (d: inout JSONScanner, key: Range<Int>) throws(DecodeError) in
            if d.input.matches(key.lowerBound, key.upperBound, "next_cursor_id") {
                d.skipBlanks()
                if d.position < d.input.count && d.input.base[d.position] != UInt8(ascii: "\"")
                    && d.input.base[d.position] != UInt8(ascii: "n")
                {
                    // A number or other scalar: keep its text.
                    let start = d.position
                    try d.skipValue()
                    cursor = d.string(start ..< d.position)
                } else {
                    cursor = try d.readOptionalString()
                }
            } else {
                try d.skipValue()
            }
        }
        return cursor?.isEmpty == true ? nil : cursor
    }

    /// `{"code": …, "message": …}` of an error body.
    private mutating func readErrorBody() throws(DecodeError) -> (code: String, message: String) {
        var code = "", message = ""
        try expectObjectStart("an object")
        try forEachKey { (d: inout JSONScanner, key: Range<Int>) throws(DecodeError) in
            if d.input.matches(key.lowerBound, key.upperBound, "code") {
                code = try d.readOptionalString() ?? ""
            } else if d.input.matches(key.lowerBound, key.upperBound, "message") {
                message = try d.readOptionalString() ?? ""
            } else {
                try d.skipValue()
            }
        }
        return (code, message)
    }

    // MARK: Cursor only

    /// Reads only `meta.next_cursor_id` of the object at `position`, skipping every other value
    /// with a structural scan (no number parsing).
    mutating func scanNextCursorID() throws(DecodeError) -> String? {
        var cursor: String?
        try expectObjectStart("'{'")
        try forEachKey { (d: inout JSONScanner, key: Range<Int>) throws(DecodeError) in
            if d.input.matches(key.lowerBound, key.upperBound, "meta") {
                cursor = try d.decodeMeta()
            } else {
                try d.skipValue()
            }
        }
        skipBlanks()
        if position < input.count {
            throw .malformed(
                input.position(position), expected: "end of input after the top-level object", found: input.found(at: position))
        }
        return cursor
    }
}

/// What the top-level object holds.
private struct TopLevel {
    /// The `dataset_data` or `dataset` object.
    var wrapped = Series()
    /// The legacy v1 fields at the top level.
    var flat = Series()
    var wrapper: QuoteFormat?
    var datatable: Datatable?
    var nextCursor: String?
    var errorBody: (code: String, message: String)?
    /// The first few unknown keys, for the message when nothing is recognised.
    var keys: [String] = []
}

/// What a time-series object (`dataset_data`, `dataset`, or the legacy flat object) holds.
private struct Series {
    var columnNames: [String]?
    var buffers: RowBuffers?
    /// Offset of a `data` array met before `column_names`.
    var deferredData: Int?
    var name: String?
    var code: String?
    var sawSeriesKey = false
}

/// What a `datatable` object holds.
private struct Datatable {
    var columns: [(name: String, type: String, offset: Int)]?
    var buffers: RowBuffers?
    var symbols: [String] = []
    var valueNames: [String] = []
    var dateName = "date"
    var deferredData: Int?
}
