/// How a result is written: `--format table|csv|json|ndjson`.
enum OutputFormat: String, Sendable, CaseIterable {
    /// Aligned columns for people; see ``TableFormatter``.
    case table
    /// RFC 4180 CSV with a header line; see ``CSVFormatter``.
    case csv
    /// One JSON array of objects; see ``JSONFormatter``.
    case json
    /// One JSON object per line; see ``JSONFormatter``.
    case ndjson

    /// The formatter for this format. `forTerminal`: CSV escapes terminal control characters in
    /// text (the table always does, JSON always escapes them losslessly). `rowCap` and
    /// `precision` are the table's (see ``TableFormatter``).
    func formatter(forTerminal: Bool = false, rowCap: Int? = nil, precision: Int? = nil) -> any ResultFormatter {
        switch self {
        case .table: TableFormatter(rowCap: rowCap, precision: precision)
        case .csv: CSVFormatter(escapesControlCharacters: forTerminal)
        case .json: JSONFormatter(layout: .array)
        case .ndjson: JSONFormatter(layout: .lines)
        }
    }
}

/// Writes a result in one format.
///
///     var rows = MaterializedRows(columns: [ResultColumn(name: "close")], rows: [[.number(553.13)]])
///     try OutputFormat.csv.formatter().write(&rows, to: context.standardOutput)
protocol ResultFormatter {
    /// Writes the header and every remaining row of `rows` to `writer`.
    ///
    /// Each row is rendered into one string and written in one call. Does not flush.
    /// - Throws: ``OutputError`` from the writer, or whatever `rows` throws.
    func write<Rows: RowSource>(_ rows: inout Rows, to writer: any OutputWriter) throws
}
