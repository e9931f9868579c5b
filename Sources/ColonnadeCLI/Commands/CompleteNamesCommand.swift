import Colonnade

/// `colonnade _complete columns|value-columns|tickers [--snapshot PATH] [--word WORD]`: internal (not
/// listed by `help`, not a stable interface), called by completion scripts while the user presses
/// Tab. Prints the offered names one per line (``CompletionCandidates/isOffered(_:)``) — with
/// `--word`, only those the word being typed starts, ready for bash to insert
/// (``CompletionCandidates/quotedForBash(_:completing:)``). Prints nothing (and succeeds) when
/// there is no snapshot to read, so that a completion never shows an error.
struct CompleteNamesCommand: Command {
    var spec: CommandSpec { .completeNames }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let topic = parsed.positionals[0]
        guard ["columns", "value-columns", "tickers"].contains(topic) else {
            throw UsageError.invalidValue(
                option: "TOPIC", value: topic, reason: "expected columns, value-columns or tickers",
                suggestion: nil, command: spec.name)
        }
        // Quietly: a missing or damaged snapshot completes to nothing.
        let quiet = CommandContext(
            standardOutput: context.standardOutput, standardError: MemoryOutputWriter(),
            environment: context.environment, currentDirectory: context.currentDirectory)
        guard let source = try? SnapshotLocation.forReading(parsed[Options.snapshot], context: quiet),
            let table = try? source.load(verify: false)
        else { return ExitStatus.success }
        let names =
            switch topic {
            case "columns": ["all", "ticker", "date"] + table.schema.map(\.identifier)
            case "value-columns": table.schema.map(\.identifier)
            default: table.tickers.map(\.symbol)
            }
        // Names come from a file or a server: only those that are one printable word are offered, and
        // for bash each is quoted here, so that no script ever expands one.
        let lines =
            parsed[Options.word].map { CompletionCandidates.quotedForBash(names, completing: $0) }
            ?? names.filter(CompletionCandidates.isOffered)
        for line in lines {
            try context.standardOutput.writeLine(line)
        }
        return ExitStatus.success
    }
}
