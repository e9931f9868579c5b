/// Why a table could not be built or changed.
public enum TableError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Two rows of one ticker have the same date.
    case duplicateDate(ticker: String, day: Int32, rows: [Int])
    /// Columns of different lengths.
    case lengthMismatch(column: String, expected: Int, actual: Int)
    /// Two columns normalize to the same identifier.
    case duplicateColumn(String)
    /// A value column no query could reach: its identifier is `date`, `ticker` or the date
    /// column's, or empty (see `ColumnDescriptor.unusableIdentifierReason`).
    case unusableColumn(name: String, reason: String)
    /// More value columns than a table may have (`QuoteTable.maximumColumnCount`).
    case tooManyColumns(count: Int, limit: Int)
    /// The ticker index does not tile the rows.
    case inconsistentIndex(ticker: String, detail: String)
    /// Dates are not ascending within a ticker.
    case unsortedDates(ticker: String, row: Int)
    /// A date outside the storable range 0001-01-01 … 9999-12-31 (`Day.storableDayNumbers`).
    case dateOutOfRange(ticker: String, row: Int, day: Int32)
    /// A row without a date (the date column's validity bitmap has a zero bit).
    case nullDate(ticker: String, row: Int)

    /// One line naming the ticker, column or row.
    public var description: String {
        switch self {
        case let .duplicateDate(ticker, day, rows):
            "duplicate date \(Day.format(day: day)) for ticker \(ticker) (rows \(rows.map(String.init).joined(separator: ", ")))"
        case let .lengthMismatch(column, expected, actual):
            "column '\(column)' has \(actual) rows, expected \(expected)"
        case let .duplicateColumn(name):
            "two columns are both named '\(name)'"
        case let .unusableColumn(name, reason):
            "column '\(name)' cannot be a value column: \(reason)"
        case let .tooManyColumns(count, limit):
            "\(count) value columns; a table holds at most \(limit)"
        case let .inconsistentIndex(ticker, detail):
            "ticker index is inconsistent at \(ticker): \(detail)"
        case let .unsortedDates(ticker, row):
            "dates of ticker \(ticker) are not strictly ascending at row \(row)"
        case let .dateOutOfRange(ticker, row, day):
            "date \(Day.format(day: day)) of ticker \(ticker) (row \(row)) is outside the dates a table holds, \(Day.storableRangeDescription)"
        case let .nullDate(ticker, row):
            "row \(row) of ticker \(ticker) has no date; every row needs one"
        }
    }
}
