import Foundation
import Testing
@testable import ColonnadeCLI

/// Every example `colonnade help COMMAND` shows is a command line that parses: each `colonnade`
/// command of a pipeline is a real command whose arguments pass its parser, and the examples
/// that read run on the built-in sample.
@Suite struct HelpExampleTests {
    /// Every declared command, hidden ones included (their help shows examples too).
    static var specs: [CommandSpec] { CommandLineTool.colonnade.commands.map(\.spec) }

    /// The commands of a pipeline (`a | b`), split at `|` outside quotes, each split into words as
    /// a shell would, without redirections (`> FILE`, `< FILE`).
    static func pipeline(_ line: String) throws -> [[String]] {
        var segments = [String](), current = "", quote: Character?
        for c in line {
            if let q = quote {
                if c == q { quote = nil }
            } else if c == "'" || c == "\"" {
                quote = c
            } else if c == "|" {
                segments.append(current)
                current = ""
                continue
            }
            current.append(c)
        }
        segments.append(current)
        return try segments.map { segment in
            var words = try ShellWords.split(segment)[...], kept = [String]()
            while let word = words.popFirst() {
                if word == ">" || word == "<" || word == ">>" || word == "2>" {
                    _ = words.popFirst()
                    continue
                }
                kept.append(word)
            }
            return kept
        }
    }

    @Test(arguments: specs)
    func everyExampleParses(spec: CommandSpec) throws {
        for line in spec.exampleLines() {
            let commands = try Self.pipeline(line)
            let ours = commands.filter { $0.first == CommandLineTool.programName }
            #expect(ours.contains { $0.dropFirst().first == spec.name }, "'\(line)' is an example of \(spec.name)")
            for words in ours {
                let arguments = Array(words.dropFirst())
                guard let name = arguments.first else {
                    Issue.record("'\(line)': 'colonnade' with no command")
                    continue
                }
                guard let command = CommandLineTool.colonnade.commands.first(where: { $0.spec.name == name }) else {
                    Issue.record("'\(line)': no command '\(name)'")
                    continue
                }
                if name == "help" { continue }  // its argument is a command name, checked by running it below
                #expect(usageError(Array(arguments.dropFirst()), for: command.spec) == nil, "'\(line)'")
            }
        }
    }

    @Test func helpExamplesOfHelpRun() {
        for example in CommandSpec.help.examples {
            let run = colonnade(example.split(separator: " ").map(String.init))
            #expect(run.status == 0, "\(example): \(run.standardError)")
        }
    }

    @Test func anExampleThatStartsWithAnotherProgramIsShownAsWritten() {
        let importLines = CommandSpec.importFiles.exampleLines()
        #expect(importLines.contains("unzip -p WIKI_PRICES.zip | colonnade import -"))
        #expect(!importLines.contains { $0.hasPrefix("colonnade unzip") })
        #expect(!CommandSpec.shell.exampleLines().contains { $0.hasPrefix("colonnade printf") })
        #expect(CommandSpec.importFiles.helpText().contains("\n  unzip -p WIKI_PRICES.zip | colonnade import -\n"))
    }

    /// The examples that only read (filter, info, verify, chart, export to a file) and name no
    /// snapshot run on the built-in sample, in an empty directory, and succeed; those that print
    /// rows print some.
    @Test func examplesThatReadRunOnTheBuiltInSample() throws {
        for spec in Self.specs where ["filter", "info", "verify", "chart", "export"].contains(spec.name) {
            for line in spec.exampleLines() {
                let commands = try Self.pipeline(line)
                guard commands.count == 1, let words = commands.first, !words.contains("--snapshot") else { continue }
                // Each example in a directory of its own: one example's output (a partitioned
                // directory) must not be in the way of another's file of the same name.
                let directory = try EndToEndFixture.scratchDirectory("examples")
                let output = MemoryOutputWriter(), errors = MemoryOutputWriter()
                let context = CommandContext(
                    standardOutput: output, standardError: errors, environment: [:],
                    currentDirectory: directory.path)
                let status = runColonnade(Array(words.dropFirst()), context: context)
                #expect(status == 0, "'\(line)': \(errors.text)")
                if spec.name == "filter" && !words.contains("--count") {
                    // A header, a rule and at least one row.
                    #expect(output.text.split(separator: "\n").count >= 3, "'\(line)' prints rows on the sample: \(output.text)")
                }
            }
        }
    }
}
