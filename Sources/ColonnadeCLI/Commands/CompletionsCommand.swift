import Colonnade

/// `colonnade completions bash|zsh|fish`: prints a completion script for the tool's commands.
struct CompletionsCommand: Command {
    var spec: CommandSpec { .completions }

    /// The commands the script completes; nil for `CommandLineTool.colonnade`'s (looked up when
    /// run: that tool's list contains this command).
    var commands: [CommandSpec]?

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        let name = parsed.positionals[0]
        guard let shell = CompletionScript.Shell(rawValue: name) else {
            let shells = CompletionScript.Shell.allCases.map(\.rawValue)
            throw UsageError.invalidValue(
                option: "SHELL", value: name, reason: "expected one of " + shells.joined(separator: ", "),
                suggestion: Suggestions.closest(to: name, among: shells).first, command: spec.name)
        }
        try context.standardOutput.write(CompletionScript(commands: commands ?? CommandSpec.colonnadeCommands).text(for: shell))
        return ExitStatus.success
    }
}
