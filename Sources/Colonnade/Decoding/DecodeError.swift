/// Where in an input a decoding problem was found.
///
/// `line` and `column` are 1-based and count bytes (a line ends at LF); `row` is the 1-based data
/// row (the first row after a CSV header, or the first element of a JSON `data` array);
/// `columnName` is the source's name for the column being read.
public struct DecodePosition: Sendable, Hashable, CustomStringConvertible {
    /// The input's name as the caller gave it (usually the file name).
    public var source: String
    /// The 0-based byte offset of the offending byte.
    public var byteOffset: Int
    /// The 1-based line of `byteOffset`.
    public var line: Int
    /// The 1-based byte column of `byteOffset` within its line.
    public var column: Int
    /// The 1-based data row, when the problem is inside a row.
    public var row: Int?
    /// The source's name of the column being read, when known.
    public var columnName: String?

    /// A position; see the properties.
    public init(source: String, byteOffset: Int, line: Int, column: Int, row: Int? = nil, columnName: String? = nil) {
        self.source = source
        self.byteOffset = byteOffset
        self.line = line
        self.column = column
        self.row = row
        self.columnName = columnName
    }

    /// `source:line:column (byte N): row R, column 'Name'`.
    public var description: String {
        var text = "\(source):\(line):\(column) (byte \(byteOffset))"
        if let row { text += ": row \(row)" }
        if let columnName { text += row == nil ? ": column '\(columnName)'" : ", column '\(columnName)'" }
        return text
    }
}

/// Why bytes (JSON or CSV rows of quotes) could not be decoded.
///
/// Every case names its input (`source`); cases about bytes carry a `DecodePosition` (byte offset,
/// line, column, data row, column name). A format module wraps these in its own error, adding what
/// is about its shapes (the Data Link format's `ResponseError`). `description` is one line, for example:
///
///     WIKI-FDX.csv:1234:17 (byte 56789): row 1233, column 'High': expected a number, found 'abc'
public enum DecodeError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The input ended where more was expected.
    case truncated(DecodePosition, expected: String)
    /// A byte that the grammar does not allow here (wrong nesting, a missing comma, …).
    case malformed(DecodePosition, expected: String, found: String)
    /// A value that should be a number (or null) is something else.
    case badNumber(DecodePosition, found: String)
    /// A date that is not a valid `YYYY-MM-DD`.
    case badDate(DecodePosition, found: String)
    /// A row with more or fewer values than there are columns.
    case rowWidth(DecodePosition, expected: Int, found: Int)
    /// A datatable column type this decoder does not know.
    case unknownColumnType(DecodePosition, type: String)
    /// A required part is missing: `column_names`, `data`, the date or ticker column, …
    case missing(source: String, what: String)
    /// Two columns whose identifiers are equal (see `ColumnDescriptor.identifier(for:)`).
    case duplicateColumn(source: String, name: String)
    /// A value column whose name queries could not reach: its identifier is `date` or `ticker`
    /// (or the date column's), or empty (no letter or digit). Such a column is refused
    /// rather than renamed, so that a name never silently means another column.
    case unusableColumnName(source: String, name: String, reason: String)
    /// More value columns than a table may have (`QuoteTable.maximumColumnCount`).
    case tooManyColumns(source: String, count: Int, limit: Int)
    /// One response holds two rows for the same ticker and date (1-based data rows).
    case duplicateDate(source: String, ticker: String, date: String, rows: [Int])
    /// The file could not be read.
    case unreadable(path: String, reason: String)
    /// A buffer for the decoded rows could not be allocated: `bytes` (`Int.max` when the size
    /// overflows) for `rows` rows. Nothing of the input is kept.
    case outOfMemory(source: String, rows: Int, bytes: Int)

    /// The input's name.
    public var source: String {
        switch self {
        case .missing(let s, _), .duplicateColumn(let s, _), .unusableColumnName(let s, _, _), .tooManyColumns(let s, _, _),
            .duplicateDate(let s, _, _, _), .unreadable(let s, _), .outOfMemory(let s, _, _):
            s
        case .truncated(let p, _), .malformed(let p, _, _), .badNumber(let p, _), .badDate(let p, _),
            .rowWidth(let p, _, _), .unknownColumnType(let p, _):
            p.source
        }
    }

    /// The position, for the cases about bytes.
    public var position: DecodePosition? {
        switch self {
        case .truncated(let p, _), .malformed(let p, _, _), .badNumber(let p, _), .badDate(let p, _),
            .rowWidth(let p, _, _), .unknownColumnType(let p, _):
            p
        default:
            nil
        }
    }

    /// One line: control characters from the input (in names, messages, keys) are escaped.
    public var description: String { Self.oneLine(message) }

    /// `text` on one line: line breaks, tabs and the other scalars `TerminalText` escapes.
    package static func oneLine(_ text: String) -> String { TerminalText.escaped(text) }

    /// `bytes` as `12.3 MiB`, `4.0 GiB` or `512 bytes`.
    package static func sizeText(_ bytes: Int) -> String {
        if bytes < 1 << 20 { return "\(bytes) bytes" }
        let gib = bytes >= 1 << 30
        let value = Double(bytes) / Double(gib ? 1 << 30 : 1 << 20)
        let tenths = Int((value * 10).rounded())
        return "\(tenths / 10).\(tenths % 10) \(gib ? "GiB" : "MiB")"
    }

    private var message: String {
        switch self {
        case let .truncated(p, expected):
            "\(p): input ends early, expected \(expected)"
        case let .malformed(p, expected, found):
            "\(p): expected \(expected), found \(found)"
        case let .badNumber(p, found):
            "\(p): expected a number, found \(found)"
        case let .badDate(p, found):
            "\(p): expected a date YYYY-MM-DD, found \(found)"
        case let .rowWidth(p, expected, found):
            found < expected
                ? "\(p): row has \(found) values, expected \(expected) (too few)"
                : "\(p): row has more than \(expected) values (too many)"
        case let .unknownColumnType(p, type):
            "\(p): unknown column type '\(type)'"
        case let .missing(source, what):
            "\(source): missing \(what)"
        case let .duplicateColumn(source, name):
            "\(source): two columns named '\(name)'"
        case let .unusableColumnName(source, name, reason):
            "\(source): column '\(name)' cannot be a value column: \(reason)"
        case let .tooManyColumns(source, count, limit):
            "\(source): \(count) value columns; a table holds at most \(limit)"
        case let .duplicateDate(source, ticker, date, rows):
            "\(source): duplicate date \(date) for ticker \(ticker) (rows \(rows.map(String.init).joined(separator: " and ")))"
        case let .unreadable(path, reason):
            "\(path): cannot read: \(reason)"
        case let .outOfMemory(source, rows, bytes):
            "\(source): out of memory: cannot allocate \(bytes == Int.max ? "more bytes than an address space holds" : Self.sizeText(bytes))"
                + " for \(rows) decoded rows"
        }
    }
}
