import Colonnade

/// `colonnade adjust`: rewrites (or creates) the adjusted columns from the raw ones by WIKI's
/// rule (docs/ADJUSTMENTS.md), under the snapshot's write lock, replacing the file atomically.
struct AdjustCommand: Command {
    var spec: CommandSpec { .adjust }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let path = try SnapshotLocation.forWriting(parsed[Options.snapshot], context: context)
        let tickers = parsed[Options.tickers]
        var summaries = [AdjustmentSummary]()
        var created = false
        try SnapshotLocation.update(path, wait: !parsed[Options.noWait], context: context) { table in
            // `update` starts an empty table where no file is: nothing to adjust there.
            if table.schema.isEmpty && table.rowCount == 0 {
                throw CommandFailure(
                    "no snapshot at \(path)", hint: "create one with 'colonnade import' or 'colonnade fetch', or pass --snapshot PATH")
            }
            created = !table.hasAdjustedColumns
            summaries = try table.recomputeAdjustments(tickers: tickers.isEmpty ? nil : tickers)
        }
        let rows = summaries.reduce(0) { $0 + $1.rows }, events = summaries.reduce(0) { $0 + $1.events }
        context.note(
            "\(created ? "created" : "recomputed") the adjusted columns of \(summaries.count.groupedText) ticker\(summaries.count == 1 ? "" : "s") "
                + "(\(rows.groupedText) rows, \(events.groupedText) split and dividend days) by WIKI's rule; saved \(path)")
        return ExitStatus.success
    }
}

extension AdjustmentError: CLIReportableError {
    var message: String { description }

    var hint: String? {
        switch self {
        case .missingColumns(_, let other) where !other.isEmpty:
            "adjust and verify --adjustments apply to WIKI's columns only; 'colonnade info' lists the table's columns"
        case .missingColumns:
            "import or fetch data with ex_dividend and split_ratio (WIKI/PRICES has them); 'colonnade info' lists the table's columns"
        case .noAdjustedColumns, .incompleteAdjustedColumns:
            "'colonnade adjust' creates them from the raw prices and the events"
        case .unknownTickers:
            "'colonnade info' lists the tickers"
        }
    }
}
