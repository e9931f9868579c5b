import Colonnade

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
/// `Day`'s parser. Every value column is Float64 (volumes too: the Tables API writes integers
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
///   `ResponseError.decoding(.unknownColumnType)`. A `String` column other than `ticker`, and a second `Date`
///   column, are skipped (their values must still be well-formed JSON).
/// - CSV has no column types: every column but `ticker` and the date must hold numbers (or be
///   empty); fields may be double-quoted; blank lines are skipped.
/// - Numbers may be integers, have exponents, or be quoted (`"86.90000000000001"`); `true`, `{}`,
///   `"abc"` are errors. A row's date must be a valid `YYYY-MM-DD`.
/// - Rows may arrive newest first (the API default), oldest first or in any order; the table is
///   sorted by (ticker, date). Two rows for one ticker and date are `ResponseError.decoding(.duplicateDate)`.
/// - Datatable JSON lists `data` before `columns`; the decoder then skips the data array once
///   (a structural scan, no number parsing) and decodes it after reading the columns.
public enum QuoteDecoder {
    /// Decodes one response.
    ///
    /// - Parameters:
    ///   - bytes: The whole response body.
    ///   - format: The expected shape, or nil to accept any (the shape is always sniffed; a
    ///     different one is `ResponseError.notADataLinkResponse`).
    ///   - ticker: The symbol for a time-series response, overriding what the body says.
    ///   - fallbackTicker: The symbol to use when neither `ticker` nor the body names one (for
    ///     example, inferred from a file name).
    ///   - source: The input's name, used in error messages (usually the file name).
    /// - Returns: The rows as a sorted table, the decoded shape and the next cursor id.
    /// - Throws: `ResponseError`: `.decoding` for bad bytes (with a position); an API error body is `.apiError`.
    /// - Complexity: O(bytes) for rows in ascending or descending order, plus O(n log n) for
    ///   unordered rows. Peak memory: the input, the column buffers and one more column.
    public static func decode(
        _ bytes: UnsafeRawBufferPointer, format: QuoteFormat? = nil, ticker: String? = nil,
        fallbackTicker: String? = nil, source: String
    ) throws(ResponseError) -> DecodedResponse {
        try decode(bytes, format: format, ticker: ticker, fallbackTicker: fallbackTicker, source: source, keepRows: false)
    }

    /// `decode`, with the rows left in the decoder's buffers (`DecodedResponse.rows`, checked and
    /// with their sort order) for a `ColumnAssembler`; the same errors.
    package static func decodeRows(
        _ bytes: UnsafeRawBufferPointer, ticker: String? = nil, fallbackTicker: String? = nil,
        source: String
    ) throws(ResponseError) -> DecodedRows {
        let response = try decode(bytes, format: nil, ticker: ticker, fallbackTicker: fallbackTicker, source: source, keepRows: true)
        guard let rows = response.rows else { preconditionFailure("decoded without keeping the rows") }
        return rows
    }

    /// `decode`, with the rows left in the decoder's buffers (`DecodedResponse.rows`) and the
    /// shape and cursor as `decode` gives them; the same errors.
    package static func decodeKeepingRows(_ bytes: UnsafeRawBufferPointer, source: String) throws(ResponseError) -> DecodedResponse {
        try decode(bytes, format: nil, ticker: nil, fallbackTicker: nil, source: source, keepRows: true)
    }

    /// The code and message of an API error body — JSON `{"quandl_error":{"code":…,"message":…}}`
    /// or CSV `code,message` and one line — with credentials redacted (`CredentialRedaction`);
    /// nil for anything else. The package's one parse of error bodies: a decode of such a body
    /// throws `ResponseError.apiError` with the same two strings, and the HTTP client reads a
    /// failed response's body here.
    package static func errorBody(_ bytes: UnsafeRawBufferPointer) -> (code: String, message: String)? {
        do {
            _ = try decode(bytes, format: nil, ticker: nil, fallbackTicker: nil, source: "error body", keepRows: false)
            return nil
        } catch .apiError(_, let code, let message) {
            return (code, message)
        } catch {
            return nil
        }
    }

    private static func decode(
        _ bytes: UnsafeRawBufferPointer, format: QuoteFormat?, ticker: String?,
        fallbackTicker: String?, source: String, keepRows: Bool
    ) throws(ResponseError) -> DecodedResponse {
        let (input, start) = try start(of: bytes, source: source)

        let response: DecodedResponse
        switch input.base[start] {
        case UInt8(ascii: "{"):
            var scanner = JSONScanner(input: input, position: start)
            response = try scanner.decodeResponse(ticker: ticker, fallbackTicker: fallbackTicker, keepRows: keepRows)
        case UInt8(ascii: "["):
            throw .notADataLinkResponse(
                source: source, detail: "a JSON array, expected an object with 'dataset_data', 'dataset' or 'datatable'")
        case UInt8(ascii: "<"):
            throw .notADataLinkResponse(source: source, detail: "an HTML or XML document")
        default:
            var scanner = CSVScanner(input: input, position: start)
            response = try scanner.decodeResponse(ticker: ticker, fallbackTicker: fallbackTicker, keepRows: keepRows)
        }
        if let format, format != response.format {
            throw .notADataLinkResponse(source: source, detail: "expected \(format), found \(response.format)")
        }
        return response
    }

    /// The input and the offset of its first byte after a UTF-8 byte order mark and blanks.
    /// - Throws: `.empty` when nothing is left.
    package static func start(of bytes: UnsafeRawBufferPointer, source: String) throws(ResponseError) -> (ByteInput, Int) {
        guard let raw = bytes.baseAddress, bytes.count > 0 else { throw .empty(source: source) }
        let input = ByteInput(base: raw.assumingMemoryBound(to: UInt8.self), count: bytes.count, source: source)
        var start = 0
        if input.count >= 3 && input.base[0] == 0xEF && input.base[1] == 0xBB && input.base[2] == 0xBF { start = 3 }
        while start < input.count && ByteInput.isBlank(input.base[start]) { start += 1 }
        guard start < input.count else { throw .empty(source: source) }
        return (input, start)
    }

    /// Decodes one response held in an array.
    /// - SeeAlso: `decode(_:format:ticker:fallbackTicker:source:)`.
    public static func decode(
        _ bytes: [UInt8], format: QuoteFormat? = nil, ticker: String? = nil,
        fallbackTicker: String? = nil, source: String
    ) throws(ResponseError) -> DecodedResponse {
        do {
            return try bytes.withUnsafeBytes { raw in
                try decode(raw, format: format, ticker: ticker, fallbackTicker: fallbackTicker, source: source)
            }
        } catch let error as ResponseError {
            throw error
        } catch {
            preconditionFailure("unexpected error \(error)")
        }
    }
}
