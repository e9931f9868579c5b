@testable import ColonnadeCLI
import Colonnade
import Foundation
import Testing

/// `colonnade completions`: scripts generated from the command specs. Each shell's syntax check
/// runs where the shell is installed; bash and fish are also driven to complete real lines
/// (against the built `colonnade`, which answers `_complete` for column names and tickers).
@Suite struct CompletionScriptTests {
    /// The absolute path of `name` on $PATH, if installed.
    static func installed(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    static func script(_ shell: CompletionScript.Shell) -> String {
        CompletionScript(commands: CommandSpec.colonnadeCommands).text(for: shell)
    }

    /// Runs `executable arguments` and returns its exit status and standard output + error.
    static func run(
        _ executable: String, _ arguments: [String], environment: [String: String]? = nil
    ) throws -> (status: Int32, output: String) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = arguments
        if let environment { process.environment = environment }
        process.standardInput = FileHandle.nullDevice
        let pipe = Pipe()
        process.standardOutput = pipe
        process.standardError = pipe
        try process.run()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return (process.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    /// Writes `text` to a new file in a scratch directory.
    static func file(_ text: String, named name: String) throws -> String {
        let path = try EndToEndFixture.scratchDirectory("completions").appendingPathComponent(name).path
        try Data(text.utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    /// An environment whose PATH finds the built `colonnade` first.
    static func environmentWithColonnade() throws -> [String: String] {
        var environment = EndToEndFixture.cleanEnvironment
        let directory = try BuiltExecutable.url().deletingLastPathComponent().path
        environment["PATH"] = directory + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        return environment
    }

    // MARK: Generated from the specs

    @Test(arguments: CompletionScript.Shell.allCases)
    func everyCommandAndOptionTheSpecsDeclareIsInTheScript(shell: CompletionScript.Shell) {
        let text = Self.script(shell)
        let listed = CommandSpec.colonnadeCommands.filter { $0.listing != .hidden }
        #expect(listed.contains { $0.name == "completions" } && listed.contains { $0.name == "chart" })
        for command in listed {
            #expect(text.contains(command.name), "\(shell): command \(command.name)")
            for option in command.options {
                let spelling = shell == .fish ? "-l \(option.name)" : option.displayName
                #expect(text.contains(spelling), "\(shell): \(command.name) \(option.displayName)")
                if let short = option.shortName {
                    #expect(text.contains(shell == .fish ? "-s \(short)" : "-\(short)"), "\(shell): \(command.name) -\(short)")
                }
                if case .choice(let words) = option.kind {
                    for word in words { #expect(text.contains(word), "\(shell): \(option.displayName) \(word)") }
                }
            }
        }
        // Internal commands are not offered.
        #expect(!text.contains("_selftest-output"))
    }

    @Test func aCommandAddedToTheSpecsAppearsWithoutTouchingTheGenerator() {
        let extra = CommandSpec(
            name: "frobnicate", abstract: "Frobnicate it.",
            options: [OptionSpec("level", value: "low|high", kind: .choice(["low", "high"]), abstract: "How much.")])
        for shell in CompletionScript.Shell.allCases {
            let text = CompletionScript(commands: [extra]).text(for: shell)
            #expect(text.contains("frobnicate") && text.contains("level") && text.contains("low") && text.contains("high"), "\(shell)")
        }
    }

    @Test func theCommandPrintsTheScriptAndRefusesAnUnknownShell() {
        let bash = colonnade("completions", "bash")
        #expect(bash.status == 0)
        #expect(bash.standardOutput == Self.script(.bash))
        let bad = colonnade("completions", "tcsh")
        #expect(bad.status == ExitStatus.usage)
        #expect(bad.standardError.contains("tcsh"), "\(bad.standardError)")
        #expect(colonnade("completions").status == ExitStatus.usage)
    }

    // MARK: Syntax, per shell (skipped where the shell is not installed)

    @Test(.enabled(if: installed("bash") != nil, "bash is not installed"))
    func bashAcceptsTheScript() throws {
        let path = try Self.file(Self.script(.bash), named: "colonnade.bash")
        let result = try Self.run(Self.installed("bash") ?? "bash", ["-n", path])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test(.enabled(if: installed("zsh") != nil, "zsh is not installed"))
    func zshAcceptsTheScript() throws {
        let path = try Self.file(Self.script(.zsh), named: "_colonnade")
        let result = try Self.run(Self.installed("zsh") ?? "zsh", ["-n", path])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test(.enabled(if: installed("fish") != nil, "fish is not installed"))
    func fishAcceptsTheScript() throws {
        let path = try Self.file(Self.script(.fish), named: "colonnade.fish")
        let result = try Self.run(Self.installed("fish") ?? "fish", ["-n", path])
        #expect(result.status == 0, "\(result.output)")
    }

    @Test(.enabled(if: installed("bash") != nil, "bash is not installed"))
    func aBrokenScriptFailsTheSyntaxCheck() throws {
        // The check above can fail: a script with an unclosed `case` does.
        let bash = try #require(Self.installed("bash"))
        let path = try Self.file(Self.script(.bash).replacingOccurrences(of: "esac", with: ""), named: "broken.bash")
        #expect(try Self.run(bash, ["-n", path]).status != 0)
    }

    // MARK: Completing real lines

    /// Sources the bash script and completes each line (its last word is the one being typed);
    /// returns the candidates per line.
    static func bashComplete(_ lines: [[String]], in directory: URL) throws -> [String] {
        let scriptPath = try file(script(.bash), named: "colonnade.bash")
        var program = "source \(shellWord(scriptPath))\ncd \(shellWord(directory.path))\n"
        for words in lines {
            program += "COMP_WORDS=(\(words.map(shellWord).map { $0.isEmpty ? "''" : $0 }.joined(separator: " "))); "
            program += "COMP_CWORD=\(words.count - 1); COMPREPLY=(); _colonnade; echo \"${COMPREPLY[*]}\"\n"
        }
        let result = try run(installed("bash") ?? "bash", ["-c", program], environment: try environmentWithColonnade())
        return result.output.split(separator: "\n", omittingEmptySubsequences: false).dropLast().map(String.init)
    }

    @Test(.enabled(if: installed("bash") != nil, "bash is not installed"))
    func bashCompletesCommandsOptionsChoicesColumnsTickersAndFiles() throws {
        let fx = try EndToEndFixture.get()
        let directory = URL(fileURLWithPath: fx.snapshot).deletingLastPathComponent()
        let symbols = fx.table.tickers.map(\.symbol)
        let columns = ["all", "ticker", "date"] + fx.table.schema.map(\.identifier)
        let out = try Self.bashComplete(
            [
                ["colonnade", "fi"],
                ["colonnade", "filter", "--fo"],
                ["colonnade", "filter", "--format", ""],
                ["colonnade", "filter", "--format", "=", "nd"],
                ["colonnade", "filter", "--snapshot", fx.snapshot, "--columns", ""],
                ["colonnade", "filter", "--snapshot", fx.snapshot, "--columns", "date,"],
                ["colonnade", "chart", "--snapshot", fx.snapshot, ""],
                ["colonnade", "info", "--snapshot", "quo"],
                ["colonnade", "help", "comp"],
                ["colonnade", "completions", ""],
                ["colonnade", "filter", "--where", ""],
                ["colonnade", "chart", "--snapshot", fx.snapshot, "--overlay", "close,"],
            ], in: directory)
        #expect(out.count == 12, "\(out)")
        guard out.count == 12 else { return }
        #expect(out[0] == "filter")
        #expect(out[1] == "--format")
        #expect(out[2] == "table csv json ndjson arrow arrows parquet")
        #expect(out[3] == "ndjson")
        #expect(out[4] == columns.joined(separator: " "))
        #expect(out[5] == columns.map { "date," + $0 }.joined(separator: " "))
        #expect(out[6] == symbols.joined(separator: " "))
        #expect(out[7] == "quotes.snapshot")
        #expect(out[8] == "compact completions")
        #expect(out[9] == "bash zsh fish")
        #expect(out[10] == "", "free text gets no candidates")
        #expect(out[11] == fx.table.schema.map { "close," + $0.identifier }.joined(separator: " "), "value columns only")
    }

    @Test(.enabled(if: installed("fish") != nil, "fish is not installed"))
    func fishCompletesOptionsChoicesAndColumns() throws {
        let fx = try EndToEndFixture.get()
        let scriptPath = try Self.file(Self.script(.fish), named: "colonnade.fish")
        let program = """
            source \(shellWord(scriptPath))
            complete -C 'colonnade filter --fo'
            echo ---
            complete -C 'colonnade export --format '
            echo ---
            complete -C 'colonnade filter --snapshot \(fx.snapshot) --columns date,'
            """
        let result = try Self.run(Self.installed("fish") ?? "fish", ["-c", program], environment: try Self.environmentWithColonnade())
        let parts = result.output.components(separatedBy: "---\n").map {
            $0.split(separator: "\n").map { String($0.split(separator: "\t")[0]) }
        }
        #expect(parts.count == 3, "\(result.output)")
        guard parts.count == 3 else { return }
        #expect(parts[0] == ["--format"])
        #expect(Set(parts[1]) == ["csv", "ndjson", "arrow", "arrows", "parquet", "delta"])
        #expect(Set(parts[2]) == Set((["all", "ticker", "date"] + fx.table.schema.map(\.identifier)).map { "date," + $0 }))
    }

    // MARK: The helper the scripts call

    @Test func completeListsColumnsAndTickersAndIsSilentWithoutASnapshot() throws {
        let fx = try EndToEndFixture.get()
        let columns = colonnade("_complete", "columns", "--snapshot", fx.snapshot)
        #expect(columns.status == 0)
        #expect(columns.standardOutput == (["all", "ticker", "date"] + fx.table.schema.map(\.identifier)).map { $0 + "\n" }.joined())
        let tickers = colonnade("_complete", "tickers", "--snapshot", fx.snapshot)
        #expect(tickers.standardOutput == fx.table.tickers.map { $0.symbol + "\n" }.joined())
        let values = colonnade("_complete", "value-columns", "--snapshot", fx.snapshot)
        #expect(values.standardOutput == fx.table.schema.map { $0.identifier + "\n" }.joined())
        #expect(colonnade("_complete", "rows", "--snapshot", fx.snapshot).status == ExitStatus.usage)
        let missing = colonnade("_complete", "columns", "--snapshot", "/nonexistent/x.snapshot")
        #expect(missing.status == 0 && missing.standardOutput.isEmpty && missing.standardError.isEmpty)
        #expect(!colonnade("help").standardOutput.contains("_complete"))
    }
}
