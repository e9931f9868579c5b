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
        // Locked from load to rename: a concurrent import or fetch waits, and neither's rows are lost.
        let waiting = options.waitingForLock
        try QuoteTable.update(at: path, wait: options.waitForLock, threads: options.threads, whileWaiting: { holder in waiting?(holder) }) {
            table in
            try options.whileLocked?()
            table.upsert(contentsOf: [incoming], threads: options.threads)
        }
        return ImportResult(imported: incoming, skippedColumns: skipped, saved: true)
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
