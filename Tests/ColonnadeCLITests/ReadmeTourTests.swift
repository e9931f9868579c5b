import Colonnade
import DataLinkFormat
import ColonnadeTestSupport
import Foundation
#if canImport(Glibc)
import Glibc
#endif
import Testing
@testable import ColonnadeCLI

/// The first hour, anywhere: the built binary copied into an empty directory, `$HOME` a new empty
/// directory, no checkout and no build tree beside it, runs the README's first command and its
/// tour, command by command as the README prints them (`fetch` against a loopback server, the
/// 20 M-row example made small). Writing where the user may not write fails clearly.
@Suite struct ReadmeTourTests {
    static let readme = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("README.md")

    /// A place with nothing of the repository: `bin/colonnade` and `bin/colonnade-transfer`
    /// (copies of the built programs, installed side by side as the README says), an empty
    /// working directory and an empty home.
    struct Place {
        let binary: URL, work: URL, home: URL

        init(_ label: String) throws {
            let root = try EndToEndFixture.scratchDirectory(label)
            binary = root.appendingPathComponent("bin/colonnade")
            work = root.appendingPathComponent("work")
            home = root.appendingPathComponent("home")
            for directory in [binary.deletingLastPathComponent(), work, home] {
                try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            }
            try FileManager.default.copyItem(at: try BuiltExecutable.url(), to: binary)
            try FileManager.default.copyItem(
                atPath: try BuiltExecutable.transfer(), toPath: root.appendingPathComponent("bin/colonnade-transfer").path)
        }

        var environment: [String: String] {
            ["HOME": home.path, "PATH": "/usr/bin:/bin", "NASDAQ_DATA_LINK_API_KEY": fetchTestKey]
        }

        /// Runs the copy with `arguments` in the working directory; `input` is standard input.
        func run(
            _ arguments: [String], input: String = "", launcher: [String] = [],
            environment extra: [String: String] = [:]
        ) throws -> BuiltExecutable.Result {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: launcher.first ?? binary.path)
            process.arguments = launcher.isEmpty ? arguments : Array(launcher.dropFirst()) + [binary.path] + arguments
            process.environment = environment.merging(extra) { _, new in new }
            process.currentDirectoryURL = work
            // Standard input and error are files beside the working directory, so neither pipe can fill.
            let side = work.deletingLastPathComponent(), tag = UUID().uuidString.prefix(8)
            let inputFile = side.appendingPathComponent("stdin-\(tag)"), errorFile = side.appendingPathComponent("stderr-\(tag)")
            try Data(input.utf8).write(to: inputFile)
            try Data().write(to: errorFile)
            defer {
                try? FileManager.default.removeItem(at: inputFile)
                try? FileManager.default.removeItem(at: errorFile)
            }
            process.standardInput = try FileHandle(forReadingFrom: inputFile)
            let errors = try FileHandle(forWritingTo: errorFile)
            defer { try? errors.close() }
            let output = Pipe()
            process.standardOutput = output
            process.standardError = errors
            try process.run()
            try? output.fileHandleForWriting.close()
            let data = output.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            return BuiltExecutable.Result(
                status: process.terminationStatus, terminatedBySignal: process.terminationReason == .uncaughtSignal,
                standardOutput: String(decoding: data, as: UTF8.self),
                standardError: try String(contentsOf: errorFile, encoding: .utf8))
        }
    }

    /// The tour: every command line in the README from "A tour of the command line" to "From
    /// Swift" that starts with `colonnade` (continuation lines joined, trailing comments dropped),
    /// and the lines typed at the shell's `colonnade>` prompt.
    static func tour() throws -> (commands: [String], shellLines: [String]) {
        let text = try String(contentsOf: readme, encoding: .utf8)
        guard let start = text.range(of: "## A tour of the command line"), let end = text.range(of: "## From Swift") else {
            throw OutputParser.Malformed(description: "README has no tour section")
        }
        var commands = [String](), shellLines = [String](), pending: String?
        for raw in text[start.upperBound ..< end.lowerBound].split(separator: "\n", omittingEmptySubsequences: false) {
            guard raw.hasPrefix("    ") else { continue }
            var line = raw.dropFirst(4).trimmingCharacters(in: .whitespaces)
            if let range = line.range(of: #"\s{2,}#.*$"#, options: .regularExpression) { line.removeSubrange(range) }
            if let head = pending {
                line = head + " " + line
                pending = nil
            }
            if line.hasSuffix("\\") {
                pending = String(line.dropLast()).trimmingCharacters(in: .whitespaces)
                continue
            }
            if line.hasPrefix("colonnade> ") {
                shellLines.append(String(line.dropFirst("colonnade> ".count)))
            } else if line.hasPrefix("colonnade ") || line.contains("| colonnade ") {
                commands.append(line)
            }
        }
        return (commands, shellLines)
    }

    /// The table the loopback server serves as WIKI/PRICES (6 tickers, 2013-06-03 on, 250 days),
    /// as one datatable JSON page with the table's own column names.
    static func datatableBody(_ table: QuoteTable) -> Data {
        var rows = [String]()
        for entry in table.tickers {
            for row in entry.rows {
                let values = table.columns.map { column in column.doubleValue(at: row).map { String($0) } ?? "null" }
                rows.append("[\"\(entry.symbol)\",\"\(Day(daysSinceEpoch: table.dates[row]))\"," + values.joined(separator: ",") + "]")
            }
        }
        let columns =
            ["{\"name\":\"ticker\",\"type\":\"String\"}", "{\"name\":\"date\",\"type\":\"Date\"}"]
            + table.schema.map { "{\"name\":\"\($0.name)\",\"type\":\"BigDecimal(34,12)\"}" }
        return Data(
            ("{\"datatable\":{\"data\":[" + rows.joined(separator: ",") + "],\"columns\":[" + columns.joined(separator: ",")
                + "]},\"meta\":{\"next_cursor_id\":null}}").utf8)
    }

    @Test func theReadmeTourRunsFromAnEmptyDirectoryWithAnEmptyHome() throws {
        let place = try Place("tour")
        // The README's first command prints rows on the built-in sample.
        let first = try place.run(["filter", "--where", "80 < high < 83 and 78 < low < 82", "--limit", "10"])
        #expect(first.status == 0, "\(first.standardError)")
        #expect(first.standardOutput.split(separator: "\n").count == 2 + 10, "\(first.standardOutput)")
        #expect(first.standardError.isEmpty, "no note off a terminal")
        let setUp = try String(contentsOf: Self.readme, encoding: .utf8)
        #expect(setUp.contains("    swift run -c release colonnade filter --where '80 < high < 83 and 78 < low < 82' --limit 10\n"))

        // The served table, and the user's own files for the import step.
        let served = QuoteGenerator(tickers: 6, days: 250, seed: 21, start: Day(2013, 6, 3).daysSinceEpoch).makeTable()
        let body = Self.datatableBody(served)
        let server = try LoopbackHTTPServer { request in
            request.path == "/api/v3/datatables/WIKI/PRICES.json" ? .json(body) : notFound
        }
        let files = QuoteGenerator(tickers: 6, days: 40, seed: 22, start: Day(2014, 6, 2).daysSinceEpoch).makeTable()
        try Data(QuoteGenerator.timeSeriesCSV(files, ticker: 0)).write(to: place.work.appendingPathComponent("WIKI-AAPL.csv"))
        try Data(QuoteGenerator.datasetJSON(files, ticker: 5)).write(to: place.work.appendingPathComponent("FDX.json"))

        let (commands, shellLines) = try Self.tour()
        #expect(commands.count >= 20, "\(commands)")
        var ran = 0
        for line in commands {
            // What cannot run here, and why.
            if line.hasPrefix("unzip ") || line.contains("--bulk") || line.contains("WIKI_PRICES.zip") { continue }  // a bulk export zip
            if line == "colonnade shell" { continue }  // below, with the typed lines
            var words = try HelpExampleTests.pipeline(line)[0]
            #expect(words.first == "colonnade", "\(line)")
            words.removeFirst()
            if words.first == "generate", let i = words.firstIndex(of: "--tickers") {
                words[i + 1] = "20"
                words[words.firstIndex(of: "--days")! + 1] = "250"
            }
            if words.first == "fetch" { words += ["--base-url", server.baseURL.absoluteString] }
            let run = try place.run(words)
            #expect(run.status == 0, "\(line): \(run.standardError)")
            #expect(!run.standardOutput.isEmpty || !run.standardError.isEmpty || words.contains("-o"), "\(line) says something")
            #expect(!run.standardError.contains(fetchTestKey) && !run.standardOutput.contains(fetchTestKey))
            ran += 1
        }
        #expect(ran >= 18)

        // The shell transcript, typed into a pipe.
        #expect(shellLines.count >= 5)
        let shell = try place.run(["shell"], input: shellLines.joined(separator: "\n") + "\n")
        #expect(shell.status == 0, "\(shell.standardError)")
        #expect(shell.standardOutput.contains("ticker  count(*)  avg(close)"), "\(shell.standardOutput)")

        // Where things went: the fetch and import into the data home, charts and the small table here.
        let stored = place.home.appendingPathComponent(".local/share/colonnade/quotes.snapshot").path
        let table = try QuoteTable.load(from: stored)
        #expect(table.ticker("FDX") != nil && table.ticker("AAPL") != nil)
        let written = Set(try FileManager.default.contentsOfDirectory(atPath: place.work.path))
        #expect(written.isSuperset(of: ["aapl.svg", "growth.svg", "big.snapshot"]), "\(written)")
        // After the fetch, FDX's 2014 rows are what the README's next command shows.
        let fdx = try place.run(["filter", "--tickers", "FDX", "--from", "2014-01-01", "--columns", "date,open,high,low,close"])
        #expect(fdx.standardOutput.hasPrefix("date         "), "\(fdx.standardOutput)")
        #expect(fdx.standardOutput.split(separator: "\n").count > 2)
    }

    /// `setpriv` to the `nobody` user when running as root; as another user, that user; where
    /// neither works, skipped with the reason.
    static let unprivileged: (launcher: [String], reason: String?) = {
        if geteuid() != 0 { return ([], nil) }
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv") else {
            return ([], "running as root without /usr/bin/setpriv to drop privileges (root ignores directory permissions)")
        }
        return (["/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups"], nil)
    }()

    @Test(.enabled(if: unprivileged.reason == nil, "cannot run unprivileged here: setpriv is missing and we are root"))
    func writingWhereTheUserMayNotFailsClearly() throws {
        let place = try Place("readonly")
        // Everything up to the binary must be reachable by the unprivileged user.
        for url in [
            place.binary.deletingLastPathComponent().deletingLastPathComponent(), place.binary.deletingLastPathComponent(),
            place.work, place.home,
        ] {
            try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: url.path)
        }
        let locked = place.work.appendingPathComponent("locked")
        try FileManager.default.createDirectory(at: locked, withIntermediateDirectories: true)
        try FileManager.default.setAttributes([.posixPermissions: 0o555], ofItemAtPath: locked.path)
        defer { try? FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: locked.path) }
        let launcher = Self.unprivileged.launcher

        // The sample still answers; it needs nothing written.
        let read = try place.run(["filter", "--count"], launcher: launcher)
        #expect(read.status == 0, "\(read.standardError)")
        #expect(read.standardOutput == "50400\n")

        let generate = try place.run(["generate", "--tickers", "1", "--days", "5", "--snapshot", "locked/x.snapshot"], launcher: launcher)
        #expect(generate.status == 1)
        #expect(
            try OutputParser.lines(generate.standardError) == [
                "error: cannot write \(locked.path)/x.snapshot: permission denied (no new files may be created in \(locked.path))",
                "hint: choose a directory you may write with --snapshot PATH or $COLONNADE_SNAPSHOT",
            ])
        #expect(generate.standardOutput.isEmpty)

        let intoLocked = try place.run(
            ["import", try SnapshotLocationTests.smallCSV(in: place.work.deletingLastPathComponent())],
            launcher: launcher, environment: ["COLONNADE_SNAPSHOT": "locked/q.snapshot"])
        #expect(intoLocked.status == 1)
        #expect(
            intoLocked.standardError.hasPrefix("error: cannot write \(locked.path)/q.snapshot: permission denied"),
            "\(intoLocked.standardError)")

        // The default write place under a home the user may not write: the directory is named.
        let input = try SnapshotLocationTests.smallCSV(in: place.work.deletingLastPathComponent())
        let lockedHome = try place.run(["import", input], launcher: launcher, environment: ["HOME": locked.path])
        #expect(lockedHome.status == 1)
        #expect(
            try OutputParser.lines(lockedHome.standardError).first
                == "error: cannot create the directory \(locked.path)/.local/share/colonnade for \(locked.path)/.local/share/colonnade/quotes.snapshot: Permission denied",
            "\(lockedHome.standardError)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: locked.path).isEmpty, "nothing half-written")
    }
}
