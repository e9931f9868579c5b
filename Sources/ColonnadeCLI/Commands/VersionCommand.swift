/// `colonnade version`: the version, as `colonnade --version` prints it.
struct VersionCommand: Command {
    var spec: CommandSpec { .version }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        try context.standardOutput.writeLine("\(CommandLineTool.programName) \(CommandLineTool.colonnade.version)")
        return ExitStatus.success
    }
}
