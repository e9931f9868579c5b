import Colonnade
#if canImport(Glibc)
import Glibc
#endif

extension ExportCommand {
    /// Parquet's settings: `--partition-by`, `--row-group-rows`, `--compression` (`export` only;
    /// `filter -o` writes the defaults).
    struct ParquetSettings {
        var partitioning: ParquetWriter.Partitioning?
        var rowGroupRows = 1_048_576
        /// nil: the format's default (none; zstd for delta).
        var compression: CompressionChoice?
        var mode: Options.Mode?
    }

    /// `--compression`.
    enum CompressionChoice: Equatable {
        case none, snappy, lz4
        case zstd(Int)

        var parquet: ParquetWriter.Compression {
            switch self {
            case .none: .none
            case .snappy: .snappy
            case .lz4: .lz4Raw
            case .zstd(let level): .zstd(level: level)
            }
        }

        var arrow: ArrowIPCWriter.Compression? {
            switch self {
            case .none, .snappy: nil
            case .lz4: .lz4Frame
            case .zstd(let level): .zstd(level: level)
            }
        }
    }

    /// `--format arrow|arrows|parquet`: the table (already narrowed to the selection) as Arrow IPC
    /// or Parquet. Files are written through `ReplacementFile` (a locked temporary renamed over the
    /// target, its permissions kept); only `arrows` may go to standard output, and not when it is
    /// a terminal. An output that is the `snapshot` being exported is refused.
    ///
    /// - Parameters:
    ///   - given: `-o` as typed, if any.
    ///   - command: the command whose options these are, for usage errors.
    static func writeColumnar(
        _ table: QuoteTable, format: Options.Format, output given: String?, snapshot: SnapshotSource,
        parquet: ParquetSettings = ParquetSettings(), command: String = CommandSpec.export.name,
        context: CommandContext
    ) throws -> Int32 {
        let output = given.map { $0 == "-" ? "-" : context.resolve($0) }
        if let output, output != "-", let given {
            try refuseSameFile(output: output, snapshot: snapshot, given: given)
        }
        if format == .arrows, output == nil || output == "-", context.standardOutput.isTerminal {
            throw UsageError.invalidValue(
                option: "--format", value: format.rawValue,
                reason: "binary output to a terminal; redirect standard output to a file or a pipe, or pass -o FILE",
                suggestion: nil, command: command)
        }
        // On a terminal, an export over a second shows its progress (rows and bytes written).
        let progress = ProgressLine(
            "exporting", total: table.rowCount, enabled: context.standardError.isTerminal,
            writer: context.standardError, delay: context.progressDelay)
        let advance: @Sendable (Int, Int) -> Void = { rows, bytes in progress.advance(rows: rows, bytes: bytes) }
        var partitions: Int?
        do {
            defer { progress.finish() }
            switch format {
            case .arrow, .arrows:
                var writer = ArrowIPCWriter(table: table, format: format == .arrow ? .file : .stream)
                writer.progress = advance
                writer.compression = parquet.compression?.arrow
                if let output, output != "-" {
                    try writer.write(toFile: output)
                } else if format == .arrows {
                    try writeToStandardOutput(context) { out throws(InteropError) in try writer.write(to: out) }
                    return ExitStatus.success
                } else {
                    throw UsageError.missingOption(
                        option: "--output FILE (the Arrow file format needs a file; use --format arrows for a pipe)", command: command)
                }
            case .delta:
                guard let output, output != "-" else {
                    throw UsageError.missingOption(option: "--output DIR (the Delta table's directory)", command: command)
                }
                var writer = DeltaWriter(table: table)
                writer.progress = advance
                writer.rowGroupRows = parquet.rowGroupRows
                writer.partitioning = parquet.partitioning
                if let c = parquet.compression { writer.compression = c.parquet }
                let outcome = try writer.write(to: output, mode: parquet.mode.map { $0 == .append ? .append : .overwrite })
                progress.finish()
                context.note(
                    "committed version \(outcome.version) of \(given ?? output): \(table.rowCount.groupedText) rows in "
                        + "\(outcome.added.count) file\(outcome.added.count == 1 ? "" : "s")"
                        + (outcome.removed > 0 ? ", \(outcome.removed) file\(outcome.removed == 1 ? "" : "s") removed" : ""))
                return ExitStatus.success
            default:  // .parquet (the text formats are written row by row in `run`)
                guard let output, output != "-" else {
                    throw UsageError.missingOption(
                        option: "--output PATH (Parquet needs a file or, with --partition-by, a directory)", command: command)
                }
                var writer = ParquetWriter(table: table)
                writer.progress = advance
                writer.rowGroupRows = parquet.rowGroupRows
                writer.compression = parquet.compression?.parquet ?? .none
                if let partitioning = parquet.partitioning {
                    partitions = try writer.writePartitioned(toDirectory: output, by: partitioning).count
                } else {
                    try writer.write(toFile: output)
                }
            }
        } catch InteropError.io(_, _, EPIPE) {
            throw OutputError.brokenPipe
        }
        // After the progress line is erased.
        if let partitions, let output {
            context.note("wrote \(table.rowCount.groupedText) rows in \(partitions) partition\(partitions == 1 ? "" : "s") under \(output)")
            return ExitStatus.success
        }
        context.note("wrote \(table.rowCount.groupedText) rows to \(given ?? "-")")
        return ExitStatus.success
    }

    /// `table` with only the value columns `names` asks for, in that order (`ticker` and `date`
    /// are always written by the columnar formats, so naming them changes nothing).
    ///
    /// - Throws: a usage error for a name that is not a value column (a computed column included).
    static func projected(_ table: QuoteTable, onto names: [String]) throws -> QuoteTable {
        var indices = [Int]()
        for name in names where !["ticker", "date", table.dateColumnName.lowercased()].contains(name.lowercased()) {
            guard let index = table.columnIndex(named: name) else {
                let close = Suggestions.closest(to: name, among: table.schema.map(\.identifier))
                let computed = ColumnSelection.computed(name) != nil
                throw UsageError.invalidValue(
                    option: "--columns", value: name,
                    reason: computed
                        ? "arrow, arrows and parquet take value columns; computed columns go to csv or ndjson" : "no such column",
                    suggestion: computed ? nil : close.first, command: CommandSpec.export.name)
            }
            if !indices.contains(index) { indices.append(index) }
        }
        if indices == Array(table.schema.indices) { return table }
        do {
            return try QuoteTable(
                schema: indices.map { table.schema[$0] }, columns: indices.map { table.columns[$0] }, dates: table.dates,
                tickers: table.tickers, dateColumnName: table.dateColumnName, metadata: table.metadata, checkDates: false)
        } catch {
            throw CommandFailure("cannot select the columns \(names.joined(separator: ",")): \(error)")
        }
    }

    /// Binary output to standard output: the text writer is flushed first, then bytes go to its
    /// descriptor. In-process callers without a descriptor get an error.
    static func writeToStandardOutput(
        _ context: CommandContext,
        _ body: (DescriptorInteropOutput) throws(InteropError) -> Void
    ) throws {
        try context.standardOutput.flush()
        guard let fdWriter = context.standardOutput as? FileDescriptorWriter else {
            throw CommandFailure("binary output needs a file descriptor", hint: "pass --output FILE")
        }
        let out = try DescriptorInteropOutput(fd: fdWriter.fileDescriptor, name: fdWriter.destination)
        try body(out)
        try out.flush()
    }
}

extension InteropError: CLIReportableError {
    var message: String { description }

    var hint: String? {
        switch self {
        case .unsupportedCodec:
            "re-export it with zstd (or snappy, gzip, lz4): pyarrow.parquet.write_table(t, p, compression='zstd'), "
                + "Polars df.write_parquet(p) (zstd is its default), DuckDB COPY t TO 'p' (FORMAT parquet, COMPRESSION zstd)"
        case .missingColumn:
            "a table needs a ticker (or symbol) column and a date column; name single-ticker files with --ticker"
        case .truncated, .malformed:
            "the file is damaged or was still being written; write it again"
        default:
            nil
        }
    }
}
