import Colonnade
import Foundation

/// Runs the `colonnade` command line with `arguments` (without the program name) and returns its
/// exit status, using the process's standard output and error, environment and directory.
///
/// Ignores `SIGPIPE`, so that output into a closed pipe (`colonnade … | head`) fails with `EPIPE`
/// and ends the command quietly instead of killing the process.
public func runColonnade(_ arguments: [String]) -> Int32 {
    signal(SIGPIPE, SIG_IGN)
    let context = CommandContext(
        standardOutput: FileDescriptorWriter.standardOutput(),
        standardError: FileDescriptorWriter.standardError(),
        environment: ProcessInfo.processInfo.environment,
        currentDirectory: FileManager.default.currentDirectoryPath
    )
    return runColonnade(arguments, context: context)
}

/// Runs the `colonnade` command line in `context`: what tests call to run a command in-process.
public func runColonnade(_ arguments: [String], context: CommandContext) -> Int32 {
    CommandLineTool.colonnade.run(arguments, context: context)
}

extension CommandLineTool {
    /// The `colonnade` tool and its commands. To implement a command, replace its
    /// `PlaceholderCommand` here with a type conforming to ``Command``.
    public static var colonnade: CommandLineTool {
        CommandLineTool(
            version: Colonnade.version,
            abstract: "an in-memory columnar analytics engine for daily stock quotes",
            commands: CommandSpec.colonnadeCommands.map(implementation(of:)) + [SelfTestOutputCommand(), CompleteNamesCommand()]
        )
    }
}

/// The command that does the work of `spec`.
private func implementation(of spec: CommandSpec) -> any Command {
    switch spec.name {
    case CommandSpec.filter.name: FilterCommand()
    case CommandSpec.info.name: InfoCommand()
    case CommandSpec.verify.name: VerifyCommand()
    case CommandSpec.generate.name: GenerateCommand()
    case CommandSpec.export.name: ExportCommand()
    case CommandSpec.importFiles.name: ImportCommand()
    case CommandSpec.fetch.name: FetchCommand()
    case CommandSpec.chart.name: ChartCommand()
    case CommandSpec.shell.name: ShellCommand()
    case CommandSpec.completions.name: CompletionsCommand()
    default: PlaceholderCommand(spec: spec)
    }
}

/// A declared command whose work is not written yet: it parses its arguments and says so.
struct PlaceholderCommand: Command {
    let spec: CommandSpec

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        try context.standardError.writeLine("error: '\(CommandLineTool.programName) \(spec.name)' is not implemented yet")
        return ExitStatus.failure
    }
}

/// `colonnade _selftest-output N`: internal, for tests of the output path. Prints N numbered
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
            throw UsageError.invalidValue(option: "N", value: text, reason: "expected a non-negative integer",
                                          suggestion: nil, command: spec.name)
        }
        for line in 0..<count {
            try context.standardOutput.writeLine("line \(line + 1) of \(count)")
        }
        return ExitStatus.success
    }
}
