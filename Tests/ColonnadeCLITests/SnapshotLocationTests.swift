import Colonnade
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// Which snapshot commands read and write when `--snapshot` is not given, from any directory:
/// `--snapshot`, `$COLONNADE_SNAPSHOT`, `./snapshots/quotes.snapshot` if it exists, the data
/// home's `colonnade/quotes.snapshot` (`$XDG_DATA_HOME`, else `~/.local/share`), else (reading
/// only) the built-in sample generated in memory.
@Suite struct SnapshotLocationTests {
    /// An environment with neither `$COLONNADE_SNAPSHOT` nor `$XDG_DATA_HOME`, `$HOME` a new
    /// empty directory (or unset when `home` is nil).
    static func environment(home: URL?, xdg: String? = nil) -> [String: String] {
        var environment = EndToEndFixture.cleanEnvironment
        environment["COLONNADE_SNAPSHOT"] = nil
        environment["XDG_DATA_HOME"] = xdg
        environment["HOME"] = home?.path
        return environment
    }

    /// A CSV of 2 tickers × 5 days for `import`, written by the engine.
    static func smallCSV(in directory: URL) throws -> String {
        let path = directory.appendingPathComponent("small.csv").path
        try QuoteGenerator.writeDatatableCSV(QuoteGenerator(tickers: 2, days: 5, seed: 9).makeTable(), to: path)
        return path
    }

    static func contents(_ directory: URL) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: directory.path).sorted()
    }

    // MARK: Reading

    @Test func withNoSnapshotAnywhereTheBuiltInSampleIsReadAndNothingIsWritten() throws {
        let directory = try EndToEndFixture.scratchDirectory("empty-cwd")
        let home = try EndToEndFixture.scratchDirectory("empty-home")
        let environment = Self.environment(home: home)
        let count = try runBuiltColonnade(["filter", "--count"], environment: environment, in: directory)
        #expect(count.status == 0, "\(count.standardError)")
        #expect(count.standardOutput == "\(50_400)\n")
        // Standard error is a file here, not a terminal: no note.
        #expect(count.standardError.isEmpty)
        let info = try runBuiltColonnade(["info", "--format", "json"], environment: environment, in: directory)
        let object = try JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any]
        #expect(object?["path"] as? String == "the built-in sample")
        #expect(object?["rows"] as? Int == 50_400)
        #expect(object?["checksums"] as? String == "verified")
        let verify = try runBuiltColonnade(["verify"], environment: environment, in: directory)
        #expect(verify.status == 0)
        #expect(verify.standardOutput.hasPrefix("ok: the built-in sample: 50,400 rows, 20 tickers"))
        #expect(try Self.contents(directory).isEmpty)
        #expect(try Self.contents(home).isEmpty)
    }

    @Test func theBuiltInSampleEqualsTheRepositorysSampleFile() throws {
        let directory = try EndToEndFixture.scratchDirectory("sample-equal")
        let environment = Self.environment(home: try EndToEndFixture.scratchDirectory("home"))
        let arguments = ["filter", "--where", "80 < high < 83 and 78 < low < 82", "--format", "csv", "--columns", "all"]
        let builtIn = try runBuiltColonnade(arguments, environment: environment, in: directory)
        let file = try runBuiltColonnade(
            arguments + ["--snapshot", EndToEndFixture.bundledSample], environment: environment, in: directory)
        #expect(builtIn.status == 0 && file.status == 0)
        #expect(try OutputParser.csv(builtIn.standardOutput).rows.count == 456)
        #expect(builtIn.standardOutput == file.standardOutput)
    }

    @Test func theNoteAboutTheSampleAppearsOnlyOnATerminal() throws {
        let directory = try EndToEndFixture.scratchDirectory("sample-tty")
        let environment = Self.environment(home: try EndToEndFixture.scratchDirectory("home"))
        let session = try PseudoTerminalSession(["filter", "--count"], environment: environment, in: directory)
        #expect(try session.finish() == 0)
        let lines = session.output.split(separator: "\n").map(String.init)
        #expect(lines.count == 2, "\(lines)")
        #expect(lines.first?.hasPrefix("note: no snapshot yet: using the built-in synthetic sample (made-up quotes)") == true)
        #expect(lines.last == "50400")
    }

    @Test func theDataHomeSnapshotIsReadWhenTheWorkingDirectoryHasNone() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("cwd")
        // ~/.local/share/colonnade/quotes.snapshot
        let home = try EndToEndFixture.scratchDirectory("home")
        let stored = home.appendingPathComponent(".local/share/colonnade")
        try FileManager.default.createDirectory(at: stored, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: fx.snapshot, toPath: stored.appendingPathComponent("quotes.snapshot").path)
        let fromHome = try runBuiltColonnade(["filter", "--count"], environment: Self.environment(home: home), in: directory)
        #expect(fromHome.standardOutput == "3600\n")
        // $XDG_DATA_HOME wins over ~/.local/share; a relative one is ignored, as the specification says.
        let xdg = try EndToEndFixture.scratchDirectory("xdg")
        try FileManager.default.createDirectory(at: xdg.appendingPathComponent("colonnade"), withIntermediateDirectories: true)
        try QuoteGenerator(tickers: 1, days: 7).makeTable().save(to: xdg.appendingPathComponent("colonnade/quotes.snapshot").path)
        let fromXDG = try runBuiltColonnade(["filter", "--count"], environment: Self.environment(home: home, xdg: xdg.path), in: directory)
        #expect(fromXDG.standardOutput == "7\n")
        let relative = try runBuiltColonnade(["filter", "--count"], environment: Self.environment(home: home, xdg: "xdg"), in: directory)
        #expect(relative.standardOutput == "3600\n")
        // ./snapshots/quotes.snapshot wins over the data home.
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("snapshots"), withIntermediateDirectories: true)
        try QuoteGenerator(tickers: 1, days: 3).makeTable().save(to: directory.appendingPathComponent("snapshots/quotes.snapshot").path)
        let local = try runBuiltColonnade(["filter", "--count"], environment: Self.environment(home: home, xdg: xdg.path), in: directory)
        #expect(local.standardOutput == "3\n")
    }

    // MARK: Writing

    @Test func aWriteWithoutASnapshotGoesToTheDataHomeCreatingItsDirectory() throws {
        let directory = try EndToEndFixture.scratchDirectory("write-cwd")
        let home = try EndToEndFixture.scratchDirectory("write-home")
        let input = try Self.smallCSV(in: try EndToEndFixture.scratchDirectory("input"))
        let environment = Self.environment(home: home)
        let run = try runBuiltColonnade(["import", input], environment: environment, in: directory)
        #expect(run.status == 0, "\(run.standardError)")
        let stored = home.appendingPathComponent(".local/share/colonnade/quotes.snapshot").path
        #expect(run.standardOutput.hasSuffix("into \(stored)\n"))
        #expect(try QuoteTable.load(from: stored).rowCount == 10)
        var status = stat()
        #expect(stat((stored as NSString).deletingLastPathComponent, &status) == 0)
        #expect(status.st_mode & 0o777 == 0o700)
        #expect(try Self.contents(directory).isEmpty)
        // What was written is what is read next, from any directory.
        let count = try runBuiltColonnade(
            ["filter", "--count"], environment: environment, in: try EndToEndFixture.scratchDirectory("other"))
        #expect(count.standardOutput == "10\n")
        // With $XDG_DATA_HOME set, there.
        let xdg = try EndToEndFixture.scratchDirectory("xdg").appendingPathComponent("not/yet")
        let second = try runBuiltColonnade(["import", input], environment: Self.environment(home: home, xdg: xdg.path), in: directory)
        #expect(second.status == 0, "\(second.standardError)")
        #expect(FileManager.default.fileExists(atPath: xdg.appendingPathComponent("colonnade/quotes.snapshot").path))
    }

    @Test func aWriteUsesTheWorkingDirectorysSnapshotWhenItExists() throws {
        let directory = try EndToEndFixture.scratchDirectory("write-local")
        let home = try EndToEndFixture.scratchDirectory("home")
        try FileManager.default.createDirectory(at: directory.appendingPathComponent("snapshots"), withIntermediateDirectories: true)
        let local = directory.appendingPathComponent("snapshots/quotes.snapshot").path
        try QuoteGenerator(tickers: 1, days: 3, seed: 1, start: 7_305 /* 1990 */).makeTable().save(to: local)
        let input = try Self.smallCSV(in: try EndToEndFixture.scratchDirectory("input"))
        let run = try runBuiltColonnade(["import", input], environment: Self.environment(home: home), in: directory)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try QuoteTable.load(from: local).rowCount == 13)
        #expect(try Self.contents(home).isEmpty)
    }

    @Test func withoutAHomeAWriteCreatesSnapshotsInTheWorkingDirectory() throws {
        let directory = try EndToEndFixture.scratchDirectory("no-home")
        let input = try Self.smallCSV(in: try EndToEndFixture.scratchDirectory("input"))
        let run = try runBuiltColonnade(["import", input], environment: Self.environment(home: nil), in: directory)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(try QuoteTable.load(from: directory.appendingPathComponent("snapshots/quotes.snapshot").path).rowCount == 10)
    }

    @Test(arguments: [true, false])
    func aNamedPathWhoseDirectoryDoesNotExistIsRefusedNamingTheDirectory(throughVariable: Bool) throws {
        let directory = try EndToEndFixture.scratchDirectory("named")
        let input = try Self.smallCSV(in: try EndToEndFixture.scratchDirectory("input"))
        var environment = Self.environment(home: try EndToEndFixture.scratchDirectory("home"))
        var arguments = ["import", input]
        if throughVariable {
            environment["COLONNADE_SNAPSHOT"] = "missing/dir/quotes.snapshot"
        } else {
            arguments += ["--snapshot", "missing/dir/quotes.snapshot"]
        }
        let missing = directory.appendingPathComponent("missing/dir").path
        for command in [arguments, ["generate", "--tickers", "1", "--days", "2", "--snapshot", "missing/dir/quotes.snapshot"]]
        where !(throughVariable && command[0] == "generate") {
            let run = try runBuiltColonnade(command, environment: environment, in: directory)
            #expect(run.status == 1)
            #expect(run.standardOutput.isEmpty)
            #expect(
                try OutputParser.lines(run.standardError) == [
                    "error: cannot write \(missing)/quotes.snapshot: the directory \(missing) does not exist",
                    "hint: create it first ('mkdir -p \(missing)') or choose another path",
                ])
        }
        #expect(try Self.contents(directory).isEmpty)
    }

    // MARK: generate does not replace

    @Test func generateRefusesAnExistingSnapshotUnlessForced() throws {
        let directory = try EndToEndFixture.scratchDirectory("generate")
        let path = directory.appendingPathComponent("x.snapshot").path
        let environment = Self.environment(home: try EndToEndFixture.scratchDirectory("home"))
        let first = try runBuiltColonnade(
            ["generate", "--tickers", "2", "--days", "30", "--snapshot", "x.snapshot"],
            environment: environment, in: directory)
        #expect(first.status == 0, "\(first.standardError)")
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        let again = try runBuiltColonnade(
            ["generate", "--tickers", "2", "--days", "25", "--snapshot", "x.snapshot"],
            environment: environment, in: directory)
        #expect(again.status == 1)
        #expect(
            try OutputParser.lines(again.standardError) == [
                "error: \(path) exists; generate does not replace a snapshot unless told to",
                "hint: pass --force to replace it, or choose another --snapshot path",
            ])
        #expect(try Data(contentsOf: URL(fileURLWithPath: path)) == before)
        let forced = try runBuiltColonnade(
            ["generate", "--tickers", "2", "--days", "25", "--snapshot", "x.snapshot", "--force"],
            environment: environment, in: directory)
        #expect(forced.status == 0, "\(forced.standardError)")
        #expect(try QuoteTable.load(from: path).rowCount == 50)
        // --force without --snapshot means nothing: refused.
        let stray = try runBuiltColonnade(
            ["generate", "--tickers", "2", "--days", "25", "--csv", "q.csv", "--force"],
            environment: environment, in: directory)
        #expect(stray.status == 2)
        #expect(stray.standardError.hasPrefix("error: '--force' in 'colonnade generate' needs '--snapshot'"))
    }
}
