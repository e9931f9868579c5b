import Colonnade

/// Writes a result as CSV (RFC 4180): a header line of column names, then one line per row.
///
///     ticker,date,close,name
///     AAPL,2014-01-02,553.13,"Apple Inc., Common Stock"
///     MSFT,2014-01-03,,""
///
/// - A field containing a comma, a double quote, CR or LF is enclosed in double quotes, with
///   inner quotes doubled.
/// - Numbers are exact: Swift's shortest round-trip spelling, so `Double(field)` gives the same
///   value back (`2411643.0` stays as Swift prints it; NaN and infinities print as `nan`,
///   `inf`, `-inf`, which `Double(_:)`, pandas and Polars read back).
/// - Dates are `YYYY-MM-DD`; a null is an empty field, and empty text is `""` so the two stay
///   distinct (as PostgreSQL's `COPY … CSV` does).
/// - With `escapesControlCharacters` (the CLI sets it when standard output is a terminal), text
///   carries no terminal control characters: C0 controls other than CR/LF/TAB, DEL, C1 controls
///   and bidirectional controls are written as `\u{HEX}` (`TerminalText`), so `filter --format
///   csv` on a terminal cannot be hijacked by a hostile snapshot. CSV has no escape syntax for
///   them, so files and pipes get the exact text.
/// - Lines end in LF rather than RFC 4180's CRLF: what Unix tools, pandas, Polars and DuckDB
///   write by default, and every CSV reader accepts it.
struct CSVFormatter: ResultFormatter {
    /// Whether text is written with terminal control characters escaped (lossy; for terminals).
    var escapesControlCharacters: Bool

    /// Creates a CSV formatter.
    init(escapesControlCharacters: Bool = false) {
        self.escapesControlCharacters = escapesControlCharacters
    }

    func write<Rows: RowSource>(_ rows: inout Rows, to writer: any OutputWriter) throws {
        var line = ""
        for (index, column) in rows.columns.enumerated() {
            if index > 0 { line += "," }
            Self.appendField(column.name, to: &line, escaping: escapesControlCharacters)
        }
        try writer.writeLine(line)
        var row: [Cell] = []
        while try rows.nextRow(into: &row) {
            line.removeAll(keepingCapacity: true)
            for (index, cell) in row.enumerated() {
                if index > 0 { line += "," }
                switch cell {
                case .null: break
                case .integer(let value): line += value.description
                case .number(let value): line += value.description
                case .day(let day): line += dayText(day)
                case .text(let text): Self.appendField(text, to: &line, quotingEmpty: true, escaping: escapesControlCharacters)
                }
            }
            line += "\n"
            try writer.write(line)
        }
    }

    /// Appends `field`, quoted when RFC 4180 requires it (or when empty and `quotingEmpty`).
    static func appendField(_ field: String, to line: inout String, quotingEmpty: Bool = false, escaping: Bool = false) {
        let field = escaping ? TerminalText.escaped(field, lineBreaks: .kept) : field
        let needsQuotes = field.utf8.contains { $0 == UInt8(ascii: ",") || $0 == UInt8(ascii: "\"") || $0 == 0x0A || $0 == 0x0D }
        guard needsQuotes || (quotingEmpty && field.isEmpty) else {
            line += field
            return
        }
        line += "\""
        for character in field {
            if character == "\"" { line += "\"" }
            line.append(character)
        }
        line += "\""
    }
}
