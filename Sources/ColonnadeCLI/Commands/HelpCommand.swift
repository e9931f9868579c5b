/// `colonnade help [COMMAND]`: the tool's summary, or one command's help. The top level answers
/// `help` itself (``CommandLineTool``), since its argument is a command name; this declaration
/// gives it a place in the command list, in `help help` and in completions.
struct HelpCommand: Command {
    var spec: CommandSpec { .help }

    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
        CommandLineTool.colonnade.run(["help"] + parsed.positionals, context: context)
    }
}
