import Colonnade

/// The response shapes `QuoteDecoder` reads.
public enum QuoteFormat: String, Sendable, CaseIterable, CustomStringConvertible {
    /// Time-series JSON from `/datasets/{db}/{code}/data.json`: `{"dataset_data": {column_names, data, …}}`.
    case datasetDataJSON
    /// Time-series JSON with metadata from `/datasets/{db}/{code}.json`: `{"dataset": {name, …, column_names, data}}`.
    case datasetJSON
    /// Legacy API v1 time-series JSON: one flat object with `code`, `name`, `column_names`, `data`.
    case legacyJSON
    /// Tables API JSON: `{"datatable": {"data": […], "columns": [{"name", "type"}…]}, "meta": {"next_cursor_id": …}}`.
    case datatableJSON
    /// Time-series CSV: a header of column names, the date column first, then one row per date.
    case timeSeriesCSV
    /// Tables API CSV: a header with a `ticker` and a `date` column, rows of many tickers in any order.
    case datatableCSV

    /// Whether the format carries its own tickers, one per row.
    public var isDatatable: Bool { self == .datatableJSON || self == .datatableCSV }

    /// Whether the format is JSON.
    public var isJSON: Bool { self != .timeSeriesCSV && self != .datatableCSV }

    /// A short name of the format.
    public var description: String {
        switch self {
        case .datasetDataJSON: "dataset_data JSON"
        case .datasetJSON: "dataset JSON"
        case .legacyJSON: "legacy v1 JSON"
        case .datatableJSON: "datatable JSON"
        case .timeSeriesCSV: "time-series CSV"
        case .datatableCSV: "datatable CSV"
        }
    }
}

/// A decoded response: the rows as a sorted table, and what the caller needs to fetch more.
public struct DecodedResponse: Sendable {
    /// The rows, sorted by (ticker, date), dates unique per ticker. Every value column is Float64.
    /// Block summaries are not computed (merging would drop them); `QuoteImporter` computes them
    /// once on the merged table, or call `computeSummaries()`.
    public var table: QuoteTable
    /// The shape that was decoded.
    public var format: QuoteFormat
    /// The Tables API's `meta.next_cursor_id`: pass it as `qopts.cursor_id` for the next page;
    /// nil when the response is the last page (or not a datatable).
    public var nextCursorID: String?

    /// The rows still in the decoder's buffers, when decoded for a `ColumnAssembler`
    /// (`QuoteDecoder.decodeRows`); `table` is empty then.
    package var rows: DecodedRows?

    /// A response whose rows stay in the decoder's buffers.
    package init(rows: DecodedRows, format: QuoteFormat, nextCursorID: String? = nil) {
        self.table = QuoteTable()
        self.format = format
        self.nextCursorID = nextCursorID
        self.rows = rows
    }

    /// A decoded response; see the properties.
    public init(table: QuoteTable, format: QuoteFormat, nextCursorID: String? = nil) {
        self.table = table
        self.format = format
        self.nextCursorID = nextCursorID
    }
}
