#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade
import DataLinkFormat

/// How ``QuoteStore/import(_:options:)`` reads its inputs and takes the lock.
public struct ImportOptions: Sendable {
    /// The symbol for every single-ticker input, overriding the body and the file name.
    public var ticker: String?
    /// Decode on up to this many threads (the answer is the same for any number).
    public var threads = QueryOptions.availableCores
    /// How much a zip archive may inflate (`ZipLimits`).
    public var archiveLimits = ZipLimits.standard
    /// Refuse Arrow and Parquet files with columns that are not numbers, instead of leaving
    /// those columns out (``ImportResult/skippedColumns``).
    public var strict = false
    /// For a Delta Lake table among the inputs, the version to read (its newest when nil).
    public var deltaVersion: Int?
    /// Wait for another writer of the snapshot to finish (else fail with `SnapshotError.locked`).
    public var waitForLock = true
    /// Counters the decoding threads update as files finish, for a display on another thread.
    public var progress: ImportProgress?
    /// Told when another process holds the snapshot's write lock (its process id when known),
    /// before this import waits for it.
    public var waitingForLock: (@Sendable (Int32?) -> Void)?
    /// The command recorded with the version the import commits (credentials redacted:
    /// `SnapshotStore.commandText(_:)`).
    public var command = ""
    /// After the append has committed, compact the store (still under the lock) when
    /// `SnapshotStore.needsCompaction` says so; reported apart in ``ImportResult/compaction``.
    public var autoCompact = true
    /// Tests and benchmarks: never decode straight into a new snapshot file (the "ordinary" path:
    /// decode, then upsert and save), to compare the two.
    package var ordinaryPathOnly = false
    /// Tests of the lock: called once the snapshot is locked and loaded.
    package var whileLocked: (@Sendable () throws -> Void)?

    /// The defaults: every core, the standard zip limits, waiting for the lock.
    public init() {}

    /// The zip reading options these options imply.
    var archiveOptions: ArchiveImporter.Options {
        var options = ArchiveImporter.Options(limits: archiveLimits)
        options.threads = threads
        return options
    }
}

/// What an import brought in.
public struct ImportResult: Sendable {
    /// The rows that came in (every input merged, later inputs winning on equal ticker and date),
    /// not the whole stored table.
    public var imported: QuoteTable
    /// Arrow and Parquet columns left out because they are not numbers.
    public var skippedColumns: [InteropSkippedColumn]
    /// Whether the snapshot was written (not when the inputs held no rows).
    public var saved: Bool
    /// The version the import committed (nil when nothing was written, or for a fresh import
    /// decoded straight into a new single-file snapshot, which is version 1).
    public var commit: SnapshotCommit? = nil
    /// The compaction that followed the commit, if the threshold was crossed (its own version).
    public var compaction: SnapshotCommit? = nil
}

extension QuoteStore {
    /// Decodes every input and upserts the rows into the snapshot, saved atomically under its
    /// write lock. All or nothing: if any input fails to decode, the snapshot is left exactly as
    /// it was.
    ///
    /// Inputs are Nasdaq Data Link responses (JSON or CSV, time series or tables) and zips of
    /// them, Arrow IPC files and streams, Parquet files and directories, and `-` for standard
    /// input (decoded while it is read). A fresh import of plain files into a snapshot that does
    /// not exist yet is decoded straight into the new file; otherwise the rows are decoded, then
    /// upserted into the stored table under the lock.
    ///
    /// - Returns: The rows that came in; nothing is written when there are none.
    public func `import`(_ files: [String], options: ImportOptions = ImportOptions()) throws -> ImportResult {
        if let imported = try importDirect(files, options: options) {
            return ImportResult(imported: imported, skippedColumns: [], saved: true)
        }
        var skipped: [InteropSkippedColumn] = []
        let incoming = try Self.decodeAll(
            files, ticker: options.ticker, archiveOptions: options.archiveOptions,
            threads: options.threads, progress: options.progress, strict: options.strict,
            deltaVersion: options.deltaVersion, skipped: &skipped)
        // Nothing to import (header-only files, an update's empty response): no ticker is added and
        // the snapshot is not rewritten.
        if incoming.rowCount == 0 {
            return ImportResult(imported: incoming, skippedColumns: skipped, saved: false)
        }
        // Locked from reading the version log to committing the new one: a concurrent import or
        // fetch waits, and neither's rows are lost. Only the new rows are written (a segment and
        // a version log: ARCHITECTURE.md, *Versions and appends*).
        let (commit, compaction) = try commitAppend(incoming, options: options)
        return ImportResult(imported: incoming, skippedColumns: skipped, saved: true, commit: commit, compaction: compaction)
    }

    /// Appends `rows` under the write lock as a new version, then compacts when the threshold
    /// is crossed (and `options.autoCompact`), as a version of its own.
    func commitAppend(_ rows: QuoteTable, options: ImportOptions) throws -> (SnapshotCommit, SnapshotCommit?) {
        let lock = try self.lock(wait: options.waitForLock, waiting: options.waitingForLock)
        defer { lock.release() }
        try options.whileLocked?()
        let store = SnapshotStore(at: path)
        // Into an empty store the rows are taken as the ordinary upsert into an empty table takes them.
        var table = rows
        if (try? FileTarget(forWriting: path))?.exists != true {
            table = QuoteTable()
            table.upsert(contentsOf: [rows], threads: options.threads)
        }
        let commit = try store.appendLocked(table, command: options.command, durable: true, threads: options.threads)
        var compaction: SnapshotCommit?
        if options.autoCompact, commit.version.kind == .append, SnapshotStore.needsCompaction(try store.log()) {
            compaction = try store.compactLocked(
                command: "compact (automatic, after version \(commit.version.number))",
                durable: true, threads: options.threads)
        }
        return (commit, compaction)
    }

    /// A fresh import decoded straight into the new snapshot file (`QuoteImporter.importDirect`),
    /// under the snapshot's write lock: only when nothing exists at `path`, and every input is a
    /// plain file (not `-`, not Arrow or Parquet). nil, with nothing written, when it does not
    /// apply (also when the lock is busy and `waitForLock` is false: the ordinary path decodes
    /// first and then reports that): the caller imports the ordinary way.
    func importDirect(_ files: [String], options: ImportOptions) throws -> QuoteTable? {
        func absent() -> Bool { (try? FileTarget(forWriting: path))?.exists == false }
        guard !options.ordinaryPathOnly,
            !files.isEmpty, !files.contains(where: { $0 == "-" || InteropReader.handles(path: $0) }), absent()
        else { return nil }
        let lock: SnapshotLock
        do {
            lock = try self.lock(wait: options.waitForLock, waiting: options.waitingForLock)
        } catch SnapshotError.locked {
            return nil
        }
        defer { lock.release() }
        guard absent() else { return nil }
        try options.whileLocked?()
        // Named as the ordinary path's upsert into an empty table names it.
        let imported = try QuoteImporter.importDirect(
            files, ticker: options.ticker, threads: options.threads,
            progress: options.progress, snapshot: path,
            dateColumnName: QuoteTable().dateColumnName)
        return imported?.table
    }

    /// Decodes every input: Arrow IPC and Parquet files and directories through `InteropReader`,
    /// Data Link responses and zips of them through `QuoteImporter`, `-` as one body (or zip) read
    /// from standard input; later inputs win on equal (ticker, date). Nothing is saved.
    package static func decodeAll(
        _ files: [String], ticker: String?,
        archiveOptions: ArchiveImporter.Options = ArchiveImporter.Options(),
        threads: Int = 1, progress: ImportProgress? = nil,
        strict: Bool = false, deltaVersion: Int? = nil,
        skipped: inout [InteropSkippedColumn]
    ) throws -> QuoteTable {
        let special = files.filter { $0 == "-" || InteropReader.handles(path: $0) }
        if special.isEmpty {
            return try QuoteImporter.importFiles(
                files, ticker: ticker, archiveOptions: archiveOptions, threads: threads, progress: progress)
        }
        var parts: [QuoteTable] = []
        for file in files {
            if file == "-" {
                // A datatable CSV decodes while it is read; anything else is read whole first.
                try StandardInput.checkReadable()
                parts.append(
                    try QuoteImporter.importStream(
                        STDIN_FILENO, source: "standard input", ticker: ticker,
                        archiveOptions: archiveOptions, threads: threads))
            } else if DeltaTable.isTable(file) {
                // A Delta Lake table: its files come from its log, never from a listing.
                parts.append(try DeltaTable.read(at: file, version: deltaVersion, ticker: ticker, strict: strict, skipped: &skipped))
            } else if InteropReader.handles(path: file) {
                parts.append(try InteropReader.read(path: file, ticker: ticker, strict: strict, skipped: &skipped, threads: threads))
            } else {
                parts.append(try QuoteImporter.importFiles([file], ticker: ticker, archiveOptions: archiveOptions))
            }
        }
        var first = parts.removeFirst()
        if !parts.isEmpty { first.upsert(contentsOf: parts) }
        return first
    }
}
