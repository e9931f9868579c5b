@testable import ColonnadeCLI

/// `_selftest-output N`: a command only the tests add to the tool (it is not in the shipped
/// `colonnade`), for tests of the output path. Prints N numbered
/// lines to standard output, so a test can close the pipe early and check the tool ends quietly.
struct SelfTestOutputCommand: Command {
    let spec = CommandSpec(
        name: "_selftest-output",
        abstract: "Internal: print N numbered lines to standard output (tests the output path).",
        positionals: [PositionalSpec("N", abstract: "How many lines to print.")],
        listing: .hidden
    )

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let text = parsed.positionals[0]
        guard let count = Int(text), count >= 0 else {
            throw UsageError.invalidValue(
                option: "N", value: text, reason: "expected a non-negative integer",
                suggestion: nil, command: spec.name)
        }
        for line in 0 ..< count {
            try context.standardOutput.writeLine("line \(line + 1) of \(count)")
        }
        return ExitStatus.success
    }
}
