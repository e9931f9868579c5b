import Colonnade
import DataLinkFormat
import Foundation

/// `colonnade import`: decode saved Nasdaq Data Link responses (JSON or CSV, time-series or
/// tables), Arrow IPC files and streams, Parquet files and directories, and upsert them into a
/// snapshot, saved atomically under the snapshot's write lock. All or nothing: if any file fails
/// to decode, the snapshot is left exactly as it was.
struct ImportCommand: Command {
    var spec: CommandSpec { .importFiles }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let files = parsed.positionals.map(context.resolve)
        let path = try SnapshotLocation.forWriting(parsed[Options.snapshot], context: context)
        let threads = parsed[Options.threads] ?? QueryOptions.availableCores
        let progress = ImportProgressLine(enabled: context.standardError.isTerminal, total: files.count, writer: context.standardError,
                                          delay: ImportProgressLine.delay(environment: context.environment))
        if let imported = try Self.importDirect(files, into: path, parsed, threads: threads, progress: progress, context: context) {
            try Self.printSummary(of: imported, into: path, verb: "imported", context: context)
            return ExitStatus.success
        }
        let incoming: QuoteTable
        do {
            defer { progress.finish() }
            var archiveOptions = Self.archiveOptions(parsed)
            archiveOptions.threads = threads
            var skipped: [InteropSkippedColumn] = []
            incoming = try Self.importAll(files, ticker: parsed[Options.ticker], archiveOptions: archiveOptions,
                                          threads: threads, progress: progress.counters, strict: parsed[Options.strict],
                                          deltaVersion: parsed[Options.deltaVersion], skipped: &skipped)
            Self.noteSkipped(skipped, context: context)
        }
        // Nothing to import (header-only files, an update's empty response): no ticker is added and
        // the snapshot is not rewritten.
        if incoming.rowCount == 0 {
            for file in parsed.positionals { context.note("\(TerminalText.escaped(file)) has no rows") }
            return ExitStatus.success
        }
        // Locked from load to rename: a concurrent import or fetch waits, and neither's rows are lost.
        try SnapshotLocation.update(path, wait: !parsed[Options.noWait], context: context) { table in
            table.upsert(contentsOf: [incoming], threads: threads)
        }
        try Self.printSummary(of: incoming, into: path, verb: "imported", context: context)
        return ExitStatus.success
    }

    /// A fresh import decoded straight into the new snapshot file (`QuoteImporter.importDirect`),
    /// under the snapshot's write lock: only when nothing exists at `path`, and every input is a
    /// plain file (not `-`, not Arrow or Parquet). nil, with nothing written, when it does not
    /// apply (also when the lock is busy and `--no-wait` is given: the ordinary path decodes
    /// first and then reports that): the caller imports the ordinary way. Hidden, for tests and
    /// benchmarks: `COLONNADE_TEST_ORDINARY_IMPORT=1` always takes the ordinary way.
    static func importDirect(_ files: [String], into path: String, _ parsed: ParsedArguments, threads: Int,
                             progress: ImportProgressLine, context: CommandContext) throws -> QuoteTable? {
        func absent() -> Bool { (try? FileTarget(forWriting: path))?.exists == false }
        guard context.environment["COLONNADE_TEST_ORDINARY_IMPORT"] != "1",
              !files.isEmpty, !files.contains(where: { $0 == "-" || InteropReader.handles(path: $0) }), absent() else { return nil }
        let lock: SnapshotLock
        do {
            lock = try SnapshotLocation.lock(path, wait: !parsed[Options.noWait], context: context)
        } catch SnapshotError.locked {
            return nil
        }
        defer { lock.release() }
        guard absent() else { return nil }
        try SnapshotLocation.holdForTest(context)
        do {
            // Named as the ordinary path's upsert into an empty table names it.
            let imported = try QuoteImporter.importDirect(files, ticker: parsed[Options.ticker], threads: threads,
                                                          progress: progress.counters, snapshot: path,
                                                          dateColumnName: QuoteTable().dateColumnName)
            // The ordinary path goes on showing progress.
            if imported != nil { progress.finish() }
            return imported?.table
        } catch {
            progress.finish()
            throw error
        }
    }

    /// The zip reading options from `--max-inflate-ratio` and `--max-inflate-size`.
    static func archiveOptions(_ parsed: ParsedArguments) -> ArchiveImporter.Options {
        var limits = ZipLimits.standard
        limits.maximumRatio = parsed[SharedOptions.maxInflateRatio]
        let (bytes, overflow) = parsed[SharedOptions.maxInflateSize].multipliedReportingOverflow(by: 1 << 20)
        limits.maximumSize = overflow ? Int.max : bytes
        limits.ratioFloor = Swift.min(limits.ratioFloor, limits.maximumSize)
        return ArchiveImporter.Options(limits: limits)
    }

    /// Decodes every input: Arrow IPC and Parquet files and directories through `InteropReader`,
    /// Data Link responses and zips of them through `QuoteImporter`, `-` as one body (or zip) read
    /// from standard input; later inputs win on equal (ticker, date).
    static func importAll(_ files: [String], ticker: String?,
                          archiveOptions: ArchiveImporter.Options = ArchiveImporter.Options(),
                          threads: Int = 1, progress: ImportProgress? = nil,
                          strict: Bool = false, deltaVersion: Int? = nil, skipped: inout [InteropSkippedColumn]) throws -> QuoteTable {
        let special = files.filter { $0 == "-" || InteropReader.handles(path: $0) }
        if special.isEmpty {
            return try QuoteImporter.importFiles(files, ticker: ticker, archiveOptions: archiveOptions, threads: threads, progress: progress)
        }
        var parts: [QuoteTable] = []
        for file in files {
            if file == "-" {
                // A datatable CSV decodes while it is read; anything else is read whole first.
                try StandardInput.checkReadable()
                parts.append(try QuoteImporter.importStream(STDIN_FILENO, source: "standard input", ticker: ticker,
                                                            archiveOptions: archiveOptions, threads: threads))
            } else if DeltaTable.isTable(file) {
                // A Delta Lake table: its files come from its log, never from a listing.
                parts.append(try DeltaTable.read(at: file, version: deltaVersion, ticker: ticker, strict: strict, skipped: &skipped))
            } else if InteropReader.handles(path: file) {
                parts.append(try InteropReader.read(path: file, ticker: ticker, strict: strict, skipped: &skipped))
            } else {
                parts.append(try QuoteImporter.importFiles([file], ticker: ticker, archiveOptions: archiveOptions))
            }
        }
        var first = parts.removeFirst()
        if !parts.isEmpty { first.upsert(contentsOf: parts) }
        return first
    }

    /// One note per file for the Arrow and Parquet columns left out (`--strict` refuses instead):
    /// `note: q.parquet: skipped 2 columns that are not numbers: exchange (type …), is_split_day (…)`.
    static func noteSkipped(_ skipped: [InteropSkippedColumn], context: CommandContext) {
        var files: [String] = []
        for s in skipped where !files.contains(s.file) { files.append(s.file) }
        for file in files {
            let columns = skipped.filter { $0.file == file }
            let list = columns.map { "\($0.column) (\($0.type.hasPrefix("type ") ? String($0.type.dropFirst(5).prefix { $0 != "," }) : $0.type))" }
            context.note(TerminalText.escaped("\(file): skipped \(columns.count) column\(columns.count == 1 ? "" : "s") that \(columns.count == 1 ? "is" : "are") not numbers: "
                + list.joined(separator: ", ")) + " (--strict refuses such a file)")
        }
    }

    /// One line per ticker (rows and date range), then a total.
    static func printSummary(of incoming: QuoteTable, into path: String, verb: String, context: CommandContext) throws {
        var rows = [[Cell]]()
        for t in incoming.tickers {
            rows.append([.text(t.symbol), .integer(Int64(t.rowCount)),
                         t.rowCount > 0 ? .day(incoming.dates[t.firstRow]) : .null,
                         t.rowCount > 0 ? .day(incoming.dates[t.firstRow + t.rowCount - 1]) : .null])
        }
        var source = MaterializedRows(columns: ["ticker", "rows", "first", "last"].map(ResultColumn.init(name:)), rows: rows)
        try TableFormatter().write(&source, to: context.standardOutput)
        try context.standardOutput.writeLine("\(verb) \(incoming.rowCount.groupedText) rows for \(incoming.tickers.count.groupedText) "
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
