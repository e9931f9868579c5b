import Colonnade
import ColonnadeIngest
import DataLinkFormat
import Foundation

/// `colonnade import`: parses its arguments, calls `QuoteStore.import` (ColonnadeIngest: decode
/// saved Nasdaq Data Link responses, Arrow IPC and Parquet, upsert, save under the write lock, all
/// or nothing) and prints the summary.
struct ImportCommand: Command {
    var spec: CommandSpec { .importFiles }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let files = parsed.positionals.map(context.resolve)
        let path = try SnapshotLocation.forWriting(parsed[Options.snapshot], context: context)
        try SnapshotLocation.requireWritableDirectory(of: path)
        let progress = ImportProgressLine(
            enabled: context.standardError.isTerminal, total: files.count, writer: context.standardError,
            delay: context.progressDelay)
        var options = ImportOptions()
        options.ticker = parsed[Options.ticker]
        options.threads = parsed[Options.threads] ?? QueryOptions.availableCores
        options.archiveLimits = Self.archiveLimits(parsed)
        options.strict = parsed[Options.strict]
        options.deltaVersion = parsed[Options.deltaVersion]
        options.waitForLock = !parsed[Options.noWait]
        options.progress = progress.counters
        options.waitingForLock = context.waitingNoter(path: path)
        options.ordinaryPathOnly = context.tuning.ordinaryImport
        options.command = context.commandText
        let result: ImportResult
        do {
            defer { progress.finish() }
            result = try QuoteStore(at: path).import(files, options: options)
        }
        Self.noteSkipped(result.skippedColumns, context: context)
        if !result.saved {
            for file in parsed.positionals { context.note("\(TerminalText.escaped(file)) has no rows") }
            return ExitStatus.success
        }
        try Self.printSummary(of: result.imported, into: path, verb: "imported", context: context)
        Self.noteVersions(result.commit, result.compaction, context: context)
        return ExitStatus.success
    }

    /// `version N: appended …` and, apart, the compaction that followed it.
    static func noteVersions(_ commit: SnapshotCommit?, _ compaction: SnapshotCommit?, context: CommandContext) {
        guard let commit, commit.version.kind != .single else { return }
        context.note(
            "version \(commit.version.number): \(commit.version.kind.name) of \(commit.version.writtenRows.groupedText) rows "
                + "(\(LogCommand.bytes(commit.writtenBytes)) written); 'colonnade restore \(commit.version.number - 1)' undoes it")
        if let compaction {
            context.note(
                "then compacted into version \(compaction.version.number) (\(LogCommand.bytes(compaction.writtenBytes)) written), "
                    + "as the store had more than \(SnapshotStore.compactionSegmentLimit) segments or more segment rows than base rows")
        }
    }

    /// The zip limits from `--max-inflate-ratio` and `--max-inflate-size`.
    static func archiveLimits(_ parsed: ParsedArguments) -> ZipLimits {
        var limits = ZipLimits.standard
        limits.maximumRatio = parsed[SharedOptions.maxInflateRatio]
        let (bytes, overflow) = parsed[SharedOptions.maxInflateSize].multipliedReportingOverflow(by: 1 << 20)
        limits.maximumSize = overflow ? Int.max : bytes
        limits.ratioFloor = Swift.min(limits.ratioFloor, limits.maximumSize)
        return limits
    }

    /// One note per file for the Arrow and Parquet columns left out (`--strict` refuses instead):
    /// `note: q.parquet: skipped 2 columns that are not numbers: exchange (type …), is_split_day (…)`.
    static func noteSkipped(_ notes: [InteropSkippedColumn], context: CommandContext) {
        // A date column whose timestamps are not at midnight: one note, each row taken as its day.
        for n in notes where n.kind == .timeOfDay {
            context.note(
                TerminalText.escaped(
                    "\(n.file): column '\(n.column)' holds times of day other than midnight (first: \(n.type)); "
                        + "each row is taken as its day"))
        }
        let skipped = notes.filter { $0.kind == .notAQuote }
        var files: [String] = []
        for s in skipped where !files.contains(s.file) { files.append(s.file) }
        for file in files {
            let columns = skipped.filter { $0.file == file }
            let list = columns.map {
                "\($0.column) (\($0.type.hasPrefix("type ") ? String($0.type.dropFirst(5).prefix { $0 != "," }) : $0.type))"
            }
            context.note(
                TerminalText.escaped(
                    "\(file): skipped \(columns.count) column\(columns.count == 1 ? "" : "s") that \(columns.count == 1 ? "is" : "are") not numbers: "
                        + list.joined(separator: ", ")) + " (--strict refuses such a file)")
        }
    }

    /// Tickers a summary lists in full; past this many it shows the first and last half of them
    /// with a `… N more rows …` line between (`TableFormatter.rowCap`): a day of every ticker is
    /// thousands of tickers, and the total line says how many.
    static let summaryTickers = 20

    /// One line per ticker (rows and date range; the first and last ones past `summaryTickers`),
    /// then a total.
    static func printSummary(of incoming: QuoteTable, into path: String, verb: String, context: CommandContext) throws {
        var rows = [[Cell]]()
        for t in incoming.tickers {
            rows.append([
                .text(t.symbol), .integer(Int64(t.rowCount)),
                t.rowCount > 0 ? .day(incoming.dates[t.firstRow]) : .null,
                t.rowCount > 0 ? .day(incoming.dates[t.firstRow + t.rowCount - 1]) : .null,
            ])
        }
        var source = MaterializedRows(columns: ["ticker", "rows", "first", "last"].map(ResultColumn.init(name:)), rows: rows)
        let cap = incoming.tickers.count > summaryTickers ? summaryTickers : nil
        // The count given, the rows between the first and the last shown are skipped, not formatted.
        _ = try TableFormatter(rowCap: cap).writeTable(&source, count: rows.count, to: context.standardOutput)
        try context.standardOutput.writeLine(
            "\(verb) \(incoming.rowCount.groupedText) rows for \(incoming.tickers.count.groupedText) "
                + "ticker\(incoming.tickers.count == 1 ? "" : "s") into \(TerminalText.escaped(path))")
    }
}

extension ResponseError: CLIReportableError {
    var message: String { description }

    var hint: String? {
        switch self {
        case .apiError:
            "the file holds the API's error response, not quotes; fetch it again"
        case .notADataLinkResponse:
            "colonnade imports Nasdaq Data Link (Quandl) JSON and CSV responses: dataset, dataset_data or datatable"
        case .missingTicker:
            "name the ticker with --ticker T, or name the file after it (FDX.json, WIKI-FDX.csv)"
        case .decoding(.outOfMemory):
            "the decoded rows did not fit in memory: import fewer or smaller files at a time, or where more memory is free"
        case .archive(.tooLarge):
            "if the archive is trusted, raise the limits with --max-inflate-ratio N or --max-inflate-size MiB"
        default:
            nil
        }
    }
}

extension StandardInput.Failure: CLIReportableError {
    var hint: String? {
        reason == "it is a terminal" ? "pipe a response into it, for example: unzip -p export.zip | colonnade import -" : nil
    }
}

extension IngestFailure: CLIReportableError {}
