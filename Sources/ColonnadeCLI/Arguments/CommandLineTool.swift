import Colonnade

/// The `colonnade` program: the list of subcommands and the dispatch that every invocation goes
/// through — global options, `help`, parsing, running, and turning errors into exit statuses.
///
/// Exit statuses: 0 on success (and when the reader of standard output went away early, as in
/// `colonnade filter … | head`), 1 when a command fails, 2 for a command-line mistake.
/// Every failure is reported on standard error as one `error:` line, a `hint:` line when there
/// is an obvious next step, and for a command-line mistake the usage line.
struct CommandLineTool {
    /// The name the tool is invoked as, in usage lines and messages.
    static let programName = "colonnade"

    /// Printed by `--version`.
    var version: String
    /// One line for the top of `colonnade help`.
    var abstract: String
    /// The subcommands, in the order `colonnade help` lists them.
    var commands: [any Command]

    /// Creates a tool.
    ///
    /// - Precondition: command names are unique.
    init(version: String, abstract: String, commands: [any Command]) {
        self.version = version
        self.abstract = abstract
        self.commands = commands
        precondition(Set(commands.map(\.spec.name)).count == commands.count, "duplicate command name")
    }

    /// Runs one invocation; `arguments` excludes the program name.
    ///
    /// Flushes `context.standardOutput` before returning.
    /// - Returns: The exit status (see ``ExitStatus``).
    func run(_ arguments: [String], context: CommandContext) -> Int32 {
        var spec: CommandSpec?
        do {
            let status = try dispatch(arguments, context: context, command: &spec)
            try context.standardOutput.flush()
            return status
        } catch OutputError.brokenPipe {
            // The reader is gone (`| head`): nothing more can be shown, and nothing went wrong.
            return ExitStatus.success
        } catch {
            return report(error, command: spec, context: context)
        }
    }

    private func dispatch(_ arguments: [String], context: CommandContext, command spec: inout CommandSpec?) throws -> Int32 {
        // Bare `colonnade`: the summary, as `colonnade help` (what to type next, not an error).
        guard let first = arguments.first else {
            try context.standardOutput.write(helpText())
            return ExitStatus.success
        }
        let rest = Array(arguments.dropFirst())
        switch first {
        case "-h", "--help", "help":
            // `colonnade help`, `colonnade help filter`, `colonnade --help filter`.
            guard var topic = rest.first else {
                try context.standardOutput.write(helpText())
                return ExitStatus.success
            }
            // `help --help` (and `help x --help`): help's own help, which wins as for any command.
            if first == "help", rest.contains(where: { $0 == "-h" || $0 == "--help" }) { topic = "help" }
            let command = try lookUp(topic)
            spec = command.spec
            if rest.count > 1 && topic != "help" { throw UsageError.unexpectedArgument(rest[1], command: nil, suggestion: nil) }
            try context.standardOutput.write(command.spec.helpText())
            return ExitStatus.success
        case "--version":
            if let extra = rest.first { throw UsageError.unexpectedArgument(extra, command: nil, suggestion: nil) }
            try context.standardOutput.writeLine("\(Self.programName) \(version)")
            return ExitStatus.success
        default:
            break
        }
        if first.hasPrefix("-") {
            let suggestions = Suggestions.closest(to: String(first.drop { $0 == "-" }), among: ["help", "version"])
            throw UsageError.unknownOption(first, command: nil, suggestions: suggestions.map { "--" + $0 })
        }
        let command = try lookUp(first)
        spec = command.spec
        // Help wins over every other mistake on the line, as in swift-argument-parser; a lone
        // `help` after the command asks for it too (`./help` names a file called help).
        if rest == ["help"] || rest.prefix(while: { $0 != "--" }).contains(where: { $0 == "--help" || $0 == "-h" }) {
            try context.standardOutput.write(command.spec.helpText())
            return ExitStatus.success
        }
        let parsed = try ArgumentParser.parse(rest, for: command.spec)
        return try command.run(parsed, context: context)
    }

    private func lookUp(_ name: String) throws(UsageError) -> any Command {
        if let command = commands.first(where: { $0.spec.name == name }) { return command }
        let listed = commands.map(\.spec).filter { $0.listing != .hidden }.map(\.name)
        throw .unknownCommand(name, suggestions: Suggestions.closest(to: name, among: listed))
    }

    /// Writes the error and, for a command-line mistake (a usage error, or any error whose exit
    /// status is ``ExitStatus/usage``, such as a bad `--where` expression), the usage line of
    /// `spec` (of the tool when `nil`); returns the exit status.
    private func report(_ error: any Error, command spec: CommandSpec?, context: CommandContext) -> Int32 {
        let report = ErrorReport(error)
        report.write(to: context.standardError)
        if error is UsageError || report.exitStatus == ExitStatus.usage {
            let usage = spec?.compactUsage() ?? "\(Self.programName) <command> [options]"
            let help = spec.map { "\(Self.programName) help \($0.name)" } ?? "\(Self.programName) help"
            try? context.standardError.writeLine("usage: \(usage); see '\(help)'")
        }
        // Whatever the command wrote before failing still goes out, best effort.
        try? context.standardOutput.flush()
        return report.exitStatus
    }
}
