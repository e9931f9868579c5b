#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade
import DataLink
import DataLinkFormat
import Dispatch
import Foundation
import Synchronization

/// What ``QuoteStore/fetch(_:options:)`` downloads and how.
public struct FetchOptions: Sendable {
    /// The HTTP client's settings: the API key, base URL, limits, retries, logging.
    public var client: DataLinkConfiguration
    /// The time-series database (`WIKI`), used when ``table`` is nil.
    public var database: String
    /// A table of the Tables API (`WIKI/PRICES`): many tickers per request, following cursors.
    public var table: String?
    /// The first and last day to ask for (inclusive; nil for no bound).
    public var from: Day?, to: Day?
    /// Ask only for the days after each ticker's newest stored day.
    public var update = false
    /// The response format asked of the time-series API.
    public var format: ResponseFormat = .json
    /// The table's columns to ask for (`qopts.columns`); nil for all.
    public var columns: [String]?
    /// With ``table``: one whole-table export zip instead of pages.
    public var bulk = false
    /// With ``bulk``: how the export's status is polled, and for how long.
    public var exportPolling = ExportPolling()
    /// With ``bulk``: where to keep the export zip (else it is removed after the import).
    public var keepZip: String?
    /// How much the export zip may inflate.
    public var archiveLimits = ZipLimits.standard
    /// Save the tickers that succeeded when others fail (else nothing is saved).
    public var keepGoing = false
    /// Wait for another writer of the snapshot to finish (else fail with `SnapshotError.locked`).
    public var waitForLock = true
    /// The whole fetch's deadline, counted from when the lock is held and the stored table
    /// loaded; passing it cancels the fetch, which then throws ``FetchDeadlineExceeded``.
    public var deadline: Duration?
    /// Whether SIGINT (Ctrl-C) cancels the fetch, leaving the snapshot as it was, for as long as
    /// the download runs (the handler is restored afterwards). For command-line programs.
    public var cancelOnInterrupt = false
    /// Told what the fetch is doing, from any thread.
    public var events: (@Sendable (FetchEvent) -> Void)?
    /// The command recorded with the version the fetch commits (credentials redacted:
    /// `SnapshotStore.commandText(_:)`).
    public var command = ""
    /// How many responses may be decoding (or waiting to) while the next downloads.
    package var decodeDepth = QueryOptions.availableCores

    /// Options for the time-series `database` (`WIKI`) or, when `table` is given, that table.
    public init(client: DataLinkConfiguration, database: String = "WIKI", table: String? = nil) {
        self.client = client
        self.database = database
        self.table = table
    }
}

/// What a fetch is doing, for a progress display.
public enum FetchEvent: Sendable {
    /// Another process holds the snapshot's write lock (its process id when known); the fetch waits.
    case waitingForLock(holder: Int32?)
    /// Work finished since the last report: rows decoded, response bytes, tickers done.
    case progress(FetchProgress)
    /// A bulk export's state (waiting for it, downloading it).
    case export(ExportEvent)
    /// A bulk export is downloaded; it is being imported.
    case exportDownloaded
}

/// Work a fetch finished since its last report.
public struct FetchProgress: Sendable, Equatable {
    /// Rows decoded.
    public var rows: Int
    /// Response bytes received.
    public var bytes: Int
    /// Tickers finished (a ticker with nothing to ask for counts too).
    public var tickers: Int

    public init(rows: Int, bytes: Int, tickers: Int) {
        self.rows = rows
        self.bytes = bytes
        self.tickers = tickers
    }
}

/// What a fetch brought in.
public struct FetchResult: Sendable {
    /// The rows that arrived (not the whole stored table).
    public var fetched: QuoteTable
    /// The tickers that failed, in request order, each with its error.
    public var failures: [(symbol: String, error: any Error)]
    /// Whether the snapshot was written: rows arrived, and either nothing failed or
    /// ``FetchOptions/keepGoing`` was set.
    public var saved: Bool
    /// With ``FetchOptions/update``: the tickers whose adjusted history the vendor had restated
    /// (a split or dividend after the newest stored day, or changed adjusted values on it), whose
    /// adjusted columns were recomputed from the stored raw rows by WIKI's rule.
    public var restatements: [Restatement] = []
}

/// The whole fetch did not finish within its deadline; nothing was saved.
public struct FetchDeadlineExceeded: Error, Sendable {
    /// The deadline that passed.
    public var deadline: Duration
}

extension QuoteStore {
    /// Downloads quotes from Nasdaq Data Link and upserts them into the snapshot, saved once,
    /// atomically, at the end, under the snapshot's write lock (held from the load, through the
    /// download, to the save). A failure or cancellation leaves the snapshot exactly as it was
    /// (with ``FetchOptions/keepGoing``, the tickers that succeeded are saved and the failures
    /// returned).
    ///
    /// - Parameters:
    ///   - tickers: The tickers (`BRK.B` and `brk_b` are the same); with a bulk export, none means
    ///     the whole table.
    ///   - options: Where and what to fetch: the client (key, retries), database or table, dates,
    ///     `--update`, format, columns, bulk export and progress events.
    public func fetch(_ tickers: [String], options: FetchOptions) throws -> FetchResult {
        let events = options.events
        // The write lock is held from the load, through the whole download, to the rename: a
        // concurrent import or fetch into the same snapshot waits instead of losing rows.
        let lock = try self.lock(wait: options.waitForLock) { events?(.waitingForLock(holder: $0)) }
        defer { lock.release() }
        let existing = try load()
        let client = DataLinkClient(configuration: options.client)
        if options.bulk, let table = options.table {
            return try fetchBulk(table, tickers: tickers, options: options, client: client, existing: existing)
        }
        var plan = FetchPlan(
            symbols: tickers, database: options.database, table: options.table,
            from: options.from?.daysSinceEpoch, to: options.to?.daysSinceEpoch, update: options.update,
            format: options.format, existing: existing, columns: options.columns)
        plan.decodeDepth = options.decodeDepth
        let outcome = try Self.runCancellably(options) { [plan] in
            try await plan.run(client: client) { events?(.progress($0)) }
        }
        if !outcome.failures.isEmpty && !options.keepGoing {
            return FetchResult(fetched: QuoteTable(), failures: outcome.failures, saved: false)
        }
        // Each response was decoded as it arrived, while others downloaded, and its rows went
        // straight into the final columns (`IncomingRows`); they are copied once more only into
        // the stored table (not when the snapshot is new: an upsert into an empty table takes
        // the incoming one).
        var tables = outcome.tables
        let incoming = QuoteTable.merging(&tables, threads: QueryOptions.availableCores)
        // Save only when something arrived: a run where every ticker failed (keepGoing) must not
        // leave an empty snapshot behind. The new rows are appended as a version of their own
        // (a segment: ARCHITECTURE.md, *Versions and appends*), which reads as the stored table
        // upserted with them; a new snapshot is the incoming table itself.
        let restated = try commitFetched(incoming, existing: existing, options: options)
        return FetchResult(fetched: incoming, failures: outcome.failures, saved: incoming.rowCount > 0, restatements: restated)
    }

    /// A bulk fetch: one export zip, imported and saved like any fetch.
    private func fetchBulk(
        _ table: String, tickers: [String], options: FetchOptions, client: DataLinkClient,
        existing: QuoteTable
    ) throws -> FetchResult {
        let plan = FetchPlan(
            symbols: tickers, database: "", table: table, from: options.from?.daysSinceEpoch,
            to: options.to?.daysSinceEpoch, update: options.update, format: .json, existing: existing, columns: nil)
        let pending = tickers.filter(plan.needsRequest(for:))
        if !tickers.isEmpty && pending.isEmpty {
            return FetchResult(fetched: QuoteTable(), failures: [], saved: false)
        }
        let earliest = pending.map { plan.start(for: $0) }
        let from =
            earliest.isEmpty || earliest.contains(where: { $0 == nil }) ? options.from?.daysSinceEpoch : earliest.compactMap { $0 }.min()
        let bulk = BulkFetch(
            table: table, tickers: pending, from: from, to: options.to?.daysSinceEpoch, columns: options.columns,
            polling: options.exportPolling, archiveOptions: ArchiveImporter.Options(limits: options.archiveLimits),
            keepZip: options.keepZip, snapshotPath: path)
        let events = options.events
        let incoming = try Self.runCancellably(options) {
            try await bulk.run(client: client, events: { events?(.export($0)) }, downloaded: { events?(.exportDownloaded) })
        }
        let restated = try commitFetched(incoming, existing: existing, options: options)
        return FetchResult(fetched: incoming, failures: [], saved: incoming.rowCount > 0, restatements: restated)
    }

    /// Commits a fetch's rows (the caller holds the write lock) as a new version, when there are
    /// any: an append of `incoming` alone (a segment: ARCHITECTURE.md, *Versions and appends*),
    /// which reads as the stored table upserted with them; a new snapshot is the incoming table
    /// itself. With ``FetchOptions/update`` and restated tickers (docs/ADJUSTMENTS.md, "Updates"),
    /// their whole adjusted history changes, so the version is a full write of the stored table
    /// upserted with `incoming` and restated.
    /// - Returns: the restatements (empty without `--update`).
    private func commitFetched(_ incoming: QuoteTable, existing: QuoteTable, options: FetchOptions) throws -> [Restatement] {
        let threads = QueryOptions.availableCores
        let restated = options.update ? Self.restatements(existing: existing, incoming: incoming) : []
        guard incoming.rowCount > 0 else { return restated }
        let store = SnapshotStore(at: path)
        if !restated.isEmpty {
            var merged = existing
            merged.upsert(contentsOf: [incoming], threads: threads)
            _ = try Self.restate(&merged, existing: existing, incoming: incoming)
            _ = try store.writeLocked(merged, command: options.command, durable: true, threads: threads)
            return restated
        }
        var table = existing
        if existing.rowCount == 0 && existing.tickers.isEmpty {
            table.upsert(contentsOf: [incoming], threads: threads)
        } else {
            table = incoming
        }
        _ = try store.appendLocked(table, command: options.command, durable: true, threads: threads)
        return restated
    }

    /// Runs `work` on the concurrency runtime and waits for it; SIGINT cancels it when the
    /// options ask, and so does the deadline passing, which is then reported as
    /// ``FetchDeadlineExceeded``.
    private static func runCancellably<T: Sendable>(
        _ options: FetchOptions,
        _ work: @escaping @Sendable () async throws -> T
    ) throws -> T {
        let cancellation = CancellationRelay()
        // The handler is in place before any work starts, so Ctrl-C always cancels, never kills;
        // the catcher's own thread cancels at once, whichever thread the signal reached.
        var interrupt: SignalCatcher?
        if options.cancelOnInterrupt {
            guard let catcher = SignalCatcher(catching: [SIGINT], handler: { _ in cancellation.cancel() }) else {
                throw IngestFailure("cannot catch Ctrl-C (no pipe could be made); nothing was fetched")
            }
            interrupt = catcher
        }
        defer { interrupt?.stop() }
        let task = Task { try await work() }
        cancellation.attach(task)
        // The whole fetch's deadline: a Dispatch timer (on time even when the pool is busy)
        // that cancels like Ctrl-C and leaves a mark, so the error says why.
        let passed = DeadlineMark()
        let timer = DispatchSource.makeTimerSource(queue: .global())
        if let deadline = options.deadline {
            timer.schedule(deadline: .now() + dispatchInterval(deadline))
            timer.setEventHandler {
                passed.set()
                cancellation.cancel()
            }
        }
        timer.resume()
        defer { timer.cancel() }
        let done = DispatchSemaphore(value: 0)
        let result = ResultBox<T>()
        Task {
            result.set(await task.result)
            done.signal()
        }
        done.wait()
        timer.cancel()
        do {
            return try result.get()
        } catch {
            // Work that finished as the deadline passed keeps its result; work it cut short
            // reports the deadline, not the cancellation it caused.
            if passed.isSet, let deadline = options.deadline { throw FetchDeadlineExceeded(deadline: deadline) }
            throw error
        }
    }

    /// `d` as a Dispatch interval (at most 30 days).
    static func dispatchInterval(_ d: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = d.components
        if seconds < 0 { return .nanoseconds(0) }
        return .nanoseconds(Int(min(seconds, 30 * 86_400)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }
}

/// Set once, read after: whether the fetch's deadline passed.
final class DeadlineMark: Sendable {
    private let flag = Mutex(false)
    func set() { flag.withLock { $0 = true } }
    var isSet: Bool { flag.withLock { $0 } }
}

/// Cancels a task once it is attached, even if the cancellation came first.
final class CancellationRelay: @unchecked Sendable {
    // Safe: guarded by `lock`.
    private let lock = NSLock()
    private var cancelled = false
    private var cancelTask: (@Sendable () -> Void)?

    func attach<T>(_ task: Task<T, any Error>) {
        let cancelNow = lock.withLock { () -> Bool in
            cancelTask = { task.cancel() }
            return cancelled
        }
        if cancelNow { task.cancel() }
    }

    func cancel() {
        let action = lock.withLock { () -> (@Sendable () -> Void)? in
            cancelled = true
            return cancelTask
        }
        action?()
    }
}

/// A result handed from a task to the waiting thread.
final class ResultBox<T: Sendable>: @unchecked Sendable {
    // Safe: written once before the semaphore is signalled, read after the wait.
    private var result: Result<T, any Error>?
    func set(_ r: Result<T, any Error>) { result = r }
    func get() throws -> T {
        guard let result else { throw IngestFailure("fetch ended without a result") }
        return try result.get()
    }
}
