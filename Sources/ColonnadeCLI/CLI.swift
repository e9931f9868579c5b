import Colonnade
import DataLink
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
///
/// Standard error is wrapped in a ``RedactingWriter`` holding the API key the environment or
/// `~/.nasdaq/data_link_apikey` provides (when one does): whatever a command, an error or a
/// log line says, that key never reaches the terminal.
func runColonnade(_ arguments: [String], context: CommandContext) -> Int32 {
    var context = context
    context.arguments = arguments
    if !(context.standardError is RedactingWriter) {
        let home = context.environment["HOME"].map { URL(fileURLWithPath: $0) }
        let key = (try? APIKey.resolve(environment: context.environment, homeDirectory: home)) ?? nil
        context.standardError = RedactingWriter(context.standardError, keys: key.map { [$0] } ?? [])
    }
    return CommandLineTool.colonnade.run(arguments, context: context)
}

extension CommandLineTool {
    /// The `colonnade` tool and its commands, in the order `colonnade help` lists them. To add a
    /// command, declare its `CommandSpec` and list a type conforming to ``Command`` here.
    static var colonnade: CommandLineTool {
        CommandLineTool(
            version: Colonnade.version,
            abstract: "an in-memory columnar analytics engine for daily stock quotes",
            commands: [
                FilterCommand(), InfoCommand(), VerifyCommand(), GenerateCommand(), ExportCommand(),
                ImportCommand(), FetchCommand(), AdjustCommand(), LogCommand(), RestoreCommand(), CompactCommand(), GCCommand(),
                ChartCommand(), ShellCommand(), CompletionsCommand(),
                HelpCommand(), VersionCommand(), CompleteNamesCommand(),
            ]
        )
    }
}
