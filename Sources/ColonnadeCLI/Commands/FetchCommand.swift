import Colonnade
import DataLinkFormat
import DataLink
import ColonnadeIngest
import Dispatch
import Foundation
import Synchronization

/// `colonnade fetch`: parses its arguments into `FetchOptions`, calls `QuoteStore.fetch`
/// (ColonnadeIngest: download, decode, upsert and save under the snapshot's write lock; a failure
/// or Ctrl-C leaves the snapshot exactly as it was) and prints the failures and the summary.
struct FetchCommand: Command {
    var spec: CommandSpec { .fetch }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let symbols = parsed.positionals
        if symbols.isEmpty && !parsed[Options.bulk] {
            throw UsageError.missingArgument(name: "TICKER...", command: spec.name)
        }
        let path = try SnapshotLocation.forWriting(parsed[Options.snapshot], context: context)
        let deadlineText = parsed[Options.deadline]
        guard let deadline = DurationText.parseDuration(deadlineText) else {
            throw UsageError.invalidValue(
                option: "--deadline", value: deadlineText, reason: "expected a duration such as 90s, 30m or 6h",
                suggestion: nil, command: spec.name)
        }

        var configuration = DataLinkConfiguration(
            transport: try Self.transport(context), maxConcurrentRequests: parsed[Options.concurrency])
        if let base = parsed[Options.baseURL] ?? context.environment["COLONNADE_BASE_URL"].flatMap({ $0.isEmpty ? nil : $0 }) {
            guard let url = URL(string: base), let scheme = url.scheme, ["http", "https"].contains(scheme), url.host != nil else {
                throw UsageError.invalidValue(
                    option: "--base-url", value: Self.withoutCredentials(base), reason: "expected an http(s) URL",
                    suggestion: nil, command: spec.name)
            }
            configuration.baseURL = url
        }
        configuration.requestDeadline = .seconds(parsed[Options.timeout])
        if let limit = context.tuning.maximumResponseBytes { configuration.maximumResponseSize = limit }
        let home = context.environment["HOME"].map { URL(fileURLWithPath: $0) }
        configuration.apiKey = try APIKey.resolve(
            environment: context.environment, homeDirectory: home,
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
        let progressEnabled = !quiet && !parsed[Options.debug] && errorIsTerminal

        var options = FetchOptions(client: configuration, database: parsed[Options.database], table: parsed[Options.table])
        options.from = parsed[Options.from]
        options.to = parsed[Options.to]
        options.update = parsed[Options.update]
        options.format = parsed[Options.format] == .csv ? .csv : .json
        let columns = parsed[Options.columns]
        options.columns = columns.isEmpty ? nil : columns
        options.keepGoing = parsed[Options.keepGoing]
        options.waitForLock = !parsed[Options.noWait]
        options.command = context.commandText
        options.deadline = deadline
        options.cancelOnInterrupt = true
        options.archiveLimits = ImportCommand.archiveLimits(parsed)
        options.keepZip = parsed[Options.keepZip].map(context.resolve)
        let bulk = parsed[Options.bulk] && options.table != nil
        options.bulk = bulk
        if bulk {
            let timeoutText = parsed[Options.bulkTimeout]
            guard let timeout = DurationText.parseDuration(timeoutText) else {
                throw UsageError.invalidValue(
                    option: "--bulk-timeout", value: timeoutText, reason: "expected a duration such as 90s, 10m or 1h",
                    suggestion: nil, command: spec.name)
            }
            options.exportPolling = ExportPolling(timeout: timeout)
            if let first = context.tuning.exportFirstPoll { options.exportPolling.firstInterval = first }
        }
        let progress = Progress(enabled: progressEnabled, total: symbols.count, writer: context.standardError)
        let bulkProgress = BulkProgress(enabled: progressEnabled, writer: context.standardError)
        let waiting = context.waitingNoter(path: path)
        options.events = { event in
            switch event {
            case .waitingForLock(let holder): waiting(holder)
            case .progress(let p): progress.advance(rows: p.rows, bytes: p.bytes, tickers: p.tickers)
            case .export(let e): bulkProgress.report(e)
            case .exportDownloaded: bulkProgress.finish()
            }
        }

        try SnapshotLocation.requireWritableDirectory(of: path)
        let result: FetchResult
        do {
            defer {
                progress.finish()
                bulkProgress.finish()
            }
            result = try QuoteStore(at: path).fetch(symbols, options: options)
        }

        for (symbol, error) in result.failures {
            let report = ErrorReport(error)
            try context.standardError.writeLine("error: \(TerminalText.escaped(symbol)): \(report.message)")
            if let hint = report.hint { try context.standardError.writeLine("hint: \(hint)") }
        }
        if !result.failures.isEmpty && !options.keepGoing {
            try context.standardError.writeLine(
                "\(result.failures.count) of \(symbols.count) tickers failed; "
                    + "nothing was saved (\(path) is unchanged). --keep-going saves the tickers that succeeded.")
            return ExitStatus.failure
        }
        if !quiet { try ImportCommand.printSummary(of: result.fetched, into: path, verb: "fetched", context: context) }
        for restatement in result.restatements { context.note(TerminalText.escaped(Self.restatementNote(restatement))) }
        if !result.failures.isEmpty {
            try context.standardError.writeLine(
                "\(result.failures.count) of \(symbols.count) tickers failed: "
                    + TerminalText.escaped(result.failures.map(\.symbol).joined(separator: ", ")))
            return ExitStatus.failure
        }
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
    static let wikiNote =
        "note: WIKI stopped updating in March 2018 (its last prices are from 2018-03-27); for later prices "
        + "use --table with a table your own Nasdaq Data Link subscription covers"

    /// Whether the data comes from WIKI: the time-series database `WIKI` (datasets `WIKI/…`) or
    /// a table of the WIKI publisher (`WIKI/PRICES`).
    static func choosesWIKI(database: String, table: String?) -> Bool {
        if let table { return table.uppercased().hasPrefix("WIKI/") }
        return database.uppercased() == "WIKI"
    }
}

extension FetchDeadlineExceeded: CLIReportableError {
    var message: String { "fetch did not finish within its deadline of \(DurationText.format(deadline)); nothing was saved" }
    var hint: String? { "--deadline DURATION (e.g. 12h) allows more time; --update then fetches only what is missing" }
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
            try? writer.write(
                String(
                    format: "\r\u{1B}[Kfetched %d/%d tickers · %@ rows · %.1f MB · %.1f MB/s · %.1f s",
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
            keySent
                ? "check the key in $NASDAQ_DATA_LINK_API_KEY or ~/.nasdaq/data_link_apikey"
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
