#if canImport(Glibc)
import Glibc
#endif

/// Why an Arrow IPC or Parquet file could not be written or read.
///
/// Every case names the file (as the caller named it); malformed input also gives the byte offset
/// where the reader found the problem.
public enum InteropError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The input ends before `needed` bytes at `offset` (a truncated file or a lying length).
    case truncated(file: String, offset: Int, needed: Int)
    /// The bytes at `offset` are not what the format allows: `detail` says what was found.
    case malformed(file: String, offset: Int, detail: String)
    /// The file is neither an Arrow IPC file or stream nor a Parquet file.
    case unrecognizedFormat(file: String)
    /// The data is compressed with a codec Colonnade does not implement (`ZSTD`, `GZIP`, `LZ4`…).
    case unsupportedCodec(file: String, codec: String)
    /// A column Colonnade cannot read: `type` says why, as a phrase ("type utf8, which is not a
    /// ticker, a date or a number", "a second date column").
    case unsupportedColumn(file: String, column: String, type: String)
    /// A column the table needs (`ticker`/`symbol`, `date`) is missing.
    case missingColumn(file: String, column: String, available: [String])
    /// A ticker or date is null.
    case nullKey(file: String, column: String, row: Int)
    /// Two files or batches disagree about the columns.
    case schemaMismatch(file: String, detail: String)
    /// A system call failed (`operation` is for example `create`, `write`, `rename`).
    case io(file: String, operation: String, errno: Int32)
    /// The output file could not be replaced safely (a read-only file, a dangling symbolic link, a
    /// FIFO, a missing directory…); the file there is untouched.
    case cannotReplace(ReplacementFileError)
    /// The rows do not form a table (for example one date twice for a ticker).
    case table(file: String, TableError)
    /// A date (or a timestamp's day) outside the dates a table holds, 0001-01-01 … 9999-12-31
    /// (`Day.storableDayNumbers`): `value` says what the file holds (a day, or the raw number when
    /// its day does not even fit a day number).
    case dateOutOfRange(file: String, column: String, row: Int, value: String)
    /// Timestamps with times of day other than midnight put two rows of one ticker on one day
    /// (`rows`, the file's rows): a table keeps one row per ticker and day, and which to keep is
    /// not Colonnade's guess.
    case timesOnOneDay(file: String, column: String, ticker: String, day: Int32, rows: [Int])
    /// A directory holding `_delta_log/`: a Delta Lake table, whose data files are the ones its
    /// log lists, not every file in the directory.
    case deltaTable(directory: String)
    /// A Hive partition key (`year=2014`) that the rows of a file under it disagree with.
    case partitionMismatch(file: String, key: String, value: String, detail: String)
    /// A zip of Parquet or Arrow files could not be read.
    case archive(ZipError)

    public var description: String {
        switch self {
        case let .truncated(file, offset, needed):
            return "\(file): truncated: needs \(needed) bytes at offset \(offset), past the end of the input"
        case let .malformed(file, offset, detail):
            return "\(file): malformed at byte \(offset): \(detail)"
        case let .unrecognizedFormat(file):
            return "\(file): not an Arrow IPC file or stream, nor a Parquet file (no ARROW1, continuation marker or PAR1 magic)"
        case let .unsupportedCodec(file, codec):
            return
                "\(file): compressed with \(codec), which Colonnade does not decode (it reads uncompressed, Snappy, GZIP, LZ4 and ZSTD data)"
        case let .unsupportedColumn(file, column, type):
            return "\(file): column '\(column)': \(type)"
        case let .missingColumn(file, column, available):
            return "\(file): no \(column) column (columns: \(available.joined(separator: ", ")))"
        case let .nullKey(file, column, row):
            return "\(file): null \(column) in row \(row)"
        case let .schemaMismatch(file, detail):
            return "\(file): \(detail)"
        case let .io(file, operation, code):
            return "\(file): \(operation) failed: \(String(cString: strerror(code)))"
        case let .cannotReplace(error):
            return error.description
        case let .table(file, error):
            return "\(file): \(error)"
        case let .timesOnOneDay(file, column, ticker, day, rows):
            return "\(file): column '\(column)': ticker \(ticker) has \(rows.count) rows on \(Day.format(day: day)) (rows "
                + rows.map(String.init).joined(separator: ", ")
                + ") at different times of day; a table holds one row per ticker and day, so keep one per day before importing"
        case let .deltaTable(directory):
            return "\(directory): a Delta Lake table (it holds _delta_log/), read through its log (DeltaTable), "
                + "not as a directory: its files are the ones its log lists, not every file there"
        case let .partitionMismatch(file, key, value, detail):
            return "\(file): the partition key \(key)=\(value) of its directory disagrees with its \(detail)"
        case let .archive(error):
            return error.description
        case let .dateOutOfRange(file, column, row, value):
            return "\(file): column '\(column)' row \(row): \(value) is outside the dates a table holds, \(Day.storableRangeDescription)"
        }
    }
}
