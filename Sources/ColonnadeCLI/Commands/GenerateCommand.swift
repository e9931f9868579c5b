import Colonnade
import DataLinkFormat

/// `colonnade generate`: synthetic quotes from the seeded generator, to a snapshot, a directory
/// of `dataset_data` JSON files (one per ticker, newest first) or one CSV file.
struct GenerateCommand: Command {
    var spec: CommandSpec { .generate }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let tickers = parsed[Options.tickers], days = parsed[Options.days]
        guard tickers.multipliedReportingOverflow(by: days).partialValue <= 500_000_000, tickers <= 1_000_000 else {
            throw UsageError.invalidValue(
                option: "--days", value: String(days), reason: "tickers × days must be at most 500,000,000 rows",
                suggestion: nil, command: spec.name)
        }
        let generator = QuoteGenerator(
            tickers: tickers, days: days, seed: UInt64(parsed[Options.seed]),
            start: parsed[Options.start].daysSinceEpoch)
        // A table holds dates up to 9999-12-31: refuse a calendar that would run past it.
        if days > 0, generator.lastTradingDay > Int(Day.storableDayNumbers.upperBound) {
            throw UsageError.invalidValue(
                option: "--start", value: Day(daysSinceEpoch: generator.start).description,
                reason: "\(days.groupedText) trading days from it run past 9999-12-31, the last date a table holds",
                suggestion: nil, command: spec.name)
        }
        if let snapshot = parsed[Options.snapshot] {
            let path = context.resolve(snapshot)
            try SnapshotLocation.requireDirectory(of: path)
            let lock = try SnapshotLocation.lock(path, wait: !parsed[Options.noWait], context: context)
            defer { lock.release() }
            // Checked under the lock, so no other writer creates it between the check and the save.
            if !parsed[Options.force], (try? FileTarget(forWriting: path))?.exists == true {
                throw CommandFailure(
                    "\(path) exists; generate does not replace a snapshot unless told to",
                    hint: "pass --force to replace it, or choose another --snapshot path")
            }
            // On a terminal, work over a second shows its progress: rows made, then bytes saved.
            let progress = ProgressLine(
                "generating", total: tickers * days, enabled: context.standardError.isTerminal,
                writer: context.standardError, delay: context.progressDelay)
            let table = generator.makeTable { progress.advance(rows: $0) }
            // --force over an existing snapshot commits a new version: the old one stays readable.
            if (try? FileTarget(forWriting: path))?.exists == true {
                progress.finish()
                let commit = try SnapshotStore(at: path).writeLocked(
                    table, command: context.commandText, durable: true,
                    threads: QueryOptions.availableCores)
                context.note(
                    "wrote \(table.rowCount.groupedText) rows (\(tickers.groupedText) tickers × \(days.groupedText) days) to \(snapshot) "
                        + "as version \(commit.version.number); 'colonnade restore \(commit.version.number - 1)' undoes it")
                return ExitStatus.success
            }
            do {
                defer { progress.finish() }
                try table.save(to: path) { progress.advance(bytes: $0) }
            }
            context.note(
                "wrote \(table.rowCount.groupedText) rows (\(tickers.groupedText) tickers × \(days.groupedText) days) to \(snapshot)")
        } else if let directory = parsed[Options.jsonDirectory] {
            let table = generator.makeTable()
            let files = try QuoteGenerator.writeDatasetJSON(table, toDirectory: context.resolve(directory)).count
            context.note("wrote \(files.groupedText) JSON files (\(table.rowCount.groupedText) rows) to \(directory)")
        } else if let file = parsed[Options.csv] {
            let table = generator.makeTable()
            try QuoteGenerator.writeDatatableCSV(table, to: context.resolve(file))
            context.note("wrote \(table.rowCount.groupedText) rows to \(file)")
        }
        return ExitStatus.success
    }
}
