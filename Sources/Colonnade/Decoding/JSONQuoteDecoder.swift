/// The JSON side of `QuoteDecoder`: a scanner over the bytes whose state is this struct's
/// stored properties (a value type kept in locals by the caller), and a row loop that appends
/// straight into `RowBuffers`.
struct JSONQuoteDecoder {
    let input: ByteInput
    /// The next byte to read.
    var position: Int
    /// Nesting depth of `skipValue`, bounded so hostile input cannot exhaust the stack.
    private static let maximumDepth = 256

    init(input: ByteInput, position: Int) {
        self.input = input
        self.position = position
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

    /// How a row position is stored.
    private enum Kind {
        static let date: Int32 = -1
        static let ticker: Int32 = -2
        static let skip: Int32 = -3
    }

    // MARK: Top level

    mutating func decode(ticker: String?, fallbackTicker: String?) throws(DecodeError) -> DecodedResponse {
        var wrapped = Series()
        var flat = Series()
        var wrapper: QuoteFormat?
        var datatable: Datatable?
        var nextCursor: String?
        var topKeys: [String] = []

        try expect(UInt8(ascii: "{"), "'{'")
        try forEachKey { (decoder: inout JSONQuoteDecoder, key: Range<Int>) throws(DecodeError) in
            let s = key.lowerBound, e = key.upperBound
            if decoder.input.matches(s, e, "dataset_data") || decoder.input.matches(s, e, "dataset") {
                wrapper = decoder.input.matches(s, e, "dataset") ? .datasetJSON : .datasetDataJSON
                try decoder.expectObjectStart("an object")
                try decoder.forEachKey { (d: inout JSONQuoteDecoder, k: Range<Int>) throws(DecodeError) in
                    if try !d.seriesField(k, &wrapped) { try d.skipValue() }
                }
            } else if decoder.input.matches(s, e, "datatable") {
                var table = Datatable()
                try decoder.decodeDatatableObject(&table)
                datatable = table
            } else if decoder.input.matches(s, e, "meta") {
                nextCursor = try decoder.decodeMeta()
            } else if decoder.input.matches(s, e, "quandl_error") {
                try decoder.throwAPIError()
            } else if try decoder.seriesField(key, &flat) {
                // legacy v1: the series fields at the top level
            } else {
                if topKeys.count < 4 { topKeys.append(decoder.string(key)) }
                try decoder.skipValue()
            }
        }
        skipBlanks()
        if position < input.count {
            throw .malformed(input.position(position), expected: "end of input after the top-level object", found: input.found(at: position))
        }

        if var table = datatable {
            return try finishDatatable(&table, nextCursor: nextCursor)
        }
        if let wrapper {
            return try finishSeries(&wrapped, format: wrapper, key: wrapper == .datasetJSON ? "dataset" : "dataset_data",
                                    ticker: ticker, fallbackTicker: fallbackTicker)
        }
        if flat.sawSeriesKey {
            return try finishSeries(&flat, format: .legacyJSON, key: "the top-level object", ticker: ticker, fallbackTicker: fallbackTicker)
        }
        let keys = topKeys.isEmpty ? "no keys" : "top-level keys " + topKeys.map { "'\($0)'" }.joined(separator: ", ")
        throw .notAQuandlResponse(source: input.source,
                                  detail: "\(keys); expected 'dataset_data', 'dataset', 'datatable' or 'quandl_error'")
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
            try QuoteDecoder.checkColumnNames(Array(names.dropFirst()), dateColumnName: names[0], source: input.source)
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

    private func finishSeries(_ series: inout Series, format: QuoteFormat, key: String, ticker: String?,
                              fallbackTicker: String?) throws(DecodeError) -> DecodedResponse {
        guard let names = series.columnNames else { throw .missing(source: input.source, what: "'column_names' in \(key)") }
        guard let buffers = series.buffers else { throw .missing(source: input.source, what: "'data' in \(key)") }
        guard let symbol = ticker ?? series.code.map(DataLinkSymbols.symbol(fromCode:)) ?? fallbackTicker else {
            throw .missingTicker(source: input.source)
        }
        var metadata: [String: String] = [:]
        if let name = series.name { metadata["name"] = name }
        let table = try QuoteDecoder.makeTable(buffers, valueNames: Array(names.dropFirst()),
                                               tickers: [TickerEntry(symbol: symbol, metadata: metadata)],
                                               dateColumnName: names[0], source: input.source)
        return DecodedResponse(table: table, format: format)
    }

    // MARK: Datatables

    private mutating func decodeDatatableObject(_ table: inout Datatable) throws(DecodeError) {
        try expectObjectStart("an object")
        try forEachKey { (d: inout JSONQuoteDecoder, key: Range<Int>) throws(DecodeError) in
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
        try forEachElement { (d: inout JSONQuoteDecoder) throws(DecodeError) in
            let offset = d.position
            var name: String?, type: String?
            try d.expectObjectStart("a column description {\"name\", \"type\"}")
            try d.forEachKey { (d2: inout JSONQuoteDecoder, key: Range<Int>) throws(DecodeError) in
                if d2.input.matches(key.lowerBound, key.upperBound, "name") {
                    name = try d2.readOptionalString()
                } else if d2.input.matches(key.lowerBound, key.upperBound, "type") {
                    type = try d2.readOptionalString()
                } else {
                    try d2.skipValue()
                }
            }
            guard let name, let type else {
                throw .malformed(d.input.position(offset), expected: "a column description with 'name' and 'type'",
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
        let dateIndex = dateColumns.first { ColumnDescriptor.identifier(for: columns[$0].name) == "date" }
            ?? (dateColumns.count == 1 ? dateColumns[0] : nil)
        guard let dateIndex else { throw .missing(source: input.source, what: "a 'date' column of type Date in 'columns'") }
        var tickerIndex: Int?
        for (i, column) in columns.enumerated() {
            let type = column.type.lowercased()
            if i == dateIndex {
                kinds.append(Kind.date)
            } else if type == "string" {
                if tickerIndex == nil && ColumnDescriptor.identifier(for: column.name) == "ticker" {
                    tickerIndex = i
                    kinds.append(Kind.ticker)
                } else {
                    kinds.append(Kind.skip)
                }
            } else if type == "date" {
                kinds.append(Kind.skip)
            } else if Self.isNumericType(type) {
                kinds.append(Int32(valueNames.count))
                valueNames.append(column.name)
            } else {
                throw .unknownColumnType(input.position(column.offset, column: column.name), type: column.type)
            }
        }
        guard tickerIndex != nil else { throw .missing(source: input.source, what: "a 'ticker' column of type String in 'columns'") }
        try QuoteDecoder.checkColumnNames(valueNames, dateColumnName: columns[dateIndex].name, source: input.source)
        var symbols: [String] = []
        table.buffers = try decodeRows(names: columns.map(\.name), kinds: kinds, symbols: &symbols, valueCount: valueNames.count)
        table.symbols = symbols
        table.valueNames = valueNames
        table.dateName = columns[dateIndex].name
    }

    static func isNumericType(_ lowercased: String) -> Bool {
        if lowercased.hasPrefix("bigdecimal") { return true }
        return ["double", "float", "integer", "int", "long", "biginteger", "decimal", "number"].contains(lowercased)
    }

    private func finishDatatable(_ table: inout Datatable, nextCursor: String?) throws(DecodeError) -> DecodedResponse {
        guard table.columns != nil else { throw .missing(source: input.source, what: "'columns' in datatable") }
        guard let buffers = table.buffers else { throw .missing(source: input.source, what: "'data' in datatable") }
        let result = try QuoteDecoder.makeTable(buffers, valueNames: table.valueNames,
                                                tickers: table.symbols.map { TickerEntry(symbol: $0) },
                                                dateColumnName: table.dateName, source: input.source)
        return DecodedResponse(table: result, format: .datatableJSON, nextCursorID: nextCursor)
    }

    private mutating func decodeMeta() throws(DecodeError) -> String? {
        var cursor: String?
        try expectObjectStart("an object")
        try forEachKey { (d: inout JSONQuoteDecoder, key: Range<Int>) throws(DecodeError) in
            if d.input.matches(key.lowerBound, key.upperBound, "next_cursor_id") {
                d.skipBlanks()
                if d.position < d.input.count && d.input.base[d.position] != UInt8(ascii: "\"") && d.input.base[d.position] != UInt8(ascii: "n") {
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
        return cursor
    }

    private mutating func throwAPIError() throws(DecodeError) {
        var code = "", message = ""
        try expectObjectStart("an object")
        try forEachKey { (d: inout JSONQuoteDecoder, key: Range<Int>) throws(DecodeError) in
            if d.input.matches(key.lowerBound, key.upperBound, "code") {
                code = try d.readOptionalString() ?? ""
            } else if d.input.matches(key.lowerBound, key.upperBound, "message") {
                message = try d.readOptionalString() ?? ""
            } else {
                try d.skipValue()
            }
        }
        throw .apiError(source: input.source, code: code, message: message)
    }

    // MARK: Rows

    /// Decodes a `data` array of rows into new buffers.
    ///
    /// `kinds[i]` says what row position `i` holds: a value column index (≥ 0), the date, the
    /// ticker (its code is appended; `symbols` collects the symbols in code order) or a skipped value.
    private mutating func decodeRows(names: [String], kinds: [Int32], symbols: inout [String],
                                     valueCount: Int) throws(DecodeError) -> RowBuffers {
        let width = kinds.count
        // An estimate of the rows (`["2017-09-29",960.11,…],` is about 8 bytes per value + 16).
        let estimate = (input.count - position) / (8 * width + 8) + 16
        let buffers = RowBuffers(columnCount: valueCount, estimatedRows: estimate, withTickers: kinds.contains(Kind.ticker))
        let base = input.base
        let end = input.count
        let values = buffers.values
        var p = position
        var row = 0
        var tickers = TickerInterner()
        defer { symbols = tickers.symbols }

        @inline(__always) func skipBlanks() {
            while p < end && base[p] <= 32 && QuoteDecoder.isBlank(base[p]) { p += 1 }
        }
        func fail(_ expected: String, column i: Int? = nil) -> DecodeError {
            let name = i.map { names[$0] }
            if p >= end { return .truncated(input.position(p, row: row + 1, column: name), expected: expected) }
            return .malformed(input.position(p, row: row + 1, column: name), expected: expected, found: input.found(at: p))
        }

        skipBlanks()
        guard p < end, base[p] == UInt8(ascii: "[") else { throw fail("'[' starting the 'data' array") }
        p += 1
        skipBlanks()
        if p < end && base[p] == UInt8(ascii: "]") {
            position = p + 1
            return buffers
        }
        while true {
            skipBlanks()
            guard p < end, base[p] == UInt8(ascii: "[") else { throw fail("'[' starting row \(row + 1)") }
            p += 1
            buffers.reserve(rows: row + 1)
            let dates = buffers.dates
            for i in 0 ..< width {
                skipBlanks()
                if i > 0 {
                    guard p < end else { throw fail("',' or ']'", column: i) }
                    if base[p] == UInt8(ascii: ",") {
                        p += 1
                        skipBlanks()
                    } else if base[p] == UInt8(ascii: "]") {
                        throw .rowWidth(input.position(p, row: row + 1, column: names[i]), expected: width, found: i)
                    } else {
                        throw fail("',' or ']'", column: i)
                    }
                }
                guard p < end else { throw fail("a value", column: i) }
                let kind = kinds[i]
                let b = base[p]
                if kind >= 0 {
                    let column = values[Int(kind)]
                    if b == UInt8(ascii: "n") {
                        guard end - p >= 4, base[p + 1] == UInt8(ascii: "u"), base[p + 2] == UInt8(ascii: "l"),
                              base[p + 3] == UInt8(ascii: "l") else {
                            throw .badNumber(input.position(p, row: row + 1, column: names[i]), found: input.found(at: p))
                        }
                        p += 4
                        column[row] = 0
                        buffers.setNull(column: Int(kind), row: row)
                    } else {
                        var start = p, stop = p
                        if b == UInt8(ascii: "\"") {
                            // A quoted number: the bytes between the quotes.
                            start = p + 1
                            stop = start
                            while stop < end && base[stop] != UInt8(ascii: "\"") && base[stop] != UInt8(ascii: "\\") { stop += 1 }
                            guard stop < end, base[stop] == UInt8(ascii: "\"") else {
                                if stop >= end { p = stop; throw fail("'\"' closing a quoted number", column: i) }
                                throw .badNumber(input.position(p, row: row + 1, column: names[i]), found: input.found(at: p))
                            }
                            p = stop + 1
                        } else {
                            if let (v, after) = NumberScanning.scanPlainDecimal(base, p, end) {
                                let c = after < end ? base[after] : UInt8(ascii: ",")
                                if c == UInt8(ascii: ",") || c == UInt8(ascii: "]") || c <= 32 || c == UInt8(ascii: "}") {
                                    column[row] = v
                                    p = after
                                    continue
                                }
                            }
                            while stop < end {
                                let c = base[stop]
                                if c == UInt8(ascii: ",") || c == UInt8(ascii: "]") || c <= 32 || c == UInt8(ascii: "}") { break }
                                stop += 1
                            }
                            p = stop
                        }
                        // Safe: start ≤ stop ≤ end.
                        guard let v = DecimalParser.parseDouble(base + start, count: stop - start) else {
                            let at = b == UInt8(ascii: "\"") ? start - 1 : start
                            throw .badNumber(input.position(at, row: row + 1, column: names[i]), found: input.found(at: at))
                        }
                        column[row] = v
                    }
                } else if kind == Kind.date {
                    // The fast path is exactly `"YYYY-MM-DD"`.
                    if b == UInt8(ascii: "\""), end - p >= 12, base[p + 11] == UInt8(ascii: "\""),
                       let day = CivilDate.parseDay(base + p + 1, count: 10) {
                        dates[row] = day
                        p += 12
                    } else {
                        throw .badDate(input.position(p, row: row + 1, column: names[i]), found: input.found(at: p))
                    }
                } else if kind == Kind.ticker {
                    guard b == UInt8(ascii: "\"") else { throw fail("a ticker string", column: i) }
                    position = p
                    let range = try readStringRange()
                    p = position
                    let count = range.upperBound - range.lowerBound
                    guard count > 0 else { throw fail("a ticker", column: i) }
                    let code = tickers.code(at: range.lowerBound, count: count, in: base) { string(range) }
                    buffers.tickerCodes![row] = code
                } else {
                    position = p
                    try skipValue()
                    p = position
                }
            }
            skipBlanks()
            guard p < end else { throw fail("']' ending row \(row + 1)") }
            if base[p] == UInt8(ascii: ",") {
                throw .rowWidth(input.position(p, row: row + 1, column: nil), expected: width, found: width + 1)
            }
            guard base[p] == UInt8(ascii: "]") else { throw fail("']' ending row \(row + 1)") }
            p += 1
            row += 1
            buffers.count = row
            skipBlanks()
            guard p < end else { throw fail("',' or ']' after row \(row)") }
            if base[p] == UInt8(ascii: ",") { p += 1; continue }
            if base[p] == UInt8(ascii: "]") { p += 1; break }
            throw fail("',' or ']' after row \(row)")
        }
        position = p
        return buffers
    }

    /// Decodes a time-series `data` array: the date first, then one value per other column.
    private mutating func decodeSeriesRows(names: [String]) throws(DecodeError) -> RowBuffers {
        var unused: [String] = []
        let kinds = (0 ..< names.count).map { $0 == 0 ? Kind.date : Int32($0 - 1) }
        return try decodeRows(names: names, kinds: kinds, symbols: &unused, valueCount: names.count - 1)
    }

    // MARK: Scanner

    mutating func skipBlanks() {
        while position < input.count && QuoteDecoder.isBlank(input.base[position]) { position += 1 }
    }

    private mutating func expect(_ byte: UInt8, _ what: String) throws(DecodeError) {
        skipBlanks()
        guard position < input.count else { throw .truncated(input.position(position), expected: what) }
        guard input.base[position] == byte else {
            throw .malformed(input.position(position), expected: what, found: input.found(at: position))
        }
        position += 1
    }

    private mutating func expectObjectStart(_ what: String) throws(DecodeError) {
        try expect(UInt8(ascii: "{"), what)
        position -= 1
    }

    /// Calls `body` for each key of the object at `position` (just before its `{`), with `position`
    /// at the key's value; `body` must consume the value.
    private mutating func forEachKey(_ body: (inout JSONQuoteDecoder, Range<Int>) throws(DecodeError) -> Void) throws(DecodeError) {
        skipBlanks()
        if position < input.count && input.base[position] == UInt8(ascii: "{") { position += 1 }
        skipBlanks()
        if position < input.count && input.base[position] == UInt8(ascii: "}") { position += 1; return }
        while true {
            skipBlanks()
            guard position < input.count else { throw .truncated(input.position(position), expected: "a key") }
            guard input.base[position] == UInt8(ascii: "\"") else {
                throw .malformed(input.position(position), expected: "a key string", found: input.found(at: position))
            }
            let key = try readStringRange()
            try expect(UInt8(ascii: ":"), "':' after a key")
            skipBlanks()
            try body(&self, key)
            skipBlanks()
            guard position < input.count else { throw .truncated(input.position(position), expected: "',' or '}'") }
            let b = input.base[position]
            position += 1
            if b == UInt8(ascii: ",") { continue }
            if b == UInt8(ascii: "}") { return }
            position -= 1
            throw .malformed(input.position(position), expected: "',' or '}'", found: input.found(at: position))
        }
    }

    /// Calls `body` for each element of the array at `position`, with `position` at the element.
    private mutating func forEachElement(_ body: (inout JSONQuoteDecoder) throws(DecodeError) -> Void) throws(DecodeError) {
        try expect(UInt8(ascii: "["), "'['")
        skipBlanks()
        if position < input.count && input.base[position] == UInt8(ascii: "]") { position += 1; return }
        while true {
            skipBlanks()
            try body(&self)
            skipBlanks()
            guard position < input.count else { throw .truncated(input.position(position), expected: "',' or ']'") }
            let b = input.base[position]
            position += 1
            if b == UInt8(ascii: ",") { continue }
            if b == UInt8(ascii: "]") { return }
            position -= 1
            throw .malformed(input.position(position), expected: "',' or ']'", found: input.found(at: position))
        }
    }

    private mutating func readStringArray(what: String) throws(DecodeError) -> [String] {
        var out: [String] = []
        try forEachElement { (d: inout JSONQuoteDecoder) throws(DecodeError) in
            guard d.position < d.input.count, d.input.base[d.position] == UInt8(ascii: "\"") else {
                if d.position >= d.input.count { throw .truncated(d.input.position(d.position), expected: what) }
                throw .malformed(d.input.position(d.position), expected: what, found: d.input.found(at: d.position))
            }
            out.append(d.string(try d.readStringRange()))
        }
        return out
    }

    /// A string value, or nil for `null`; any other value is skipped and gives its text.
    private mutating func readOptionalString() throws(DecodeError) -> String? {
        skipBlanks()
        guard position < input.count else { throw .truncated(input.position(position), expected: "a value") }
        switch input.base[position] {
        case UInt8(ascii: "\""):
            return string(try readStringRange())
        case UInt8(ascii: "n"):
            let start = position
            try skipValue()
            if input.matches(start, position, "null") { return nil }
            return string(start ..< position)
        default:
            let start = position
            try skipValue()
            return string(start ..< position)
        }
    }

    /// Reads the string at `position` (its opening quote) and returns the range of its contents
    /// (escapes not decoded).
    private mutating func readStringRange() throws(DecodeError) -> Range<Int> {
        let open = position
        var p = position + 1
        let base = input.base, end = input.count
        while p < end {
            let b = base[p]
            if b == UInt8(ascii: "\"") { position = p + 1; return open + 1 ..< p }
            p += b == UInt8(ascii: "\\") ? 2 : 1
        }
        throw .truncated(input.position(end), expected: "'\"' closing the string that starts at byte \(open)")
    }

    /// Skips one value of any kind, checking its nesting.
    private mutating func skipValue(depth: Int = 0) throws(DecodeError) {
        skipBlanks()
        guard position < input.count else { throw .truncated(input.position(position), expected: "a value") }
        guard depth < Self.maximumDepth else {
            throw .malformed(input.position(position), expected: "nesting at most \(Self.maximumDepth) deep", found: "deeper nesting")
        }
        switch input.base[position] {
        case UInt8(ascii: "\""):
            _ = try readStringRange()
        case UInt8(ascii: "{"):
            try forEachKey { (d: inout JSONQuoteDecoder, _: Range<Int>) throws(DecodeError) in try d.skipValue(depth: depth + 1) }
        case UInt8(ascii: "["):
            try forEachElement { (d: inout JSONQuoteDecoder) throws(DecodeError) in try d.skipValue(depth: depth + 1) }
        default:
            // A number or a literal: letters, digits, '.', '+', '-'.
            let start = position
            while position < input.count {
                let b = input.base[position]
                let isToken = (b &- UInt8(ascii: "0")) < 10 || ((b | 0x20) &- UInt8(ascii: "a")) < 26
                    || b == UInt8(ascii: ".") || b == UInt8(ascii: "+") || b == UInt8(ascii: "-")
                if !isToken { break }
                position += 1
            }
            if position == start {
                throw .malformed(input.position(start), expected: "a value", found: input.found(at: start))
            }
        }
    }

    private func duplicateKey(_ key: Range<Int>) -> DecodeError {
        .malformed(input.position(key.lowerBound - 1), expected: "each key once", found: "'\(string(key))' again")
    }

    /// The contents of a JSON string (escapes decoded; invalid escapes and UTF-8 become U+FFFD).
    func string(_ range: Range<Int>) -> String {
        let base = input.base
        guard range.contains(where: { base[$0] == UInt8(ascii: "\\") }) else {
            return String(decoding: UnsafeBufferPointer(start: base + range.lowerBound, count: range.count), as: UTF8.self)
        }
        var bytes: [UInt8] = []
        bytes.reserveCapacity(range.count)
        var scalars = String.UnicodeScalarView()
        func flush() {
            if !bytes.isEmpty { scalars.append(contentsOf: String(decoding: bytes, as: UTF8.self).unicodeScalars); bytes.removeAll(keepingCapacity: true) }
        }
        func hex4(_ at: Int) -> UInt32? {
            guard at + 4 <= range.upperBound else { return nil }
            var v: UInt32 = 0
            for k in 0 ..< 4 {
                let c = base[at + k]
                let d: UInt8
                switch c {
                case UInt8(ascii: "0") ... UInt8(ascii: "9"): d = c - UInt8(ascii: "0")
                case UInt8(ascii: "a") ... UInt8(ascii: "f"): d = c - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A") ... UInt8(ascii: "F"): d = c - UInt8(ascii: "A") + 10
                default: return nil
                }
                v = v << 4 | UInt32(d)
            }
            return v
        }
        var i = range.lowerBound
        while i < range.upperBound {
            let b = base[i]
            guard b == UInt8(ascii: "\\"), i + 1 < range.upperBound else { bytes.append(b); i += 1; continue }
            let e = base[i + 1]
            i += 2
            switch e {
            case UInt8(ascii: "n"): bytes.append(10)
            case UInt8(ascii: "t"): bytes.append(9)
            case UInt8(ascii: "r"): bytes.append(13)
            case UInt8(ascii: "b"): bytes.append(8)
            case UInt8(ascii: "f"): bytes.append(12)
            case UInt8(ascii: "u"):
                flush()
                guard let unit = hex4(i) else { scalars.append("\u{FFFD}"); continue }
                i += 4
                if unit >= 0xD800 && unit < 0xDC00, i + 6 <= range.upperBound, base[i] == UInt8(ascii: "\\"),
                   base[i + 1] == UInt8(ascii: "u"), let low = hex4(i + 2), low >= 0xDC00 && low < 0xE000 {
                    i += 6
                    scalars.append(Unicode.Scalar(0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00)) ?? "\u{FFFD}")
                } else {
                    scalars.append(Unicode.Scalar(unit) ?? "\u{FFFD}")
                }
            default: bytes.append(e)  // \" \\ \/ and, leniently, anything else
            }
        }
        flush()
        return String(scalars)
    }
}

/// Ticker codes of a datatable response numbered in order of first appearance, as symbols
/// (`BRK_A` → `BRK.A`), with a one-entry cache: rows of one ticker usually come together.
struct TickerInterner {
    /// The symbols, by number.
    private(set) var symbols: [String] = []
    private var numbers: [String: Int32] = [:]
    private var last = (start: 0, count: -1, code: Int32(0))

    /// The number of the ticker whose API code is the `count` bytes at `start` of `base`;
    /// `text` gives those bytes as a string (called only for a ticker unlike the previous one).
    @inline(__always)
    mutating func code(at start: Int, count: Int, in base: UnsafePointer<UInt8>, text: () -> String) -> Int32 {
        if count == last.count && memoryEqual(base + start, base + last.start, count) { return last.code }
        let symbol = DataLinkSymbols.symbol(fromCode: text())
        let code: Int32
        if let known = numbers[symbol] {
            code = known
        } else {
            code = Int32(symbols.count)
            numbers[symbol] = code
            symbols.append(symbol)
        }
        last = (start, count, code)
        return code
    }
}

/// Whether `count` bytes at `a` and `b` are equal.
@inline(__always)
func memoryEqual(_ a: UnsafePointer<UInt8>, _ b: UnsafePointer<UInt8>, _ count: Int) -> Bool {
    var i = 0
    while i < count { if a[i] != b[i] { return false }; i += 1 }
    return true
}
