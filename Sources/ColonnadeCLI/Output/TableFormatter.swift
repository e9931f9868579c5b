import Colonnade
import Foundation

/// Writes a result as aligned columns for people to read.
///
///     ticker  date          close     volume
///     ------  ----------  -------  ---------
///     AAPL    2014-01-02   553.13    8398851
///     AAPL    2014-01-03   540.98
///
/// Numbers are right-aligned on the decimal point (a column is numeric when all its non-null
/// cells are), in their shortest round-trip form with an integral `2411643.0` shown as `2411643`;
/// a column whose ``ResultColumn/maximumDecimals`` is set (computed values, aggregates), or every
/// column under `precision`, is rounded to at most that many decimals. Dates are `YYYY-MM-DD`;
/// nulls are blank; control characters in text are escaped (`\n`, `\u{1B}`) so a row stays on one
/// line. Widths count `Character`s, so wide (East Asian) characters misalign.
///
/// Memory stays bounded whatever the number of rows: with `rowCap` only the first and last rows
/// are kept (the rows between are skipped, with a `… 50,383 more rows …` line in their place);
/// without it the first ``measuredRows`` rows set the column widths and every later row is
/// written as it comes (a later, wider value widens its own line only).
struct TableFormatter: ResultFormatter {
    /// Show at most this many rows: the first half and the last half. `nil`: every row.
    var rowCap: Int?
    /// At most this many decimals in every number column (`--precision`); `nil`: each column's own.
    var precision: Int?

    /// Rows read to measure the columns before the first line is written (when not capped).
    static let measuredRows = 1_000

    /// Creates a table formatter.
    init(rowCap: Int? = nil, precision: Int? = nil) {
        self.rowCap = rowCap
        self.precision = precision
    }

    func write<Rows: RowSource>(_ rows: inout Rows, to writer: any OutputWriter) throws {
        _ = try writeTable(&rows, count: nil, to: writer)
    }

    /// Writes the table; returns how many rows it showed.
    ///
    /// - Parameter count: how many rows `rows` holds, when known: a capped table then skips the
    ///   rows it does not show (``RowSource/skipRows(_:)``) instead of reading them.
    func writeTable<Rows: RowSource>(_ rows: inout Rows, count: Int?, to writer: any OutputWriter) throws -> Int {
        let columns = rows.columns
        let decimals = columns.map { precision ?? $0.maximumDecimals }
        var layout = Layout(names: columns.map { TerminalText.escaped($0.name) })
        var row: [Cell] = []
        func next() throws -> [String]? {
            guard try rows.nextRow(into: &row) else { return nil }
            return layout.measure(row, decimals: decimals)
        }
        var head: [[String]] = [], tail: [[String]] = [], omitted = 0
        if let rowCap {
            let tailCount = rowCap / 2, headCount = rowCap - tailCount
            while head.count < headCount, let line = try next() { head.append(line) }
            if let count {
                // Known size: skip straight to the last rows.
                let skip = max(0, count - headCount - tailCount)
                if skip > 0 { try rows.skipRows(skip) }
                omitted = skip
                while let line = try next() { tail.append(line) }
            } else {
                // Unknown size: keep the last rows in a ring.
                var ring: [[String]] = [], start = 0
                while let line = try next() {
                    if ring.count < tailCount {
                        ring.append(line)
                    } else if tailCount > 0 {
                        ring[start] = line
                        start = (start + 1) % tailCount
                        omitted += 1
                    } else {
                        omitted += 1
                    }
                }
                tail = Array(ring[start...] + ring[..<start])
            }
        } else {
            while head.count < Self.measuredRows, let line = try next() { head.append(line) }
        }
        guard !columns.isEmpty else { return 0 }
        try writer.writeLine(layout.line(layout.names, header: true))
        try writer.writeLine(layout.line(layout.widths.map { String(repeating: "-", count: $0) }, header: true))
        for line in head { try writer.writeLine(layout.line(line)) }
        var shown = head.count + tail.count
        if omitted > 0 {
            try writer.writeLine("… \(omitted.groupedText) more \(omitted == 1 ? "row" : "rows") …")
        }
        for line in tail { try writer.writeLine(layout.line(line)) }
        if rowCap == nil {
            // Past the measured rows: written as they come.
            var copy = layout
            while try rows.nextRow(into: &row) {
                try writer.writeLine(copy.line(copy.measure(row, decimals: decimals, widening: false)))
                shown += 1
            }
        }
        return shown
    }

    /// The text of a cell, numbers rounded to at most `decimals` decimals when given.
    static func text(of cell: Cell, decimals: Int? = nil) -> String {
        switch cell {
        case .null: ""
        case .integer(let value): value.description
        case .number(let value): decimals.map { value.roundedText(decimals: $0) } ?? value.compactText
        case .day(let day): dayText(day)
        case .text(let text): TerminalText.escaped(text)
        }
    }

    /// Column widths, which columns are numeric, and each numeric column's widths before and
    /// after the decimal point.
    private struct Layout {
        let names: [String]
        var widths: [Int]
        /// Characters before the decimal point (the whole text for a number without one).
        var integerWidths: [Int]
        /// The decimal point and the digits after it.
        var fractionWidths: [Int]
        var isNumeric: [Bool]
        var hasValue: [Bool]

        init(names: [String]) {
            self.names = names
            widths = names.map(\.count)
            integerWidths = Array(repeating: 0, count: names.count)
            fractionWidths = Array(repeating: 0, count: names.count)
            isNumeric = Array(repeating: true, count: names.count)
            hasValue = Array(repeating: false, count: names.count)
        }

        /// The row's texts, numbers already padded after the decimal point where the column
        /// has decimals; widens the columns (unless `widening` is false: rows past the measured ones).
        mutating func measure(_ row: [Cell], decimals: [Int?], widening: Bool = true) -> [String] {
            var texts = [String]()
            texts.reserveCapacity(row.count)
            for (index, cell) in row.enumerated() {
                let text = TableFormatter.text(of: cell, decimals: decimals[index])
                switch cell {
                case .null: break
                case .integer, .number: hasValue[index] = true
                case .day, .text:
                    hasValue[index] = true
                    isNumeric[index] = false
                }
                if case .number = cell, let (integer, fraction) = Self.split(text), widening {
                    integerWidths[index] = max(integerWidths[index], integer)
                    fractionWidths[index] = max(fractionWidths[index], fraction)
                    widths[index] = max(widths[index], integerWidths[index] + fractionWidths[index])
                } else if widening {
                    widths[index] = max(widths[index], text.count)
                }
                texts.append(text)
            }
            return texts
        }

        /// `(characters before the point, the point and the digits after)` of a plain decimal
        /// (`-12.5` → (3, 2), `7` → (1, 0)); `nil` for `nan`, `inf` or an exponent form.
        static func split(_ text: String) -> (Int, Int)? {
            guard text.allSatisfy({ $0.isNumber || $0 == "." || $0 == "-" }) else { return nil }
            guard let point = text.firstIndex(of: ".") else { return (text.count, 0) }
            return (text.distance(from: text.startIndex, to: point), text.distance(from: point, to: text.endIndex))
        }

        /// One line: text left-aligned, numbers right-aligned on the decimal point.
        func line(_ fields: [String], header: Bool = false) -> String {
            var line = ""
            for (index, field) in fields.enumerated() {
                var field = field
                let rightAligned = isNumeric[index] && hasValue[index]
                if rightAligned, !header, fractionWidths[index] > 0, let (_, fraction) = Self.split(field) {
                    field += String(repeating: " ", count: max(0, fractionWidths[index] - fraction))
                }
                let padding = String(repeating: " ", count: max(0, widths[index] - field.count))
                if index > 0 { line += "  " }
                if rightAligned {
                    line += padding + field
                } else if index < fields.count - 1 {
                    line += field + padding
                } else {
                    line += field  // no trailing spaces
                }
            }
            if let last = line.lastIndex(where: { $0 != " " }) { line = String(line[...last]) } else { line = "" }
            return line
        }
    }
}

/// The line a table on a terminal leaves on standard error: `10 of 456 matching rows shown in 3.1 ms`.
struct TableFooter: Sendable, Equatable {
    /// Rows printed.
    var shown: Int
    /// Rows that matched.
    var matched: Int
    /// How long the query took, if it was measured.
    var elapsed: Duration?

    /// Creates a footer.
    init(shown: Int, matched: Int, elapsed: Duration? = nil) {
        self.shown = shown
        self.matched = matched
        self.elapsed = elapsed
    }

    /// The footer line, without a line feed. Durations under 0.1 ms print in µs, under 1 s in
    /// ms with one decimal, longer in s with two decimals.
    var text: String {
        var text = "\(shown.groupedText) of \(matched.groupedText) matching \(matched == 1 ? "row" : "rows") shown"
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
