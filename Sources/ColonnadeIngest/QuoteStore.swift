#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade
import DataLinkFormat

/// One snapshot file and every way quotes get into it: files, directories, zips, standard input,
/// Arrow and Parquet (``import(_:options:)``), and Nasdaq Data Link (``fetch(_:options:)``).
///
///     let store = try QuoteStore(at: "quotes.snapshot")
///     let imported = try store.import(["WIKI-AAPL.csv", "prices.parquet"])
///     var options = FetchOptions(client: DataLinkConfiguration(transport: .urlSession), table: "WIKI/PRICES")
///     options.update = true
///     let fetched = try store.fetch(["AAPL", "MSFT"], options: options)
///
/// (`.urlSession` sends the requests in this process; it comes with the `DataLinkURLSession`
/// product, the only one that links FoundationNetworking.)
///
/// Every write is all or nothing and goes through the snapshot's write lock (`SnapshotLock`),
/// held from the load of the stored table to the rename of the new file, so two writers never
/// lose each other's rows; the saved file replaces the old one atomically (`QuoteTable.save`).
/// Nothing here prints: progress and waits are reported through the options' callbacks.
public struct QuoteStore: Sendable {
    /// The snapshot's path (it need not exist yet).
    public let path: String

    /// A store for the snapshot at `path`.
    ///
    /// - Throws: ``IngestFailure`` when no files may be created in the snapshot's directory (the
    ///   lock file and the replacement go beside it), before anything is decoded or downloaded.
    public init(at path: String) throws(IngestFailure) {
        self.path = path
        let slash = path.lastIndex(of: "/")
        let directory = slash.map { $0 == path.startIndex ? "/" : String(path[..<$0]) } ?? "."
        if access(directory, W_OK | X_OK) != 0, errno == EACCES || errno == EROFS {
            let why = errno == EROFS ? "a read-only file system" : "permission denied"
            throw IngestFailure("cannot write \(path): \(why) (no new files may be created in \(directory))")
        }
    }

    /// The stored table: the snapshot loaded, or an empty table when there is no file yet.
    public func load() throws -> QuoteTable {
        try QuoteTable.loadForUpdate(path)
    }

    /// The store's versions, oldest first (a single-file snapshot is one version).
    public func log() throws -> SnapshotLog {
        try SnapshotStore(at: path).log()
    }

    /// The table as it was at version `number` (the current one when nil).
    public func table(atVersion number: Int? = nil, verify: Bool = true) throws -> QuoteTable {
        try SnapshotStore(at: path).table(atVersion: number, verify: verify)
    }

    /// Appends (upserts) `rows` as a new version that writes only them, under the write lock;
    /// compacts afterwards when `SnapshotStore.needsCompaction` says so (`options.autoCompact`).
    /// - Returns: the version committed, and the compaction's, if one followed.
    @discardableResult
    public func append(
        _ rows: QuoteTable, options: ImportOptions = ImportOptions()
    ) throws -> (commit: SnapshotCommit, compaction: SnapshotCommit?) {
        try commitAppend(rows, options: options)
    }

    /// Takes the snapshot's write lock, telling `waiting` (with the holder's process id when
    /// known) if another writer holds it.
    func lock(wait: Bool, waiting: (@Sendable (Int32?) -> Void)?) throws -> SnapshotLock {
        try SnapshotLock(snapshotAt: path, wait: wait) { holder in waiting?(holder) }
    }
}

/// A failure of the ingest layer that is not about the input's bytes (those are
/// `ResponseError`, `InteropError`, `DataLinkError`, `SnapshotError`): one line saying what went
/// wrong.
public struct IngestFailure: Error, Sendable, CustomStringConvertible {
    /// What went wrong, in one line.
    public var message: String

    /// A failure saying `message`.
    public init(_ message: String) { self.message = message }

    public var description: String { message }
}
