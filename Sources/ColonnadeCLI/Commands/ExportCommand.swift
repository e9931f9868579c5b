import Colonnade
import Foundation

/// `colonnade export`: the whole table or a selection as CSV or NDJSON, streamed row by row
/// (constant memory beyond the selection's bitmask, whatever the size), or as Arrow IPC or
/// Parquet (see `ExportCommand+Columnar.swift`).
struct ExportCommand: Command {
    var spec: CommandSpec { .export }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let source = try SnapshotLocation.forReading(parsed[Options.snapshot], context: context)
        let table = try source.load(verify: true)
        // The rows and columns filter would select.
        let predicate = try FilterCommand.predicate(where: parsed[Options.where],
                                                    tickers: parsed.isGiven(Options.tickers) ? parsed[Options.tickers] : nil,
                                                    from: parsed[Options.from], to: parsed[Options.to], table: table)
        FilterCommand.warnAboutUnknownTickers(in: predicate, table: table, context: context)
        let selection: Selection
        if let text = parsed[Options.on] {
            guard let day = ScreenDay(text) else {
                throw UsageError.invalidValue(option: "--on", value: text, reason: "expected a date YYYY-MM-DD or 'latest'",
                                              suggestion: nil, command: spec.name)
            }
            let maxStale = try FilterCommand.maxStale(parsed[Options.maxStale], command: spec.name)
            selection = try table.select(predicate, on: day, maxStale: maxStale)
            FilterCommand.noteAsOf(day, maxStale: maxStale, table: table, context: context)
        } else {
            selection = try table.select(predicate)
        }
        let allColumns = ["ticker", "date"] + table.schema.map(\.identifier)
        let given = parsed[Options.columns]
        let names = given.isEmpty || given.count == 1 && given[0].lowercased() == "all" ? allColumns : given
        let requested = parsed[Options.format]
        guard let format = requested.textFormat else {
            if requested != .parquet && Self.givesParquetOptions(parsed) {
                throw UsageError.invalidValue(option: "--format", value: requested.rawValue,
                                              reason: "--partition-by, --row-group-rows and --compression apply to --format parquet only",
                                              suggestion: "parquet", command: spec.name)
            }
            let parquet = ParquetSettings(partitionByYear: parsed[Options.partitionBy] == .year,
                                          rowGroupRows: parsed[Options.rowGroupRows], compression: parsed[Options.compression])
            let columnar = try Self.projected(table.subtable(selection), onto: names)
            return try Self.writeColumnar(columnar, format: requested, output: parsed[Options.output], snapshot: source,
                                          parquet: parquet, context: context)
        }
        if Self.givesParquetOptions(parsed) {
            throw UsageError.invalidValue(option: "--format", value: requested.rawValue,
                                          reason: "--partition-by, --row-group-rows and --compression apply to --format parquet only",
                                          suggestion: "parquet", command: spec.name)
        }
        var rows = try TableRows(table: table, columnNames: names, rows: MaskRowIterator(selection.mask, limit: nil))

        let file = parsed[Options.output].flatMap { $0 == "-" ? nil : $0 }
        // Progress on a terminal's standard error, unless the rows themselves go to that terminal.
        let progress = ProgressLine("exporting", total: selection.count,
                                    enabled: context.standardError.isTerminal && (file != nil || !context.standardOutput.isTerminal),
                                    writer: context.standardError, delay: ImportProgressLine.delay(environment: context.environment))
        defer { progress.finish() }
        let headerLines = format == .csv ? 1 : 0
        if let output = file {
            try Self.refuseSameFile(output: context.resolve(output), snapshot: source, given: output)
            let writer = try FileDescriptorWriter(creatingFileAt: context.resolve(output))
            try format.formatter(forTerminal: writer.isTerminal)
                .write(&rows, to: CountingOutputWriter(writer, progress: progress, headerLines: headerLines))
            try writer.close()
            progress.finish()
            context.note("wrote \(selection.count.groupedText) of \(table.rowCount.groupedText) rows to \(output)")
        } else {
            try format.formatter(forTerminal: context.standardOutput.isTerminal)
                .write(&rows, to: CountingOutputWriter(context.standardOutput, progress: progress, headerLines: headerLines))
        }
        return ExitStatus.success
    }

    /// Whether any of the options only `--format parquet` takes was typed.
    static func givesParquetOptions(_ parsed: ParsedArguments) -> Bool {
        parsed.isGiven(Options.partitionBy) || parsed.isGiven(Options.rowGroupRows) || parsed.isGiven(Options.compression)
    }

    /// Refuses an output file that is the snapshot being read: the same device and inode, however
    /// it is named (the same path, a symbolic link, a hard link). Replacing it would destroy the
    /// data being exported.
    static func refuseSameFile(output: String, snapshot source: SnapshotSource, given: String) throws {
        guard let snapshot = source.path else { return }  // the sample is in memory
        var out = stat(), snap = stat()
        guard stat(output, &out) == 0, stat(snapshot, &snap) == 0 else { return }
        if out.st_dev == snap.st_dev && out.st_ino == snap.st_ino {
            throw CommandFailure("\(given) is the snapshot being exported (\(snapshot)); writing it would destroy the snapshot",
                                 hint: "choose another --output file")
        }
    }
}
