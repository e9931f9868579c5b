import Colonnade
import DataLinkFormat
import DataLink
import Dispatch
import Foundation
import Synchronization

/// `colonnade fetch`: download quotes from Nasdaq Data Link and upsert them into a snapshot,
/// saved once, atomically, at the end, under the snapshot's write lock (held from the load, through
/// the download, to the save). A failure or Ctrl-C leaves the snapshot exactly as it was
/// (with `--keep-going`, the tickers that succeeded are saved and the failures listed).
struct FetchCommand: Command {
    var spec: CommandSpec { .fetch }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let symbols = parsed.positionals
        if symbols.isEmpty && !parsed[Options.bulk] {
            throw UsageError.missingArgument(name: "TICKER...", command: spec.name)
        }
        let path = try SnapshotLocation.forWriting(parsed[Options.snapshot], context: context)
        let deadlineText = parsed[Options.deadline]
        guard let deadline = BulkFetch.parseDuration(deadlineText) else {
            throw UsageError.invalidValue(option: "--deadline", value: deadlineText, reason: "expected a duration such as 90s, 30m or 6h",
                                          suggestion: nil, command: spec.name)
        }

        var configuration = DataLinkConfiguration(maxConcurrentRequests: parsed[Options.concurrency])
        if let base = parsed[Options.baseURL] ?? context.environment["COLONNADE_BASE_URL"].flatMap({ $0.isEmpty ? nil : $0 }) {
            guard let url = URL(string: base), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
                throw UsageError.invalidValue(option: "--base-url", value: Self.withoutCredentials(base), reason: "expected an http(s) URL",
                                              suggestion: nil, command: spec.name)
            }
            configuration.baseURL = url
        }
        configuration.requestDeadline = .seconds(parsed[Options.timeout])
        configuration.transferProcess = Self.transferProcess(context)
        // Hidden, for tests: a smaller response limit than the client's 512 MiB default.
        if let text = context.environment["COLONNADE_MAX_RESPONSE_BYTES"], let limit = Int(text), limit > 0 {
            configuration.maximumResponseSize = limit
        }
        let home = context.environment["HOME"].map { URL(fileURLWithPath: $0) }
        configuration.apiKey = try APIKey.resolve(environment: context.environment, homeDirectory: home,
                                                  explicitKeyFile: parsed[Options.apiKeyFile].map(context.resolve))
        if let key = configuration.apiKey { (context.standardError as? RedactingWriter)?.add(key) }
        let quiet = parsed[Options.quiet]
        if !quiet, Self.choosesWIKI(database: parsed[Options.database], table: parsed[Options.table]) {
            try context.standardError.writeLine(Self.wikiNote)
        }
        if parsed[Options.debug] {
            let log = SynchronizedWriter(context.standardError)
            // Server text in the log is already one line per header; the lines are escaped again
            // here, the CLI's own guarantee (`TerminalText`).
            configuration.log = { line in log.writeLine("debug: " + TerminalText.escapedLines(line)) }
        }
        // The context's standard error decides, not the process's fd 2: an in-process run writes
        // to memory even when the host's stderr is a terminal.
        let errorIsTerminal = context.standardError.isTerminal
        let progress = Progress(enabled: !quiet && !parsed[Options.debug] && errorIsTerminal,
                                total: symbols.count, writer: context.standardError)

        // The write lock is held from the load, through the whole download, to the rename: a
        // concurrent import or fetch into the same snapshot waits instead of losing rows.
        let lock = try SnapshotLocation.lock(path, wait: !parsed[Options.noWait], context: context)
        defer { lock.release() }
        let existing = try QuoteTable.loadForUpdate(path)
        if parsed[Options.bulk], let table = parsed[Options.table] {
            return try runBulk(table, parsed, context: context, path: path, client: DataLinkClient(configuration: configuration),
                               existing: existing, progressEnabled: !quiet && !parsed[Options.debug] && errorIsTerminal, deadline: deadline)
        }

        let columns = parsed[Options.columns]
        let plan = FetchPlan(symbols: symbols, database: parsed[Options.database], table: parsed[Options.table],
                             from: parsed[Options.from]?.daysSinceEpoch, to: parsed[Options.to]?.daysSinceEpoch, update: parsed[Options.update],
                             format: parsed[Options.format] == .csv ? .csv : .json, existing: existing,
                             columns: columns.isEmpty ? nil : columns)
        let client = DataLinkClient(configuration: configuration)
        let outcome = try runCancellably(deadline: deadline) { try await plan.run(client: client, progress: progress) }
        progress.finish()

        for (symbol, error) in outcome.failures {
            let report = ErrorReport(error)
            try context.standardError.writeLine("error: \(TerminalText.escaped(symbol)): \(report.message)")
            if let hint = report.hint { try context.standardError.writeLine("hint: \(hint)") }
        }
        if !outcome.failures.isEmpty && !parsed[Options.keepGoing] {
            try context.standardError.writeLine("\(outcome.failures.count) of \(symbols.count) tickers failed; "
                + "nothing was saved (\(path) is unchanged). --keep-going saves the tickers that succeeded.")
            return ExitStatus.failure
        }
        // Each response was decoded as it arrived, while others downloaded, and its rows went
        // straight into the final columns (`IncomingRows`); they are copied once more only into
        // the stored table (not when the snapshot is new: an upsert into an empty table takes
        // the incoming one).
        var tables = outcome.tables
        let incoming = QuoteTable.merging(&tables, threads: QueryOptions.availableCores)
        var merged = existing
        merged.upsert(contentsOf: [incoming], threads: QueryOptions.availableCores)
        // Save only when something arrived: a run where every ticker failed (--keep-going) must not
        // leave an empty snapshot behind.
        if incoming.rowCount > 0 {
            try merged.save(to: path)
        }
        if !quiet { try ImportCommand.printSummary(of: incoming, into: path, verb: "fetched", context: context) }
        if !outcome.failures.isEmpty {
            try context.standardError.writeLine("\(outcome.failures.count) of \(symbols.count) tickers failed: "
                + TerminalText.escaped(outcome.failures.map(\.symbol).joined(separator: ", ")))
            return ExitStatus.failure
        }
        return ExitStatus.success
    }

    /// `--bulk`: one export zip, imported and saved like any fetch.
    private func runBulk(_ table: String, _ parsed: ParsedArguments, context: CommandContext, path: String, client: DataLinkClient,
                         existing: QuoteTable, progressEnabled: Bool, deadline: Duration) throws -> Int32 {
        let timeoutText = parsed[Options.bulkTimeout]
        guard let timeout = BulkFetch.parseDuration(timeoutText) else {
            throw UsageError.invalidValue(option: "--bulk-timeout", value: timeoutText, reason: "expected a duration such as 90s, 10m or 1h",
                                          suggestion: nil, command: spec.name)
        }
        var polling = ExportPolling(timeout: timeout)
        // Hidden, for tests: a shorter first wait between status requests.
        if let text = context.environment["COLONNADE_EXPORT_POLL_SECONDS"], let seconds = Double(text), seconds > 0, seconds < 60 {
            polling.firstInterval = .milliseconds(Int64(seconds * 1000))
        }
        let plan = FetchPlan(symbols: parsed.positionals, database: "", table: table, from: parsed[Options.from]?.daysSinceEpoch, to: parsed[Options.to]?.daysSinceEpoch,
                             update: parsed[Options.update], format: .json, existing: existing, columns: nil)
        let pending = parsed.positionals.filter(plan.needsRequest(for:))
        if !parsed.positionals.isEmpty && pending.isEmpty {
            if !parsed[Options.quiet] { try ImportCommand.printSummary(of: QuoteTable(), into: path, verb: "fetched", context: context) }
            return ExitStatus.success
        }
        let earliest = pending.map { plan.start(for: $0) }
        let from = earliest.isEmpty || earliest.contains(where: { $0 == nil }) ? parsed[Options.from]?.daysSinceEpoch : earliest.compactMap { $0 }.min()
        let columns = parsed[Options.columns]
        let bulk = BulkFetch(table: table, tickers: pending, from: from, to: parsed[Options.to]?.daysSinceEpoch, columns: columns.isEmpty ? nil : columns,
                             polling: polling, archiveOptions: ImportCommand.archiveOptions(parsed),
                             keepZip: parsed[Options.keepZip].map(context.resolve), snapshotPath: path)
        let progress = BulkProgress(enabled: progressEnabled, writer: context.standardError)
        let incoming: QuoteTable
        do {
            incoming = try runCancellably(deadline: deadline) { try await bulk.run(client: client, progress: progress) }
        } catch {
            progress.finish()
            throw error
        }
        var merged = existing
        merged.upsert(incoming)
        if incoming.rowCount > 0 { try merged.save(to: path) }
        if !parsed[Options.quiet] { try ImportCommand.printSummary(of: incoming, into: path, verb: "fetched", context: context) }
        return ExitStatus.success
    }

    /// `text` with the `user:password@` of a URL-like string cut out, and `api_key=…` and
    /// key-like values redacted (`CredentialRedaction`), for messages.
    static func withoutCredentials(_ text: String) -> String {
        guard let scheme = text.range(of: "://") else { return CredentialRedaction.redacting(text) }
        let rest = text[scheme.upperBound...]
        let authorityEnd = rest.firstIndex { $0 == "/" || $0 == "?" || $0 == "#" } ?? rest.endIndex
        guard let at = rest[..<authorityEnd].lastIndex(of: "@") else { return CredentialRedaction.redacting(text) }
        return String(text[..<scheme.upperBound]) + "<redacted>@" + CredentialRedaction.redacting(String(rest[rest.index(after: at)...]))
    }

    /// The note `fetch` prints when the chosen database is WIKI.
    static let wikiNote = "note: WIKI stopped updating in March 2018 (its last prices are from 2018-03-27); for later prices "
        + "use --table with a table your own Nasdaq Data Link subscription covers"

    /// Whether the data comes from WIKI: the time-series database `WIKI` (datasets `WIKI/…`) or
    /// a table of the WIKI publisher (`WIKI/PRICES`).
    static func choosesWIKI(database: String, table: String?) -> Bool {
        if let table { return table.uppercased().hasPrefix("WIKI/") }
        return database.uppercased() == "WIKI"
    }

    /// Runs `work` on the concurrency runtime and waits for it; Ctrl-C cancels it, and so does
    /// `deadline` passing, which is then reported as ``FetchDeadlineExceeded``.
    private func runCancellably<T: Sendable>(deadline: Duration, _ work: @escaping @Sendable () async throws -> T) throws -> T {
        // The handler is in place before any work starts, so Ctrl-C always cancels, never kills.
        let cancellation = CancellationRelay()
        signal(SIGINT, SIG_IGN)
        let interrupt = DispatchSource.makeSignalSource(signal: SIGINT, queue: .global())
        interrupt.setEventHandler { cancellation.cancel() }
        interrupt.resume()
        defer {
            interrupt.cancel()
            signal(SIGINT, SIG_DFL)
        }
        let task = Task { try await work() }
        cancellation.attach(task)
        // The whole fetch's deadline: a Dispatch timer (on time even when the pool is busy)
        // that cancels like Ctrl-C and leaves a mark, so the error says why.
        let passed = DeadlineMark()
        let timer = DispatchSource.makeTimerSource(queue: .global())
        timer.schedule(deadline: .now() + BulkFetch.dispatchInterval(deadline))
        timer.setEventHandler {
            passed.set()
            cancellation.cancel()
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
            if passed.isSet { throw FetchDeadlineExceeded(deadline: deadline) }
            throw error
        }
    }
}

/// What to fetch and how.
struct FetchPlan: Sendable {
    let symbols: [String]
    let database: String
    let table: String?
    let from: Int32?
    let to: Int32?
    let update: Bool
    let format: ResponseFormat
    let existing: QuoteTable
    /// `qopts.columns` for the Tables API; nil for all.
    var columns: [String]? = nil
    /// How many responses may be decoding (or waiting to) while the next downloads.
    var decodeDepth = QueryOptions.availableCores
    /// Told as each response's decode starts and ends, numbered in request order (tests).
    var decodeEvents: (@Sendable (DecodeAhead.Event) -> Void)? = nil

    struct Outcome: Sendable {
        var tables: [QuoteTable] = []
        var failures: [(symbol: String, error: any Error)] = []
    }

    /// The symbol `symbol`'s rows are stored under: the decoder's spelling of its API code
    /// (`brk_b` and `BRK.B` are both sent as `BRK_B`, and rows come back as `BRK.B`).
    static func storedSymbol(_ symbol: String) -> String {
        DataLinkSymbols.symbol(fromCode: DataLinkSymbols.code(fromSymbol: symbol))
    }

    /// The newest stored day of `symbol` when --update applies to it.
    private func newestStored(_ symbol: String) -> Int32? {
        guard update, let entry = existing.ticker(Self.storedSymbol(symbol)), entry.rowCount > 0 else { return nil }
        return existing.dates[entry.firstRow + entry.rowCount - 1]
    }

    /// The first day to ask for: with --update, the day after the newest stored one.
    func start(for symbol: String) -> Int32? {
        guard let newest = newestStored(symbol) else { return from }
        // The last storable day (9999-12-31) has no day after it that a table could hold
        // (needsRequest then says there is nothing to ask for).
        let last = Day.storableDayNumbers.upperBound
        let next = newest >= last ? newest : newest + 1
        return max(next, from ?? next)
    }

    /// Whether there is anything to ask for: not when --update already reaches past `--to`
    /// (the request would be refused as "end date before start date"), nor when the newest stored
    /// day is the last one a table can hold.
    func needsRequest(for symbol: String) -> Bool {
        if let newest = newestStored(symbol), newest >= Day.storableDayNumbers.upperBound { return false }
        guard let start = start(for: symbol), let to else { return true }
        return start <= to
    }

    static func date(_ day: Int32?) -> Day? {
        day.map(Day.init(daysSinceEpoch:))
    }

    func run(client: DataLinkClient, progress: Progress) async throws -> Outcome {
        if let table { return try await runTable(table, client: client, progress: progress) }
        // Each operation downloads, hands the body to a decoding thread and returns, so the next
        // request goes out while this response decodes (ARCHITECTURE.md, Fetching).
        // The rows stay in the decoders' buffers and go, in request order, straight into the
        // final columns (`IncomingRows`).
        let ahead = DecodeAhead(depth: decodeDepth, events: decodeEvents)
        let results = try await client.fetchMany(symbols) { symbol -> DecodeAhead.Pending<DecodedRows?> in
            guard needsRequest(for: symbol) else {
                progress.advance(rows: 0, bytes: 0, tickers: 1)
                return DecodeAhead.Pending(.success(nil))
            }
            let response = try await client.datasetData(database: database, ticker: symbol, from: Self.date(start(for: symbol)),
                                                        to: Self.date(to), format: format)
            let stored = Self.storedSymbol(symbol), source = "\(database)/\(symbol)"
            return await ahead.decode {
                let rows = try response.body.withUnsafeBytes { bytes in
                    try QuoteDecoder.decodeRows(bytes, ticker: stored, source: source)
                }
                progress.advance(rows: rows.rowCount, bytes: response.body.count, tickers: 1)
                return rows
            }
        }
        var outcome = Outcome()
        let incoming = IncomingRows()
        for (symbol, result) in zip(symbols, results) {
            switch result {
            case .success(let pending):
                switch await pending.value {
                case .success(let rows): if let rows { incoming.add(rows, source: "\(database)/\(symbol)") }
                case .failure(let e): outcome.failures.append((symbol, e))
                }
            case .failure(let e): outcome.failures.append((symbol, e))
            }
        }
        outcome.tables = incoming.tables()
        return outcome
    }

    /// Thrown from the page callback to stop following cursors once an earlier page failed to
    /// decode; that page's error is then reported instead.
    private struct EarlierPageFailed: Error {}

    /// The Tables API: many tickers per request, following cursors; unknown tickers return no rows.
    ///
    /// Each page's cursor is read by a structural scan (`DataLinkCursor`), the next page is asked
    /// for at once, and the page decodes on another thread meanwhile. The result and the errors
    /// are those of decoding page after page: the first page (in request order) that failed to
    /// decode wins over anything later, a download error included.
    private func runTable(_ table: String, client: DataLinkClient, progress: Progress) async throws -> Outcome {
        let pending = symbols.filter(needsRequest(for:))
        guard !pending.isEmpty else {
            progress.advance(rows: 0, bytes: 0, tickers: symbols.count)
            return Outcome()
        }
        let earliest = pending.map { start(for: $0) }
        let from = earliest.contains(where: { $0 == nil }) ? nil : earliest.compactMap { $0 }.min()
        let ahead = DecodeAhead(depth: decodeDepth, events: decodeEvents)
        let target = DataLinkTarget.table(table, tickers: pending.map(DataLinkSymbols.code(fromSymbol:)))
        @Sendable func decodePage(_ response: DataLinkResponse, source: String, number: Int) throws -> DecodedResponse {
            let decoded = try response.body.withUnsafeBytes { bytes in try QuoteDecoder.decodeKeepingRows(bytes, source: source) }
            progress.advance(rows: decoded.rows?.rowCount ?? 0, bytes: response.body.count, tickers: 0)
            // A page with no rows has nothing after it: a cursor on it would be followed forever
            // by a server that keeps handing out empty pages.
            if (decoded.rows?.rowCount ?? 0) == 0, decoded.nextCursorID != nil {
                throw DataLinkError.emptyPageWithCursor(target, page: number)
            }
            return decoded
        }
        var pages: [DecodeAhead.Pending<DecodedResponse>] = []
        var walkError: (any Error)?
        do {
            try await client.tablePages(table, tickers: pending, from: Self.date(from), to: Self.date(to), columns: columns) { response in
                if pages.contains(where: { if case .failure = $0.finished { true } else { false } }) { throw EarlierPageFailed() }
                let number = pages.count + 1
                let source = "\(table) page \(number)"
                if let cursor = try? DataLinkCursor.nextCursorID(inJSON: response.body, source: source) {
                    pages.append(await ahead.decode { try decodePage(response, source: source, number: number) })
                    return cursor
                }
                // Not a page the cursor scan reads: decode it here, for the decoder's own answer.
                let result = Result { try decodePage(response, source: source, number: number) }
                pages.append(DecodeAhead.Pending(result))
                guard case .success(let decoded) = result else { throw EarlierPageFailed() }
                return decoded.nextCursorID
            }
        } catch {
            walkError = error
        }
        let incoming = IncomingRows()
        for (k, page) in pages.enumerated() {
            if let rows = try await page.value.get().rows { incoming.add(rows, source: "\(table) page \(k + 1)") }
        }
        if let walkError {
            guard !(walkError is EarlierPageFailed) else { throw CommandFailure("a page failed to decode") }
            throw walkError
        }
        let tables = incoming.tables()
        var outcome = Outcome(tables: tables)
        let returned = Set(tables.flatMap { $0.tickers.filter { $0.rowCount > 0 }.map(\.symbol) })
        for symbol in pending {
            let stored = Self.storedSymbol(symbol)
            guard !returned.contains(stored), !(update && existing.ticker(stored) != nil) else { continue }
            outcome.failures.append((symbol, CommandFailure("\(table) returned no rows for \(symbol) (unknown ticker, or no data in the range)")))
        }
        progress.advance(rows: 0, bytes: 0, tickers: symbols.count)
        return outcome
    }
}

/// The whole fetch did not finish within `--deadline`; nothing was saved.
struct FetchDeadlineExceeded: Error, CLIReportableError {
    var deadline: Duration
    var message: String { "fetch did not finish within its deadline of \(BulkFetch.format(deadline)); nothing was saved" }
    var hint: String? { "--deadline DURATION (e.g. 12h) allows more time; --update then fetches only what is missing" }
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
        guard let result else { throw CommandFailure("fetch ended without a result") }
        return try result.get()
    }
}

/// A writer shared by concurrent requests (the --debug log): whole lines, one at a time.
final class SynchronizedWriter: @unchecked Sendable {
    // Safe: every write holds `lock`.
    private let lock = NSLock()
    private let writer: any OutputWriter

    init(_ writer: any OutputWriter) { self.writer = writer }

    func writeLine(_ line: String) {
        lock.withLock { try? writer.writeLine(line) }
    }
}

/// Progress on stderr when it is a terminal: tickers done / total, rows, bytes, rate, elapsed.
final class Progress: @unchecked Sendable {
    // Safe: all state behind `lock`.
    private let lock = NSLock()
    private let enabled: Bool
    private let total: Int
    private let writer: any OutputWriter
    private let start = ContinuousClock.now
    private var tickers = 0, rows = 0, bytes = 0

    init(enabled: Bool, total: Int, writer: any OutputWriter) {
        self.enabled = enabled
        self.total = total
        self.writer = writer
    }

    func advance(rows: Int, bytes: Int, tickers: Int) {
        lock.withLock {
            self.rows += rows
            self.bytes += bytes
            self.tickers += tickers
            guard enabled else { return }
            let elapsed = ContinuousClock.now - start
            let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
            let rate = seconds > 0 ? Double(self.bytes) / seconds / 1e6 : 0
            try? writer.write(String(format: "\r\u{1B}[Kfetched %d/%d tickers · %@ rows · %.1f MB · %.1f MB/s · %.1f s",
                                     self.tickers, total, self.rows.groupedText, Double(self.bytes) / 1e6, rate, seconds))
            try? writer.flush()
        }
    }

    func finish() {
        lock.withLock {
            guard enabled else { return }
            try? writer.write("\r\u{1B}[K")
            try? writer.flush()
        }
    }
}

extension DataLinkError: CLIReportableError {
    var message: String { description }

    var hint: String? {
        switch self {
        case .gone: "the time-series API no longer serves many datasets; the Tables API does: --table WIKI/PRICES"
        case .unauthorized(_, _, _, let keySent), .forbidden(_, _, _, let keySent):
            keySent ? "check the key in $NASDAQ_DATA_LINK_API_KEY or ~/.nasdaq/data_link_apikey"
                : "no API key was sent: set $NASDAQ_DATA_LINK_API_KEY or write it to ~/.nasdaq/data_link_apikey"
        case .rateLimited: "wait and run again with --update; --concurrency 1 sends one request at a time"
        case .notFound: "check the ticker and --database (a ticker like BRK.B is sent as BRK_B)"
        case .exportNotReady: "the export may take longer for a large table: raise --bulk-timeout, or run again later"
        case .exportDownloadFailed: "run again: a fresh export link is asked for each time"
        case .insecureTransport: "use an https:// --base-url (plain http is allowed only to localhost, for tests)"
        case .deadlineExceeded: "--timeout SECONDS allows a slow response more time"
        case .malformedResponse: "the server's answer cannot be trusted to be whole; nothing was saved"
        case .tooManyPages, .emptyPageWithCursor: "the server kept the pagination going; --from and --to with tickers bound the pages"
        default: nil
        }
    }
}

extension APIKeyError: CLIReportableError {
    var message: String { String(describing: self) }
}
