import Colonnade

/// The Nasdaq Data Link CSV response shapes, read with the engine's `CSVScanner`: time-series CSV
/// (date column first), datatable CSV (with `ticker` and `date` columns) and the `code,message`
/// error body.
extension CSVScanner {
    /// What a CSV header says: the names, what each column is, and the value columns.
    package struct Layout: Sendable {
        package let names: [String]
        /// Per column: `RowSlot.date`, `RowSlot.ticker`, or the value column's index.
        package let kinds: [Int32]
        package let valueNames: [String]
        package let dateIndex: Int
        package let isDatatable: Bool
    }

    /// Decodes the response at `position` (its header line). With `keepRows`, the rows stay in the
    /// decoder's buffers (`DecodedResponse.rows`) and `table` is empty.
    package mutating func decodeResponse(
        ticker: String?, fallbackTicker: String?, keepRows: Bool = false
    ) throws(ResponseError) -> DecodedResponse {
        let layout = try readLayout()
        if !layout.isDatatable { try checkTimeSeriesDateColumn(layout) }
        var symbols: [String] = []
        let buffers = try decodeRows(layout, symbols: &symbols)
        let tickers: [TickerEntry]
        if layout.isDatatable {
            tickers = symbols.map { TickerEntry(symbol: $0) }
        } else if buffers.count == 0 {
            // A header and no rows (a legitimate empty response, as an update with no new days
            // gets): no ticker, rather than one with no rows named after the file.
            tickers = []
        } else {
            guard let symbol = ticker ?? fallbackTicker else { throw .missingTicker(source: input.source) }
            tickers = [TickerEntry(symbol: symbol)]
        }
        let format: QuoteFormat = layout.isDatatable ? .datatableCSV : .timeSeriesCSV
        if keepRows {
            let rows = try ResponseError.wrapping { () throws(DecodeError) in
                try buffers.makeRows(
                    valueNames: layout.valueNames, tickers: tickers, dateColumnName: layout.names[layout.dateIndex],
                    source: input.source)
            }
            return DecodedResponse(rows: rows, format: format)
        }
        let table = try ResponseError.wrapping { () throws(DecodeError) in
            try buffers.makeTable(
                valueNames: layout.valueNames, tickers: tickers, dateColumnName: layout.names[layout.dateIndex],
                source: input.source)
        }
        return DecodedResponse(table: table, format: format)
    }

    /// A time-series CSV's first column holds its dates. One whose first column is not named like
    /// a date (`Date`, `Trade Date`, …) is still read when its first value is a date; otherwise it
    /// is not a quote file (a README, a header of value columns only) and is refused, instead of
    /// adding a ticker named after the file.
    private func checkTimeSeriesDateColumn(_ layout: Layout) throws(ResponseError) {
        if Self.looksLikeDateColumn(layout.names[layout.dateIndex]) { return }
        var p = position
        let base = input.base, end = input.count
        while p < end && (base[p] == UInt8(ascii: "\n") || base[p] == UInt8(ascii: "\r")) { p += 1 }
        if p < end, let (start, stop, _) = try? field(at: p), Day.parseDay(base + start, count: stop - start) != nil { return }
        throw .decoding(
            .missing(
                source: input.source,
                what: "a date column: a time-series CSV's first column holds dates (YYYY-MM-DD); this one's is "
                    + "'\(layout.names[layout.dateIndex].prefix(40))'\(p < end ? ", and its first value is not a date" : " and there are no rows")"
            ))
    }

    /// Whether a column name reads as a date column's: its identifier has `date`, `day` or `time`
    /// in it (`Date`, `Trade Date`, `date`, `timestamp`).
    package static func looksLikeDateColumn(_ name: String) -> Bool {
        let identifier = ColumnDescriptor.identifier(for: name)
        return identifier.contains("date") || identifier.contains("day") || identifier.contains("time")
    }

    /// Reads the header; `position` moves to the first data line.
    package mutating func readLayout() throws(ResponseError) -> Layout {
        let names = try ResponseError.wrapping { () throws(DecodeError) in try readHeader() }
        let identifiers = names.map(ColumnDescriptor.identifier(for:))
        if identifiers == ["code", "message"] {
            throw apiError()
        }
        var kinds = [Int32]()
        var valueNames = [String]()
        let isDatatable = identifiers.contains("ticker")
        let dateIndex: Int
        if isDatatable {
            guard let d = identifiers.firstIndex(of: "date") else {
                throw .decoding(.missing(source: input.source, what: "a 'date' column in the CSV header"))
            }
            dateIndex = d
        } else {
            dateIndex = 0
        }
        var sawTicker = false
        for (i, name) in names.enumerated() {
            if i == dateIndex {
                kinds.append(RowSlot.date)
            } else if isDatatable && !sawTicker && identifiers[i] == "ticker" {
                sawTicker = true
                kinds.append(RowSlot.ticker)
            } else {
                kinds.append(Int32(valueNames.count))
                valueNames.append(name)
            }
        }
        try ResponseError.wrapping { () throws(DecodeError) in
            try RowBuffers.checkColumnNames(valueNames, dateColumnName: names[dateIndex], source: input.source)
        }
        return Layout(names: names, kinds: kinds, valueNames: valueNames, dateIndex: dateIndex, isDatatable: isDatatable)
    }

    /// The data lines from `position` on, per `layout`.
    private mutating func decodeRows(_ layout: Layout, symbols: inout [String]) throws(ResponseError) -> RowBuffers {
        try ResponseError.wrapping { () throws(DecodeError) in
            try decodeRows(
                names: layout.names, kinds: layout.kinds, valueCount: layout.valueNames.count, symbols: &symbols,
                tickerSymbol: DataLinkSymbols.symbol(fromCode:))
        }
    }

    /// Decodes the data lines from `position` on with a datatable `layout` read elsewhere (the
    /// chunks of a file split at line ends, after the first). Positions in errors are relative
    /// to this input.
    package mutating func decodeDatatableRows(_ layout: Layout) throws(ResponseError) -> QuoteTable {
        precondition(layout.isDatatable)
        var symbols: [String] = []
        let buffers = try decodeRows(layout, symbols: &symbols)
        return try ResponseError.wrapping { () throws(DecodeError) in
            try buffers.makeTable(
                valueNames: layout.valueNames, tickers: symbols.map { TickerEntry(symbol: $0) },
                dateColumnName: layout.names[layout.dateIndex], source: input.source)
        }
    }

    /// `decodeDatatableRows`, the rows left in the decoder's buffers (for a `ColumnAssembler`).
    package mutating func decodeDatatableRowsInPlace(_ layout: Layout) throws(ResponseError) -> DecodedRows {
        precondition(layout.isDatatable)
        var symbols: [String] = []
        let buffers = try decodeRows(layout, symbols: &symbols)
        return try ResponseError.wrapping { () throws(DecodeError) in
            try buffers.makeRows(
                valueNames: layout.valueNames, tickers: symbols.map { TickerEntry(symbol: $0) },
                dateColumnName: layout.names[layout.dateIndex], source: input.source)
        }
    }

    /// `code,message` then one line: the API's CSV error body.
    private func apiError() -> ResponseError {
        var code = "", message = ""
        if let (start, stop, next) = try? field(at: position) {
            code = string(start, stop)
            if next < input.count && input.base[next] == UInt8(ascii: ",") {
                var e = next + 1
                while e < input.count && input.base[e] != UInt8(ascii: "\n") && input.base[e] != UInt8(ascii: "\r") { e += 1 }
                message = string(next + 1, e)
                if message.hasPrefix("\"") && message.hasSuffix("\"") && message.count >= 2 {
                    message = String(message.dropFirst().dropLast()).replacingDoubledQuotes()
                }
            }
        }
        // The message may echo the key ("We could not recognize your API key: '…'").
        return .apiError(source: input.source, code: CredentialRedaction.redacting(code), message: CredentialRedaction.redacting(message))
    }
}

extension String {
    fileprivate func replacingDoubledQuotes() -> String {
        var out = ""
        var previousWasQuote = false
        for c in self {
            if c == "\"" && previousWasQuote {
                previousWasQuote = false
                continue
            }
            previousWasQuote = c == "\""
            out.append(c)
        }
        return out
    }
}
