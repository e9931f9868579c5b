import Colonnade
import Foundation

/// `colonnade export`: the whole table or a selection as CSV or NDJSON, streamed row by row
/// (constant memory beyond the selection's bitmask, whatever the size), or as Arrow IPC or
/// Parquet (see `ExportCommand+Columnar.swift`).
struct ExportCommand: Command {
    var spec: CommandSpec { .export }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let (path, _) = try SnapshotLocation.forReading(parsed, context: context)
        let table = try QuoteTable.load(from: path, verify: true)
        let predicate = try FilterCommand.predicate(parsed, table: table)
        let selection = try table.select(predicate)
        if let columnar = parsed.string("format"), OutputFormat(rawValue: columnar) == nil {
            return try Self.writeColumnar(table.subtable(selection), format: columnar, snapshot: path, parsed, context: context)
        }
        if parsed.isGiven("partition-by") || parsed.isGiven("row-group-rows") || parsed.isGiven("compression") {
            throw UsageError.invalidValue(option: "--format", value: parsed.string("format") ?? "csv",
                                          reason: "--partition-by, --row-group-rows and --compression apply to --format parquet only",
                                          suggestion: "parquet", command: "export")
        }
        let format = OutputFormat(rawValue: parsed.string("format") ?? "csv") ?? .csv
        let names = ["ticker", "date"] + table.schema.map(\.identifier)
        var rows = try TableRows(table: table, columnNames: names, rows: MaskRowIterator(selection.mask, limit: nil))

        if let output = parsed.string("output"), output != "-" {
            try Self.refuseSameFile(output: context.resolve(output), snapshot: path, given: output)
            let writer = try FileDescriptorWriter(creatingFileAt: context.resolve(output))
            try format.formatter(footer: nil, forTerminal: writer.isTerminal).write(&rows, to: writer)
            try writer.close()
            context.note("wrote \(selection.count.groupedText) of \(table.rowCount.groupedText) rows to \(output)")
        } else {
            try format.formatter(footer: nil, forTerminal: context.standardOutput.isTerminal).write(&rows, to: context.standardOutput)
        }
        return ExitStatus.success
    }

    /// Refuses an output file that is the snapshot being read: the same device and inode, however
    /// it is named (the same path, a symbolic link, a hard link). Replacing it would destroy the
    /// data being exported.
    static func refuseSameFile(output: String, snapshot: String, given: String) throws {
        var out = stat(), snap = stat()
        guard stat(output, &out) == 0, stat(snapshot, &snap) == 0 else { return }
        if out.st_dev == snap.st_dev && out.st_ino == snap.st_ino {
            throw CommandFailure("\(given) is the snapshot being exported (\(snapshot)); writing it would destroy the snapshot",
                                 hint: "choose another --output file")
        }
    }
}
