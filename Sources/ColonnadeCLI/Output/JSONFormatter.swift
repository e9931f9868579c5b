import Colonnade

/// Writes a result as JSON: one array of objects (`json`), or one object per line (`ndjson`).
///
///     [
///     {"ticker":"AAPL","date":"2014-01-02","close":553.13,"volume":null},
///     {"ticker":"AAPL","date":"2014-01-03","close":540.98,"volume":98116900}
///     ]
///
/// Keys are the column names, in column order. Numbers are Swift's shortest round-trip
/// spelling, so a JSON parser reads back the same `Double`; JSON has no NaN or infinity, so
/// those are written as `null` — as JavaScript's `JSON.stringify` does — and cannot be told
/// from a missing value. Dates are `"YYYY-MM-DD"` strings. Strings escape `"`, `\`, every
/// control character (C0, DEL, C1), U+2028/U+2029 (so the output is also valid JavaScript)
/// and the bidirectional controls (`TerminalText`), all as `\uXXXX` — the same string to a
/// JSON parser, harmless on a terminal; other characters are written as UTF-8.
struct JSONFormatter: ResultFormatter {
    /// How the objects are laid out.
    enum Layout: Sendable {
        /// `[`, one object per line separated by commas, `]` — a single JSON document.
        case array
        /// One object per line, nothing else (NDJSON / JSON Lines).
        case lines
    }

    /// How the objects are laid out.
    var layout: Layout

    /// Creates a JSON formatter.
    init(layout: Layout) {
        self.layout = layout
    }

    func write<Rows: RowSource>(_ rows: inout Rows, to writer: any OutputWriter) throws {
        let keys = rows.columns.map { column in
            var key = ""
            Self.appendString(column.name, to: &key)
            return key + ":"
        }
        var line = ""
        var row: [Cell] = []
        var isFirst = true
        if layout == .array { try writer.write("[") }
        while try rows.nextRow(into: &row) {
            line.removeAll(keepingCapacity: true)
            if layout == .array { line += isFirst ? "\n" : ",\n" }
            isFirst = false
            line += "{"
            for (index, cell) in row.enumerated() {
                if index > 0 { line += "," }
                line += keys[index]
                Self.appendValue(cell, to: &line)
            }
            line += layout == .array ? "}" : "}\n"
            try writer.write(line)
        }
        if layout == .array { try writer.write(isFirst ? "]\n" : "\n]\n") }
    }

    static func appendValue(_ cell: Cell, to line: inout String) {
        switch cell {
        case .null: line += "null"
        case .integer(let value): line += value.description
        case .number(let value): line += value.isFinite ? value.description : "null"
        case .day(let day): line += "\"" + dayText(day) + "\""
        case .text(let text): appendString(text, to: &line)
        }
    }

    /// Appends `text` as a JSON string literal.
    static func appendString(_ text: String, to line: inout String) {
        line += "\""
        for scalar in text.unicodeScalars {
            switch scalar {
            case "\"": line += "\\\""
            case "\\": line += "\\\\"
            case "\n": line += "\\n"
            case "\r": line += "\\r"
            case "\t": line += "\\t"
            case "\u{08}": line += "\\b"
            case "\u{0C}": line += "\\f"
            case _ where TerminalText.needsEscape(scalar):
                let hex = String(scalar.value, radix: 16)
                line += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
            default:
                line.unicodeScalars.append(scalar)
            }
        }
        line += "\""
    }
}
