import Foundation

/// Writes a result as aligned columns for people to read.
///
///     ticker  date          close     volume
///     ------  ----------  -------  ---------
///     AAPL    2014-01-02   553.13    8398851
///     AAPL    2014-01-03    540.98
///     2 of 20,000,000 rows in 3.1 ms
///
/// Numbers are right-aligned (a column is numeric when all its non-null cells are) in their
/// shortest round-trip form, with an integral `2411643.0` shown as `2411643`; dates are
/// `YYYY-MM-DD`; nulls are blank; control characters in text are escaped (`\n`, `\u{1B}`) so a
/// row stays on one line. Widths count `Character`s, so wide (East Asian) characters misalign.
/// Every row is held in memory to measure the columns: use a limit, or CSV/NDJSON for bulk.
struct TableFormatter: ResultFormatter {
    /// The line after the table, if any.
    var footer: TableFooter?

    /// Creates a table formatter.
    init(footer: TableFooter? = nil) {
        self.footer = footer
    }

    func write<Rows: RowSource>(_ rows: inout Rows, to writer: any OutputWriter) throws {
        let columns = rows.columns
        let names = columns.map { TerminalText.escaped($0.name) }
        var texts: [[String]] = []
        var widths = names.map(\.count)
        var isNumeric = [Bool](repeating: true, count: columns.count)
        var hasValue = [Bool](repeating: false, count: columns.count)
        var row: [Cell] = []
        while try rows.nextRow(into: &row) {
            var line: [String] = []
            line.reserveCapacity(columns.count)
            for (index, cell) in row.enumerated() {
                let text = Self.text(of: cell)
                switch cell {
                case .null: break
                case .integer, .number: hasValue[index] = true
                case .day, .text: hasValue[index] = true; isNumeric[index] = false
                }
                widths[index] = max(widths[index], text.count)
                line.append(text)
            }
            texts.append(line)
        }
        let rightAligned = zip(isNumeric, hasValue).map { $0 && $1 }

        if !columns.isEmpty {
            try writer.writeLine(Self.line(names, widths: widths, rightAligned: rightAligned))
            try writer.writeLine(Self.line(widths.map { String(repeating: "-", count: $0) }, widths: widths, rightAligned: rightAligned))
            for line in texts {
                try writer.writeLine(Self.line(line, widths: widths, rightAligned: rightAligned))
            }
        }
        if let footer {
            try writer.writeLine(footer.text)
        }
    }

    private static func line(_ fields: [String], widths: [Int], rightAligned: [Bool]) -> String {
        var line = ""
        for (index, field) in fields.enumerated() {
            let padding = String(repeating: " ", count: widths[index] - field.count)
            if index > 0 { line += "  " }
            if rightAligned[index] {
                line += padding + field
            } else if index < fields.count - 1 {
                line += field + padding
            } else {
                line += field // no trailing spaces
            }
        }
        return line
    }

    static func text(of cell: Cell) -> String {
        switch cell {
        case .null: ""
        case .integer(let value): value.description
        case .number(let value): value.compactText
        case .day(let day): dayText(day)
        case .text(let text): TerminalText.escaped(text)
        }
    }
}

/// The line under a table: `1,234 of 20,000,000 rows in 3.1 ms`.
struct TableFooter: Sendable, Equatable {
    /// Rows that matched (or were shown).
    var matched: Int
    /// Rows in the table.
    var total: Int
    /// How long the query took, if it was measured.
    var elapsed: Duration?

    /// Creates a footer.
    init(matched: Int, total: Int, elapsed: Duration? = nil) {
        self.matched = matched
        self.total = total
        self.elapsed = elapsed
    }

    /// The footer line, without a line feed. Durations under 0.1 ms print in µs, under 1 s in
    /// ms with one decimal, longer in s with two decimals.
    var text: String {
        var text = "\(matched.groupedText) of \(total.groupedText) \(total == 1 ? "row" : "rows")"
        if let elapsed {
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) * 1e-18
            text += " in " + Self.durationText(seconds: seconds)
        }
        return text
    }

    static func durationText(seconds: Double) -> String {
        switch seconds {
        case ..<0.000_1: String(format: "%.0f µs", seconds * 1e6)
        case ..<1: String(format: "%.1f ms", seconds * 1e3)
        default: String(format: "%.2f s", seconds)
        }
    }
}
