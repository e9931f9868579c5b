import Colonnade
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing

/// End-to-end: writes never lose or destroy data — the snapshot write lock between real
/// processes, outputs replaced whole or not at all, permissions kept, symbolic links written
/// through, FIFOs refused at once. The built `colonnade`, as processes.
@Suite struct EndToEndWriteSafetyTests {
    // MARK: Helpers

    /// A CSV file with one quote row, for `import … --ticker T`.
    static func quoteFile(in directory: URL, _ name: String, close: Int = 5) throws -> String {
        let path = directory.appendingPathComponent(name).path
        try Data("Date,Close\n2014-01-02,\(close)\n".utf8).write(to: URL(fileURLWithPath: path))
        return path
    }

    static func symbols(_ snapshot: String) throws -> [String] {
        try QuoteTable.load(from: snapshot).tickers.map(\.symbol).sorted()
    }

    static func mode(_ path: String) -> mode_t {
        var st = stat()
        return stat(path, &st) == 0 ? st.st_mode & 0o7777 : 0
    }

    static func isSymbolicLink(_ path: String) -> Bool {
        var st = stat()
        return lstat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFLNK
    }

    /// Starts a writer that imports FILE as ticker T into S through the library's import, as
    /// `colonnade import` does, and holds the lock after its load until `release(prefix)`, and
    /// waits until it holds it. (A child process of the tests, `SnapshotCrashWriter
    /// import-holding-lock`: the shipped binary has no hidden switch to stop it there.)
    static func startHolder(_ directory: URL, snapshot: String, ticker: String, prefix: String) throws -> RunningExecutable {
        let file = try quoteFile(in: directory, "\(ticker).csv")
        let helper = try BuiltExecutable.sibling("SnapshotCrashWriter")
        let holder = try RunningExecutable(
            ["import-holding-lock", snapshot, file, ticker, prefix],
            environment: EndToEndFixture.cleanEnvironment, in: directory, executable: helper)
        let held = holder.wait(until: { FileManager.default.fileExists(atPath: prefix + ".held") })
        #expect(held, "the first import never held the lock: \(holder.standardError)")
        return holder
    }

    static func release(_ prefix: String) {
        _ = FileManager.default.createFile(atPath: prefix + ".release", contents: nil)
    }

    // MARK: Item 2: the write lock

    /// The race of issue 11 made certain: the first import loads the snapshot and stops (holding
    /// the lock); the second, the real `colonnade import`, starts meanwhile. Without the lock the second saves first and the
    /// first's save, from its older load, drops the second's ticker.
    @Test func aSecondImportWaitsForTheFirstAndNeitherTickerIsLost() throws {
        let directory = try EndToEndFixture.scratchDirectory("race")
        let snapshot = directory.appendingPathComponent("s.snapshot").path
        let prefix = directory.appendingPathComponent("hold").path
        let first = try Self.startHolder(directory, snapshot: snapshot, ticker: "NEWB", prefix: prefix)
        let fileC = try Self.quoteFile(in: directory, "C.csv")
        let second = try RunningExecutable(
            ["import", fileC, "--ticker", "NEWC", "--snapshot", snapshot],
            environment: EndToEndFixture.cleanEnvironment, in: directory)
        // Either it says it waits (fixed), or it ends without waiting (the race is lost).
        _ = second.wait(until: { second.standardError.contains("waiting for") })
        let waitedWhileHeld = second.process.isRunning
        Self.release(prefix)
        let a = try first.finish(), b = try second.finish()
        #expect(a.status == 0, "\(a.standardError)")
        #expect(b.status == 0, "\(b.standardError)")
        #expect(waitedWhileHeld, "the second import did not wait for the first")
        #expect(b.standardError.contains("note: waiting for process \(first.pid), which is writing \(snapshot)"), "\(b.standardError)")
        #expect(try Self.symbols(snapshot) == ["NEWB", "NEWC"])
    }

    /// Two imports started together, several times, with no hook: both tickers, every time.
    @Test func simultaneousImportsKeepBothTickersEveryRun() throws {
        let directory = try EndToEndFixture.scratchDirectory("race-free")
        let fileB = try Self.quoteFile(in: directory, "B.csv"), fileC = try Self.quoteFile(in: directory, "C.csv")
        for round in 0 ..< 4 {
            let snapshot = directory.appendingPathComponent("s\(round).snapshot").path
            let runs = try [("NEWB", fileB), ("NEWC", fileC)].map { ticker, file in
                try RunningExecutable(
                    ["import", file, "--ticker", ticker, "--snapshot", snapshot],
                    environment: EndToEndFixture.cleanEnvironment, in: directory)
            }
            for run in runs {
                let result = try run.finish()
                #expect(result.status == 0, "\(result.standardError)")
            }
            #expect(try Self.symbols(snapshot) == ["NEWB", "NEWC"], "round \(round)")
        }
    }

    @Test func writersWithNoWaitFailAtOnceNamingTheHolder() throws {
        let directory = try EndToEndFixture.scratchDirectory("nowait")
        let snapshot = directory.appendingPathComponent("s.snapshot").path
        let prefix = directory.appendingPathComponent("hold").path
        let first = try Self.startHolder(directory, snapshot: snapshot, ticker: "NEWB", prefix: prefix)
        defer { Self.release(prefix) }
        let fileC = try Self.quoteFile(in: directory, "C.csv")
        var fetchEnvironment = EndToEndFixture.cleanEnvironment
        fetchEnvironment["NASDAQ_DATA_LINK_API_KEY"] = "test-key-not-used"
        fetchEnvironment["HOME"] = directory.path
        let attempts: [([String], [String: String])] = [
            (["import", fileC, "--ticker", "NEWC", "--snapshot", snapshot, "--no-wait"], EndToEndFixture.cleanEnvironment),
            (["generate", "--tickers", "2", "--days", "3", "--snapshot", snapshot, "--no-wait"], EndToEndFixture.cleanEnvironment),
            (["adjust", "--snapshot", snapshot, "--no-wait"], EndToEndFixture.cleanEnvironment),
            // The port is never connected to: the lock is refused before any request.
            (["fetch", "AAPL", "--base-url", "http://127.0.0.1:9", "--snapshot", snapshot, "--no-wait"], fetchEnvironment),
            // An update (which may recompute restated adjusted history) is a write like any other.
            (["fetch", "AAPL", "--update", "--base-url", "http://127.0.0.1:9", "--snapshot", snapshot, "--no-wait"], fetchEnvironment),
        ]
        for (arguments, environment) in attempts {
            let run = try RunningExecutable(arguments, environment: environment, in: directory).finish()
            #expect(run.status == 1, "\(arguments[0]): \(run.standardError)")
            #expect(
                run.standardError.contains("error: \(snapshot): another process (PID \(first.pid)) is writing it"),
                "\(arguments[0]): \(run.standardError)")
            #expect(run.standardError.contains("hint: "), "\(arguments[0]): \(run.standardError)")
        }
        Self.release(prefix)
        #expect(try first.finish().status == 0)
        #expect(try Self.symbols(snapshot) == ["NEWB"])
    }

    // MARK: Item 1: export onto its own snapshot, outputs replaced whole

    @Test func exportOntoTheSnapshotItReadsIsRefusedHoweverItIsNamed() throws {
        let fx = try EndToEndFixture.get()
        let snapshot = try copyOfFile(fx.snapshot, named: "e.snapshot")
        let directory = URL(fileURLWithPath: snapshot).deletingLastPathComponent()
        let original = try Data(contentsOf: URL(fileURLWithPath: snapshot))
        let hardLink = directory.appendingPathComponent("hard.snapshot").path
        let symbolicLink = directory.appendingPathComponent("soft.snapshot").path
        #expect(link(snapshot, hardLink) == 0)
        #expect(symlink(snapshot, symbolicLink) == 0)
        for (input, output) in [(snapshot, snapshot), (snapshot, hardLink), (snapshot, symbolicLink), (symbolicLink, snapshot)] {
            let run = try fx.run(["export", "--format", "csv", "--snapshot", input, "--output", output])
            #expect(run.status == 1, "\(run.standardError)")
            #expect(!run.terminatedBySignal)
            #expect(run.standardError.contains("is the snapshot being exported"), "\(run.standardError)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == original)
        }
        #expect(try QuoteTable.load(from: snapshot) == fx.table)
    }

    /// A writer killed in the middle (here by the file-size limit: SIGXFSZ, as a crash or a full
    /// disk would stop it) leaves the previous file whole; the next write cleans up after it.
    @Test(arguments: [["export", "--format", "csv", "--output"], ["generate", "--tickers", "12", "--days", "300", "--csv"]])
    func aWriterKilledMidFileLeavesThePreviousFileWhole(command: [String]) throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("killed")
        let output = directory.appendingPathComponent("out.csv").path
        let previous = Data("the previous contents\n".utf8)
        try previous.write(to: URL(fileURLWithPath: output))
        chmod(output, 0o640)
        let snapshotArguments = command[0] == "export" ? ["--snapshot", fx.snapshot] : []
        let arguments = command + [output] + snapshotArguments
        // 16 blocks of 512 bytes (POSIX sh), far less than the 3,600 rows.
        let killed = try RunningExecutable(
            ["-c", "ulimit -f 16; exec \"$0\" \"$@\"", try BuiltExecutable.url().path] + arguments,
            environment: EndToEndFixture.cleanEnvironment, in: directory, executable: "/bin/sh"
        ).finish()
        #expect(killed.status != 0)
        #expect(try Data(contentsOf: URL(fileURLWithPath: output)) == previous)
        let whole = try RunningExecutable(arguments, environment: EndToEndFixture.cleanEnvironment, in: directory).finish()
        #expect(whole.status == 0, "\(whole.standardError)")
        let text = try String(contentsOfFile: output, encoding: .utf8)
        #expect(text.hasPrefix("ticker,"))
        #expect(try OutputParser.lines(text).count == 1 + fx.table.rowCount)
        #expect(Self.mode(output) == 0o640)
        // The killed writer's temporary is gone: only the output is left.
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory.path) == ["out.csv"])
    }

    @Test func exportRefusesAReadOnlyOutputAndAFIFO() throws {
        let fx = try EndToEndFixture.get()
        let directory = try EndToEndFixture.scratchDirectory("ro-out")
        let output = directory.appendingPathComponent("out.csv").path
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: output))
        chmod(output, 0o444)
        let run = try fx.run(["export", "--format", "csv", "--snapshot", fx.snapshot, "-o", output])
        #expect(run.status == 1)
        #expect(run.standardError.contains("\(output): is read-only (mode 0444); not replacing it"), "\(run.standardError)")
        #expect(try String(contentsOfFile: output, encoding: .utf8) == "keep me\n")
        let fifo = directory.appendingPathComponent("pipe.csv").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let toFIFO = try RunningExecutable(
            ["export", "--format", "csv", "--snapshot", fx.snapshot, "-o", fifo],
            environment: EndToEndFixture.cleanEnvironment, in: directory
        ).finish()
        #expect(toFIFO.status == 1)
        #expect(toFIFO.standardError.contains("is a FIFO (named pipe), not a regular file"), "\(toFIFO.standardError)")
    }

    // MARK: Item 9: permissions

    @Test func importKeepsA0600SnapshotPrivate() throws {
        let directory = try EndToEndFixture.scratchDirectory("mode")
        let snapshot = directory.appendingPathComponent("s.snapshot").path
        let file = try Self.quoteFile(in: directory, "B.csv")
        #expect(try runBuiltColonnade(["import", file, "--ticker", "A", "--snapshot", snapshot]).status == 0)
        chmod(snapshot, 0o600)
        let run = try runBuiltColonnade(["import", file, "--ticker", "B", "--snapshot", snapshot])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(Self.mode(snapshot) == 0o600)
        #expect(try Self.symbols(snapshot) == ["A", "B"])
    }

    @Test func importRefusesA0444SnapshotAndLeavesItAlone() throws {
        let directory = try EndToEndFixture.scratchDirectory("readonly")
        let snapshot = directory.appendingPathComponent("s.snapshot").path
        let file = try Self.quoteFile(in: directory, "B.csv")
        #expect(try runBuiltColonnade(["import", file, "--ticker", "A", "--snapshot", snapshot]).status == 0)
        chmod(snapshot, 0o444)
        let before = try Data(contentsOf: URL(fileURLWithPath: snapshot))
        let run = try runBuiltColonnade(["import", file, "--ticker", "B", "--snapshot", snapshot])
        #expect(run.status == 1)
        #expect(run.standardError.contains("error: \(snapshot): is read-only (mode 0444); not replacing it"), "\(run.standardError)")
        #expect(run.standardError.contains("hint: make it writable"), "\(run.standardError)")
        #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == before)
        #expect(Self.mode(snapshot) == 0o444)
    }

    // MARK: Item 12: symbolic links and FIFOs

    @Test func importThroughASymbolicLinkUpdatesItsTargetAndKeepsTheLink() throws {
        let directory = try EndToEndFixture.scratchDirectory("link")
        let target = directory.appendingPathComponent("real.snapshot").path
        let linkPath = directory.appendingPathComponent("link.snapshot").path
        let file = try Self.quoteFile(in: directory, "B.csv")
        #expect(try runBuiltColonnade(["import", file, "--ticker", "A", "--snapshot", target]).status == 0)
        #expect(symlink("real.snapshot", linkPath) == 0)
        let run = try runBuiltColonnade(["import", file, "--ticker", "B", "--snapshot", linkPath])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(Self.isSymbolicLink(linkPath))
        #expect(try Self.symbols(target) == ["A", "B"])
    }

    @Test func aDanglingSymbolicLinkIsAnErrorNotANewSnapshot() throws {
        let directory = try EndToEndFixture.scratchDirectory("dangling")
        let linkPath = directory.appendingPathComponent("link.snapshot").path
        let missing = directory.appendingPathComponent("gone.snapshot").path
        #expect(symlink(missing, linkPath) == 0)
        let file = try Self.quoteFile(in: directory, "B.csv")
        let run = try runBuiltColonnade(["import", file, "--ticker", "B", "--snapshot", linkPath])
        #expect(run.status == 1)
        #expect(
            run.standardError.contains("error: \(linkPath): is a symbolic link to \(missing), which does not exist"),
            "\(run.standardError)")
        #expect(Self.isSymbolicLink(linkPath))
        #expect(!FileManager.default.fileExists(atPath: missing))
    }

    /// Each must end by itself, with an error naming the FIFO: none may wait for a writer.
    @Test func aFIFOAsSnapshotOrImportFileFailsAtOnce() throws {
        let directory = try EndToEndFixture.scratchDirectory("fifo")
        let fifo = directory.appendingPathComponent("q.fifo").path
        #expect(mkfifo(fifo, 0o644) == 0)
        let file = try Self.quoteFile(in: directory, "B.csv")
        let other = directory.appendingPathComponent("other.snapshot").path
        let cases: [[String]] = [
            ["import", file, "--ticker", "B", "--snapshot", fifo],
            ["import", fifo, "--ticker", "B", "--snapshot", other],
            ["filter", "--count", "--snapshot", fifo],
            ["info", "--snapshot", fifo],
            ["verify", "--snapshot", fifo],
            ["export", "--format", "csv", "--snapshot", fifo],
            ["generate", "--tickers", "1", "--days", "2", "--snapshot", fifo],
        ]
        for arguments in cases {
            let run = try RunningExecutable(arguments, environment: EndToEndFixture.cleanEnvironment, in: directory)
                .finish(timeout: .seconds(30))
            #expect(run.status == 1, "\(arguments): \(run.standardError)")
            #expect(run.standardError.contains("\(fifo)"), "\(arguments): \(run.standardError)")
            #expect(run.standardError.contains("is a FIFO (named pipe), not a regular file"), "\(arguments): \(run.standardError)")
        }
        var st = stat()
        #expect(lstat(fifo, &st) == 0 && (st.st_mode & S_IFMT) == S_IFIFO)
        #expect(!FileManager.default.fileExists(atPath: other))
    }
}
