import Colonnade

/// `colonnade _complete columns|value-columns|tickers [--snapshot PATH]`: internal, called by completion scripts
/// while the user presses Tab. Prints the names one per line; prints nothing (and succeeds) when
/// there is no snapshot to read, so that a completion never shows an error.
struct CompleteNamesCommand: Command {
    var spec: CommandSpec { .completeNames }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let topic = parsed.positionals[0]
        guard ["columns", "value-columns", "tickers"].contains(topic) else {
            throw UsageError.invalidValue(option: "TOPIC", value: topic, reason: "expected columns, value-columns or tickers",
                                          suggestion: nil, command: spec.name)
        }
        // Quietly: a missing or damaged snapshot completes to nothing.
        let quiet = CommandContext(standardOutput: context.standardOutput, standardError: MemoryOutputWriter(),
                                   environment: context.environment, currentDirectory: context.currentDirectory)
        guard let source = try? SnapshotLocation.forReading(parsed[Options.snapshot], context: quiet),
              let table = try? source.load(verify: false)
        else { return ExitStatus.success }
        let names = switch topic {
        case "columns": ["all", "ticker", "date"] + table.schema.map(\.identifier)
        case "value-columns": table.schema.map(\.identifier)
        default: table.tickers.map(\.symbol)
        }
        // Names come from a file: only those that are plain words reach the shell.
        for name in names where name.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F && $0.isASCII }) {
            try context.standardOutput.writeLine(name)
        }
        return ExitStatus.success
    }
}
