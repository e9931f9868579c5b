/// Which of `filter`'s options go together: every option either applies or is refused with a
/// usage error naming the conflict, never silently ignored. Checked before the snapshot loads.
extension FilterCommand {
    /// Where `filter` writes: the format (typed, or inferred from `-o FILE`'s extension) and the
    /// file as typed (`nil` for standard output, also for `-o -`).
    struct Destination: Equatable {
        var format: Options.Format
        var file: String?
    }

    /// The format and file `parsed` asks for.
    ///
    /// - Parameter toTerminal: whether standard output is a terminal (binary formats are refused there).
    /// - Throws: a usage error for a `--format` the extension contradicts, an extension that names
    ///   no format without `--format`, `--format table` into a file, or binary output to a terminal.
    static func destination(_ parsed: ParsedArguments, toTerminal: Bool) throws(UsageError) -> Destination {
        let name = CommandSpec.filter.name
        let typed = parsed[Options.format]
        guard let file = parsed[Options.output], file != "-" else {
            let format = typed ?? .table
            if toTerminal, format.columnarFormat != nil {
                throw .invalidValue(
                    option: "--format", value: format.rawValue,
                    reason: "binary output to a terminal; redirect standard output to a file or a pipe, or pass -o FILE",
                    suggestion: nil, command: name)
            }
            return Destination(format: format, file: nil)
        }
        let inferred = Options.Format.inferred(fromExtensionOf: file)
        guard let typed else {
            guard let inferred else {
                throw .invalidValue(
                    option: "--output", value: file,
                    reason: "its extension names no format; name it .csv, .json, .ndjson, .arrow, .arrows or .parquet, or pass --format",
                    suggestion: nil, command: name)
            }
            return Destination(format: inferred, file: file)
        }
        if typed == .table {
            throw .invalidValue(
                option: "--format", value: "table",
                reason: "a table is for reading on a terminal; write csv, json, ndjson, arrow, arrows or parquet to a file",
                suggestion: inferred?.rawValue, command: name)
        }
        if let inferred, inferred != typed {
            throw .invalidValue(
                option: "--output", value: file,
                reason: "its extension says \(inferred.rawValue) but --format is \(typed.rawValue)",
                suggestion: nil, command: name)
        }
        return Destination(format: typed, file: file)
    }

    /// Refuses options that would have no effect together. With `--by`, `--sort`, `--limit` and
    /// `--having` apply to the groups; without it, `--count` and `--agg` print one row, which
    /// cannot be sorted, limited or filtered, and printed rows are filtered by `--where`, not
    /// `--having`.
    static func refuseInapplicable(_ parsed: ParsedArguments, format: Options.Format) throws(UsageError) {
        try refuseTableOptions(parsed, format: format)
        func refuse(_ option: String, _ other: String, _ reason: String) -> UsageError {
            .inapplicable(option: option, with: other, reason: reason, command: CommandSpec.filter.name)
        }
        let grouped = parsed.isGiven(Options.by)
        let summary = parsed[Options.count] ? "--count" : parsed.isGiven(Options.agg) ? "--agg" : nil
        if let summary {
            let what = summary == "--count" ? "one number" : "one row"
            if !grouped {
                if parsed.isGiven(Options.sort) {
                    throw refuse("--sort", summary, "\(summary) without --by prints \(what); there are no rows to sort")
                }
                if parsed.isGiven(Options.limit) {
                    throw refuse("--limit", summary, "\(summary) without --by prints \(what)")
                }
                if parsed.isGiven(Options.having) {
                    throw refuse(
                        "--having", summary,
                        "--having keeps groups of --by; without it \(summary) prints \(what) "
                            + "(filter the rows with --where)")
                }
            }
            if parsed.isGiven(Options.columns) {
                throw refuse("--columns", summary, "\(summary) prints its own columns (the count or the aggregates, after --by's keys)")
            }
        }
        if let columnar = format.columnarFormat {
            let other = "--format \(columnar.rawValue)"
            let reason = "arrow, arrows and parquet write the matching rows with every column, in table order"
            for (given, option) in [
                (parsed[Options.count], "--count"), (parsed.isGiven(Options.agg), "--agg"),
                (parsed.isGiven(Options.sort), "--sort"), (parsed.isGiven(Options.limit), "--limit"),
                (parsed.isGiven(Options.having), "--having"),
                (parsed.isGiven(Options.columns), "--columns"),
            ] where given {
                throw refuse(option, other, reason)
            }
        }
    }

    /// `--all` and `--precision` are about tables: refused with another format, `--all` with
    /// `--limit`, and both with a bare `--count` (one integer).
    private static func refuseTableOptions(_ parsed: ParsedArguments, format: Options.Format) throws(UsageError) {
        let name = CommandSpec.filter.name
        // How the format was chosen, to name it: `--format csv`, or `-o` whose extension chose it.
        let formatOption =
            parsed.isGiven(Options.format)
            ? "--format \(format.rawValue)"
            : "--output \(parsed[Options.output] ?? "")"
        let bareCount = parsed[Options.count] && !parsed.isGiven(Options.by)
        if parsed[Options.showAll] {
            if format != .table {
                throw .inapplicable(
                    option: "--all", with: formatOption,
                    reason: "--all lifts the row cap of a table on a terminal; \(format.rawValue) always gets every row",
                    command: name)
            }
            if parsed.isGiven(Options.limit) {
                throw .inapplicable(option: "--all", with: "--limit", reason: "--all prints every row, --limit at most N", command: name)
            }
            if bareCount || parsed.isGiven(Options.agg) && !parsed.isGiven(Options.by) {
                throw .inapplicable(
                    option: "--all", with: parsed[Options.count] ? "--count" : "--agg",
                    reason: "without --by there is one row to print", command: name)
            }
        }
        if parsed.isGiven(Options.precision) {
            if format != .table {
                throw .inapplicable(
                    option: "--precision", with: formatOption,
                    reason: "CSV and JSON keep every digit; --precision rounds the numbers of a table", command: name)
            }
            if parsed[Options.count] {
                throw .inapplicable(option: "--precision", with: "--count", reason: "counts are whole numbers", command: name)
            }
        }
    }
}
