#if canImport(Glibc)
import Glibc
#endif

extension QuoteTable {
    /// Changes the snapshot at `path` safely against other writers: takes its write lock
    /// (`SnapshotLock`), loads it (or starts from an empty table when no file exists there), lets
    /// `body` change the table, saves it atomically, and releases the lock. Two processes (or
    /// threads) updating one snapshot at once run one after the other, so neither change is lost.
    ///
    ///     try QuoteTable.update(at: "snapshots/quotes.snapshot") { table in
    ///         table.upsert(try QuoteImporter.importFiles(["AAPL.json"]))
    ///     }
    ///
    /// An existing snapshot gets the table as a new version (`SnapshotStore`: a single-file
    /// snapshot is upgraded to a store; every earlier version stays readable until `gc`); where
    /// nothing exists, a single-file snapshot is written.
    ///
    /// Readers are never blocked: they keep mapping the old file until the new one is renamed in.
    /// If `body` throws, nothing is saved and the error is rethrown. Only a path that does not
    /// exist starts a new table; a dangling symbolic link, a FIFO or a damaged snapshot is an error.
    ///
    /// - Parameters:
    ///   - path: the snapshot file (a symbolic link is written through to its target).
    ///   - wait: when another writer holds the lock, wait for it (`true`), or throw
    ///     `SnapshotError.locked` at once (`false`).
    ///   - verify: load with payload verification (see `load(from:verify:)`).
    ///   - durable: `fsync` the new file and its directory (see `save(to:durable:)`).
    ///   - threads: the most threads the verifying load and the save use (1: the calling thread only).
    ///   - whileWaiting: called once before waiting for another writer, with its PID if known.
    ///   - command: the command recorded with the version (see `SnapshotStore.commandText(_:)`).
    ///   - body: changes the table.
    /// - Returns: the table as saved.
    /// - Throws: `SnapshotError` from locking, loading or saving, or what `body` throws.
    /// - Complexity: a load and a save of the whole snapshot, plus `body`.
    @discardableResult
    public static func update(
        at path: String, wait: Bool = true, verify: Bool = true, durable: Bool = true,
        threads: Int = QueryOptions.availableCores, command: String = "",
        whileWaiting: (_ holder: Int32?) -> Void = { _ in },
        _ body: (inout QuoteTable) throws -> Void
    ) throws -> QuoteTable {
        let lock = try SnapshotLock(snapshotAt: path, wait: wait, whileWaiting: whileWaiting)
        defer { lock.release() }
        var table = try loadForUpdate(path, verify: verify, threads: threads)
        try body(&table)
        _ = try SnapshotStore(at: path).writeLocked(table, command: command, durable: durable, threads: threads)
        return table
    }

    /// The snapshot at `path`, or an empty table when nothing exists there (`lstat` says ENOENT),
    /// for a caller that will save it back (under a `SnapshotLock`).
    ///
    /// Anything else that is not a readable regular file is an error, never a fresh start; so is a
    /// snapshot the save could not replace (`readOnly`), found before any work is done.
    /// - Throws: `SnapshotError`, as `load(from:verify:)` and `FileTarget` do.
    public static func loadForUpdate(
        _ path: String, verify: Bool = true,
        threads: Int = QueryOptions.availableCores
    ) throws(SnapshotError) -> QuoteTable {
        let target: FileTarget
        do {
            target = try FileTarget(forWriting: path)
            try target.checkWritable()
        } catch {
            throw SnapshotError(error, file: path)
        }
        guard target.exists else { return QuoteTable() }
        return try load(from: path, verify: verify, threads: threads)
    }
}
