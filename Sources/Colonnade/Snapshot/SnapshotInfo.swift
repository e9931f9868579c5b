/// What a snapshot file holds, read from its header and footer without touching the column payloads
/// (for `colonnade info`).
///
///     let info = try QuoteTable.snapshotInfo(at: "snapshots/sample.snapshot")
///     print(info.rowCount, info.formatVersion)      // 100800 1.0
public struct SnapshotInfo: Sendable, Equatable {
    /// The path as given.
    public var path: String
    /// The format version as `major.minor`.
    public var formatVersion: String { "\(majorVersion).\(minorVersion)" }
    /// The file's major format version.
    public var majorVersion: UInt16
    /// The file's minor format version.
    public var minorVersion: UInt16
    /// The file's size in bytes.
    public var fileSize: Int
    /// The number of rows.
    public var rowCount: Int
    /// The number of tickers.
    public var tickerCount: Int
    /// The value columns.
    public var schema: [ColumnDescriptor]
    /// The source's name of the date column.
    public var dateColumnName: String
    /// The table's free-form metadata.
    public var metadata: [String: String]
    /// Bytes of column payloads (values and validity, padding included).
    public var payloadBytes: Int
    /// Bytes of the footer.
    public var footerBytes: Int
    /// Whether the file carries block summaries for every column.
    public var hasBlockSummaries: Bool
    /// Identifiers of the columns that have a validity bitmap (may hold nulls).
    public var nullableColumns: [String]
}
