import Testing
import Colonnade
@testable import ColonnadeCLI

@Suite struct CommandLineToolTests {
    @Test func versionGoesToStandardOutput() {
        let run = colonnade("--version")
        #expect(run.status == 0)
        #expect(run.standardOutput == "colonnade \(Colonnade.version)\n")
        #expect(run.standardError.isEmpty)
    }

    @Test func helpListsEveryCommand() {
        let run = colonnade("help")
        #expect(run.status == 0)
        #expect(run.standardError.isEmpty)
        let lines = run.standardOutput.split(separator: "\n")
        for spec in CommandSpec.colonnadeCommands {
            let line = lines.first { $0.hasPrefix("  \(spec.name) ") }
            #expect(line != nil, "\(spec.name) is listed")
        }
        #expect(
            CommandSpec.colonnadeCommands.map(\.name) == [
                "filter", "info", "verify", "generate", "export", "import", "fetch", "adjust", "log", "restore", "compact", "gc", "chart",
                "shell",
                "completions", "help", "version",
            ])
        #expect(!run.standardOutput.contains("(coming)"))
        #expect(!run.standardOutput.contains("_selftest") && !run.standardOutput.contains("_complete"))
        #expect(colonnade("--help").standardOutput == run.standardOutput)
        #expect(colonnade("-h").standardOutput == run.standardOutput)
    }

    @Test(arguments: CommandSpec.colonnadeCommands)
    func commandHelpShowsEveryOptionAndIsTheSameEveryWayAsked(spec: CommandSpec) {
        let viaHelp = colonnade("help", spec.name)
        #expect(viaHelp.status == 0)
        #expect(viaHelp.standardError.isEmpty)
        let text = viaHelp.standardOutput
        #expect(text.contains("USAGE: colonnade \(spec.name)"))
        #expect(text.contains(spec.abstract.split(separator: " ").prefix(3).joined(separator: " ")))
        for option in spec.options {
            #expect(text.contains(option.synopsis), "\(spec.name) help shows \(option.synopsis)")
        }
        for positional in spec.positionals {
            #expect(text.contains(positional.synopsis))
        }
        #expect(colonnade(spec.name, "--help").standardOutput == text)
        #expect(colonnade(spec.name, "-h").standardOutput == text)
        // Help wins over other mistakes on the same line.
        #expect(colonnade(spec.name, "--bogus", "-h").standardOutput == text)
    }

    @Test func helpAlignsOptionTextInOneColumn() {
        let lines = CommandSpec.generate.helpText().split(separator: "\n", omittingEmptySubsequences: false)
        let options = lines.drop { $0 != "OPTIONS:" }.dropFirst().prefix { !$0.isEmpty }
        let starts = options.filter { $0.hasPrefix("  -") }.map { line in
            // The text starts after the first run of two or more spaces following the label.
            line.dropFirst(2).firstRange(of: "  ").map { range in
                line.distance(from: line.startIndex, to: range.upperBound) + line[range.upperBound...].prefix { $0 == " " }.count
            }
        }
        #expect(Set(starts).count == 1, "\(starts)")
        #expect(lines.allSatisfy { $0.count <= 80 || $0.hasPrefix("  colonnade ") })
    }

    @Test func usageLineShowsAlternativesAndRequiredOptions() {
        let usage = CommandSpec.generate.usageSynopsis().split(separator: " ").joined(separator: " ")
        #expect(usage.contains("--tickers N --days D [--seed S]"))
        #expect(usage.contains("(--snapshot PATH | --json-dir DIR | --csv FILE)"))
        #expect(CommandSpec.fetch.usageSynopsis().contains("[--database WIKI | --table WIKI/PRICES]"))
        #expect(CommandSpec.export.usageSynopsis().contains("[-o FILE]"))
        #expect(CommandSpec.importFiles.compactUsage() == "colonnade import FILE... [options]")
    }

    @Test func unknownCommandSuggestsAndExitsTwoWithNothingOnStandardOutput() {
        let run = colonnade("filtr", "--limit", "3")
        #expect(run.status == 2)
        #expect(run.standardOutput.isEmpty)
        #expect(
            run.standardError == """
                error: unknown command 'filtr'
                hint: did you mean 'filter'?
                usage: colonnade <command> [options]; see 'colonnade help'

                """)
    }

    @Test func unknownOptionNamesTheCommandAndSuggests() {
        let run = colonnade("filter", "--lmit", "3")
        #expect(run.status == 2)
        #expect(run.standardOutput.isEmpty)
        let lines = run.standardError.split(separator: "\n")
        #expect(
            lines == [
                "error: unknown option '--lmit' for 'colonnade filter'",
                "hint: did you mean '--limit'?",
                "usage: colonnade filter [options]; see 'colonnade help filter'",
            ])
    }

    @Test func unknownHelpTopicIsAnUnknownCommand() {
        let run = colonnade("help", "exprot")
        #expect(run.status == 2)
        #expect(run.standardError.hasPrefix("error: unknown command 'exprot'\nhint: did you mean 'export'?\n"))
    }

    @Test func bareColonnadePrintsTheSummaryOnStandardOutputAndSucceeds() {
        let run = colonnade()
        #expect(run.status == 0)
        #expect(run.standardError.isEmpty)
        #expect(run.standardOutput == colonnade("help").standardOutput)
        #expect(run.standardOutput.contains("USAGE: colonnade <command> [options]"))
    }

    @Test func helpHelpAndVersionAreCommands() {
        let helpHelp = colonnade("help", "help")
        #expect(helpHelp.status == 0)
        #expect(helpHelp.standardOutput.hasPrefix("OVERVIEW: Show the commands, or one command's options and examples."))
        #expect(colonnade("help", "--help").standardOutput == helpHelp.standardOutput)
        let version = colonnade("version")
        #expect(version.status == 0)
        #expect(version.standardOutput == colonnade("--version").standardOutput)
        #expect(version.standardOutput.hasPrefix("colonnade "))
        #expect(colonnade("version", "extra").status == 2)
    }

    @Test(arguments: CommandSpec.colonnadeCommands)
    func helpBeforeOrAfterACommandShowsItsHelp(spec: CommandSpec) {
        let text = colonnade("help", spec.name).standardOutput
        #expect(colonnade("--help", spec.name).standardOutput == text)
        #expect(colonnade("-h", spec.name).standardOutput == text)
        // `help` as the only argument after the command asks for its help too.
        let after = colonnade(spec.name, "help")
        #expect(after.status == 0)
        #expect(after.standardOutput == text)
    }

    @Test func helpNotAloneAfterACommandIsAnArgument() {
        // `import ./help` names a file; `import help x` is two files, not a help request.
        let run = colonnade("import", "help", "other")
        #expect(run.status == 1)
        #expect(run.standardOutput.isEmpty)
        #expect(!run.standardError.contains("OVERVIEW"))
    }

    @Test func usageErrorsEndWithTheCommandsUsage() {
        let run = colonnade("generate", "--tickers", "3", "--days", "5")
        #expect(run.status == 2)
        #expect(
            run.standardError.split(separator: "\n") == [
                "error: 'colonnade generate' needs one of '--snapshot PATH', '--json-dir DIR' or '--csv FILE'",
                "usage: colonnade generate --tickers N --days D (--snapshot PATH | --json-dir DIR | --csv FILE) [options]; see 'colonnade help generate'",
            ])
    }

    @Test(arguments: ["filter", "info", "verify", "export --format csv"])
    func missingSnapshotFailsWithOneLineAndAHint(command: String) {
        let run = colonnade(command.split(separator: " ").map(String.init) + ["--snapshot", "/nonexistent/x.snapshot"])
        #expect(run.status == 1)
        #expect(run.standardOutput.isEmpty)
        let lines = run.standardError.split(separator: "\n")
        #expect(lines.count == 2, "\(run.standardError)")
        #expect(lines.first == "error: /nonexistent/x.snapshot: no such file or directory")
        #expect(lines.last?.hasPrefix("hint: create one with 'colonnade generate'") == true)
    }

    @Test func selfTestOutputPrintsNumberedLines() {
        let run = colonnadeWithSelfTest(["_selftest-output", "3"])
        #expect(run.status == 0)
        #expect(run.standardOutput == "line 1 of 3\nline 2 of 3\nline 3 of 3\n")
    }

    @Test func closedOutputEndsQuietlyWithStatusZero() {
        let run = colonnadeWithSelfTest(["_selftest-output", "100000"], outputLimit: 100)
        #expect(run.status == 0)
        #expect(run.standardError.isEmpty)
        #expect(run.standardOutput.hasPrefix("line 1 of 100000\n"))
        #expect(run.standardOutput.utf8.count == 100)
    }

    @Test func reportableErrorsChooseTheirWordsAndStatus() {
        struct Damaged: CLIReportableError {
            var message: String { "snapshot 'q.snapshot' is truncated:\nexpected 4096 bytes" }
            var hint: String? { "run 'colonnade verify'" }
        }
        struct Opaque: Error {}
        let damaged = ErrorReport(Damaged())
        #expect(damaged.message == "snapshot 'q.snapshot' is truncated: expected 4096 bytes")
        #expect(damaged.hint == "run 'colonnade verify'")
        #expect(damaged.exitStatus == 1)
        #expect(ErrorReport(UsageError.missingCommand).exitStatus == 2)
        #expect(ErrorReport(Opaque()).message == "Opaque()")
        let writer = MemoryOutputWriter()
        damaged.write(to: writer)
        #expect(writer.text == "error: snapshot 'q.snapshot' is truncated: expected 4096 bytes\nhint: run 'colonnade verify'\n")
    }

    @Test func errorsThrownByACommandBecomeOneLineAndStatusOne() {
        struct Failing: Command {
            struct Broken: CLIReportableError { var message: String { "cannot read 'x': no such file" } }
            let spec = CommandSpec(name: "fail", abstract: "Fails.")
            func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
                try context.standardOutput.write("partial\n")
                throw Broken()
            }
        }
        let tool = CommandLineTool(version: "0", abstract: "test", commands: [Failing()])
        let output = MemoryOutputWriter()
        let errors = MemoryOutputWriter()
        let status = tool.run(
            ["fail"],
            context: CommandContext(
                standardOutput: output, standardError: errors,
                environment: [:], currentDirectory: "/"))
        #expect(status == 1)
        #expect(output.text == "partial\n")
        #expect(errors.text == "error: cannot read 'x': no such file\n")
    }

    @Test func contextResolvesRelativePaths() {
        let context = CommandContext(
            standardOutput: MemoryOutputWriter(), standardError: MemoryOutputWriter(),
            environment: [:], currentDirectory: "/work/data")
        #expect(context.resolve("q.snapshot") == "/work/data/q.snapshot")
        #expect(context.resolve("/abs/q.snapshot") == "/abs/q.snapshot")
        #expect(context.resolve("-") == "-")
    }
}
