import Colonnade
import Foundation

/// `colonnade export`: the whole table or a selection as CSV or NDJSON, streamed row by row
/// (constant memory beyond the selection's bitmask, whatever the size), or as Arrow IPC or
/// Parquet (see `ExportCommand+Columnar.swift`).
struct ExportCommand: Command {
    var spec: CommandSpec { .export }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let source = try SnapshotLocation.forReading(parsed, Options.snapshot, context: context)
        let stored = try source.load(verify: true)
        // --adjusted: --where, computed columns and the written open … volume read the adjusted columns.
        let table = parsed[Options.adjusted] ? try FilterCommand.adjustedTable(stored) : stored
        if parsed[Options.adjusted] { context.note(FilterCommand.adjustedNote) }
        // The rows and columns filter would select.
        let predicate = try FilterCommand.predicate(
            where: parsed[Options.where],
            tickers: parsed.isGiven(Options.tickers) ? parsed[Options.tickers] : nil,
            from: parsed[Options.from], to: parsed[Options.to], table: table)
        FilterCommand.warnAboutUnknownTickers(in: predicate, table: table, context: context)
        let selection: Selection
        if let text = parsed[Options.on] {
            guard let day = ScreenDay(text) else {
                throw UsageError.invalidValue(
                    option: "--on", value: text, reason: "expected a date YYYY-MM-DD or 'latest'",
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
            try Self.checkColumnarOptions(parsed, format: requested, command: spec.name)
            let parquet = ParquetSettings(
                partitioning: parsed[Options.partitionBy].map { $0 == .year ? .year : .month },
                rowGroupRows: parsed[Options.rowGroupRows],
                compression: try Self.compressionChoice(parsed[Options.compression], command: spec.name),
                mode: parsed[Options.mode])
            let columnar = try Self.projected(table.subtable(selection), onto: names)
            return try Self.writeColumnar(
                columnar, format: requested, output: parsed[Options.output], snapshot: source,
                parquet: parquet, context: context)
        }
        if Self.givesParquetOptions(parsed) {
            throw UsageError.invalidValue(
                option: "--format", value: requested.rawValue,
                reason: "--partition-by, --row-group-rows, --compression and --mode apply to --format parquet, delta or arrow only",
                suggestion: "parquet", command: spec.name)
        }
        var rows = try TableRows(table: table, columnNames: names, rows: MaskRowIterator(selection.mask, limit: nil))

        let file = parsed[Options.output].flatMap { $0 == "-" ? nil : $0 }
        // Progress on a terminal's standard error, unless the rows themselves go to that terminal.
        let progress = ProgressLine(
            "exporting", total: selection.count,
            enabled: context.standardError.isTerminal && (file != nil || !context.standardOutput.isTerminal),
            writer: context.standardError, delay: context.progressDelay)
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
            || parsed.isGiven(Options.mode)
    }

    /// Refuses the columnar options `format` does not take.
    static func checkColumnarOptions(_ parsed: ParsedArguments, format: Options.Format, command: String) throws {
        func refuse(_ option: String, _ formats: String) throws {
            throw UsageError.invalidValue(
                option: "--format", value: format.rawValue, reason: "\(option) applies to --format \(formats) only",
                suggestion: nil, command: command)
        }
        if format != .delta && parsed.isGiven(Options.mode) { try refuse("--mode", "delta") }
        if format == .arrow || format == .arrows {
            if parsed.isGiven(Options.partitionBy) { try refuse("--partition-by", "parquet or delta") }
            if parsed.isGiven(Options.rowGroupRows) { try refuse("--row-group-rows", "parquet or delta") }
            if try compressionChoice(parsed[Options.compression], command: command) == .snappy {
                throw UsageError.invalidValue(
                    option: "--compression", value: "snappy", reason: "Arrow IPC compresses with zstd or lz4",
                    suggestion: "zstd", command: command)
            }
        }
    }

    /// `--compression` as typed: none, snappy, zstd, zstd:LEVEL, lz4; nil when not given.
    static func compressionChoice(_ text: String?, command: String) throws -> CompressionChoice? {
        guard let text else { return nil }
        let lower = text.lowercased()
        switch lower {
        case "none", "uncompressed": return CompressionChoice.none
        case "snappy": return .snappy
        case "lz4", "lz4_raw", "lz4raw": return .lz4
        case "zstd": return .zstd(ZstdCompressor.fileDefaultLevel)
        default:
            if lower.hasPrefix("zstd:"), let level = Int(lower.dropFirst(5)), ZstdCompressor.levels.contains(level) {
                return .zstd(level)
            }
            throw UsageError.invalidValue(
                option: "--compression", value: text,
                reason:
                    "expected none, snappy, zstd, zstd:LEVEL (LEVEL \(ZstdCompressor.levels.lowerBound)-\(ZstdCompressor.levels.upperBound)) or lz4",
                suggestion: nil, command: command)
        }
    }

    /// Refuses an output file that is the snapshot being read: the same device and inode, however
    /// it is named (the same path, a symbolic link, a hard link). Replacing it would destroy the
    /// data being exported.
    static func refuseSameFile(output: String, snapshot source: SnapshotSource, given: String) throws {
        guard let snapshot = source.path else { return }  // the sample is in memory
        var out = stat(), snap = stat()
        guard stat(output, &out) == 0, stat(snapshot, &snap) == 0 else { return }
        if out.st_dev == snap.st_dev && out.st_ino == snap.st_ino {
            throw CommandFailure(
                "\(given) is the snapshot being exported (\(snapshot)); writing it would destroy the snapshot",
                hint: "choose another --output file")
        }
    }
}
