/// One value of a result, independent of the engine's column types.
enum Cell: Sendable, Equatable {
    /// No value (the source sent `null`, or an aggregate over no rows).
    case null
    /// An exact integer (counts, integral volumes).
    case integer(Int64)
    /// A floating-point number, printed in its shortest round-trip form; may be NaN or ±∞.
    case number(Double)
    /// A calendar day, as days since 1970-01-01.
    case day(Int32)
    /// Text (tickers, names).
    case text(String)
}

/// A result column's header.
struct ResultColumn: Sendable, Equatable {
    /// The column identifier shown in headers and used as the JSON key (`adj_close`).
    var name: String
    /// At most this many decimals in a table (computed values and aggregates: 6); `nil`: the
    /// shortest round-trip form. CSV and JSON always keep every digit.
    var maximumDecimals: Int?

    /// Creates a column header.
    init(name: String) {
        self.name = name
    }

    /// Creates a column header whose numbers a table rounds to at most `maximumDecimals` decimals.
    init(name: String, maximumDecimals: Int?) {
        self.name = name
        self.maximumDecimals = maximumDecimals
    }

    /// Decimals shown in tables for computed values and aggregates.
    static let computedDecimals = 6
}

/// Rows of a result, read once from first to last, so a formatter can stream them in constant
/// memory (the table format excepted: it must see every row to align the columns).
///
/// The engine adapts its query results to this; ``MaterializedRows`` holds rows in memory.
protocol RowSource {
    /// The header: what each cell of a row is.
    var columns: [ResultColumn] { get }

    /// Replaces the contents of `row` with the next row's cells, one per column, and returns
    /// `true`; returns `false` once every row has been read. Reusing `row` lets a source avoid
    /// an allocation per row.
    mutating func nextRow(into row: inout [Cell]) throws -> Bool

    /// Passes over the next `count` rows (fewer if the rows end first) without producing them.
    mutating func skipRows(_ count: Int) throws
}

extension RowSource {
    /// Reads and drops `count` rows; sources that can skip cheaply do better.
    mutating func skipRows(_ count: Int) throws {
        var row: [Cell] = []
        for _ in 0 ..< count {
            guard try nextRow(into: &row) else { return }
        }
    }
}

/// A result held in memory as an array of rows.
struct MaterializedRows: RowSource, Sendable {
    let columns: [ResultColumn]
    /// The rows; each has one cell per column.
    let rows: [[Cell]]
    private var position = 0

    /// Creates a result from rows.
    ///
    /// - Precondition: every row has `columns.count` cells.
    init(columns: [ResultColumn], rows: [[Cell]]) {
        precondition(rows.allSatisfy { $0.count == columns.count }, "every row needs one cell per column")
        self.columns = columns
        self.rows = rows
    }

    mutating func nextRow(into row: inout [Cell]) -> Bool {
        guard position < rows.count else { return false }
        row = rows[position]
        position += 1
        return true
    }
}
