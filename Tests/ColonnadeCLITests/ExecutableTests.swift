import Colonnade
import Testing

/// End-to-end: the built `colonnade` process, its exit statuses and its streams.
@Suite struct ExecutableTests {
    @Test func versionPrintsAndExitsZero() throws {
        let result = try BuiltExecutable.run(["--version"])
        #expect(result.status == 0)
        #expect(result.standardOutput == "colonnade \(Colonnade.version)\n")
        #expect(result.standardError.isEmpty)
    }

    @Test func helpListsTheCommands() throws {
        let result = try BuiltExecutable.run(["help"])
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
        for name in ["filter", "info", "verify", "generate", "export", "import", "fetch"] {
            #expect(result.standardOutput.contains("\n  \(name) "), "\(name)")
        }
    }

    @Test func commandHelpIsTheSameBothWays() throws {
        let viaHelp = try BuiltExecutable.run(["help", "filter"])
        let viaFlag = try BuiltExecutable.run(["filter", "--help"])
        #expect(viaHelp.status == 0 && viaFlag.status == 0)
        #expect(viaHelp.standardOutput == viaFlag.standardOutput)
        #expect(viaHelp.standardOutput.contains("--limit N"))
        #expect(viaHelp.standardError.isEmpty && viaFlag.standardError.isEmpty)
    }

    @Test func unknownCommandExitsTwoWithASuggestionOnStandardError() throws {
        let result = try BuiltExecutable.run(["filtr"])
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.contains("error: unknown command 'filtr'\n"))
        #expect(result.standardError.contains("hint: did you mean 'filter'?\n"))
    }

    @Test func unknownOptionExitsTwo() throws {
        let result = try BuiltExecutable.run(["filter", "--lmit", "5"])
        #expect(result.status == 2)
        #expect(result.standardOutput.isEmpty)
        #expect(result.standardError.hasPrefix("error: unknown option '--lmit' for 'colonnade filter'\nhint: did you mean '--limit'?\n"))
    }

    @Test func missingSnapshotExitsOneWithOneErrorLine() throws {
        let result = try BuiltExecutable.run(["verify", "--snapshot", "/nonexistent/x.snapshot"])
        #expect(result.status == 1)
        #expect(result.standardError.hasPrefix("error: /nonexistent/x.snapshot: no such file or directory\nhint: "))
    }

    /// `colonnade filter --format csv | head -1` (every row of the built-in sample, streamed):
    /// the reader leaves after one line; the tool must stop writing and exit 0 without a word,
    /// not die of SIGPIPE or report EPIPE.
    @Test func readerClosingThePipeEarlyEndsQuietly() throws {
        let (firstLine, result) = try BuiltExecutable.runReadingOneLine(["filter", "--format", "csv"])
        #expect(firstLine.hasPrefix("ticker,date"), "\(firstLine)")
        #expect(!result.terminatedBySignal)
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
    }

    @Test func helpIntoAClosedPipeEndsQuietly() throws {
        let (firstLine, result) = try BuiltExecutable.runReadingOneLine(["help"])
        #expect(firstLine.hasPrefix("colonnade "))
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
    }
}
