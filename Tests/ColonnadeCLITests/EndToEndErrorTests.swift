import Colonnade
import Foundation
import Testing

/// End-to-end: command-line mistakes, which snapshot is read by default, missing and damaged
/// snapshots, and a reader that closes the pipe early — the built `colonnade` as a process.
@Suite struct EndToEndErrorTests {
    // MARK: Usage errors

    struct Mistake: CustomTestStringConvertible, Sendable {
        var arguments: [String]
        var error: String
        var hint: String?
        var testDescription: String { arguments.joined(separator: " ") }
    }

    static let mistakes: [Mistake] = [
        Mistake(
            arguments: ["filter", "--formt", "csv"], error: "unknown option '--formt' for 'colonnade filter'",
            hint: "did you mean '--format'?"),
        Mistake(
            arguments: ["filter", "--from", "2014-13-01"],
            error: "invalid value '2014-13-01' for '--from' in 'colonnade filter': there is no month 13"),
        Mistake(
            arguments: ["filter", "--limit", "ten"], error: "invalid value 'ten' for '--limit' in 'colonnade filter': expected an integer"),
        Mistake(arguments: ["filter", "--limit", "0"], error: "invalid value '0' for '--limit' in 'colonnade filter': must be at least 1"),
        Mistake(
            arguments: ["filter", "--threads", "two"],
            error: "invalid value 'two' for '--threads' in 'colonnade filter': expected an integer"),
        Mistake(
            arguments: ["filter", "--count", "--agg", "count"], error: "conflicting options '--count' and '--agg' for 'colonnade filter'",
            hint: "give only one of '--count' or '--agg'"),
        Mistake(
            arguments: ["filter", "--columns", "date,clsoe"],
            error: "invalid value 'clsoe' for '--columns' in 'colonnade filter': no such column",
            hint: "did you mean 'close'?"),
        Mistake(
            arguments: ["filter", "--format", "xml"],
            error:
                "invalid value 'xml' for '--format' in 'colonnade filter': expected one of table, csv, json, ndjson, arrow, arrows, parquet"
        ),
        Mistake(arguments: ["filter", "--by", "ticker"], error: "'--by' in 'colonnade filter' needs '--count' or '--agg'"),
        Mistake(
            arguments: ["filter", "--from", "2001-01-01", "--to", "2000-01-01"],
            error: "'--from 2001-01-01' is after '--to 2000-01-01' in 'colonnade filter'"),
        Mistake(arguments: ["filter", "--limit"], error: "missing value for '--limit N' in 'colonnade filter'"),
        Mistake(arguments: ["filter", "close > 3"], error: "unexpected argument 'close > 3' for 'colonnade filter'"),
        Mistake(
            arguments: ["info", "--format", "csv"],
            error: "invalid value 'csv' for '--format' in 'colonnade info': expected one of table, json"),
        Mistake(
            arguments: ["export"], error: "missing required option '--format csv|ndjson|arrow|arrows|parquet|delta' for 'colonnade export'"),
        Mistake(
            arguments: ["export", "--format", "json"],
            error: "invalid value 'json' for '--format' in 'colonnade export': expected one of csv, ndjson, arrow, arrows, parquet, delta",
            hint: "did you mean 'ndjson'?"),
        Mistake(arguments: ["verify", "--where", "close > 1"], error: "unknown option '--where' for 'colonnade verify'"),
    ]

    @Test(arguments: mistakes)
    func usageErrorsExitTwoWithTheUsageLineAndNothingOnStandardOutput(mistake: Mistake) throws {
        let fx = try EndToEndFixture.get()
        let command = mistake.arguments[0]
        let run = try fx.run(mistake.arguments + ["--snapshot", fx.snapshot])
        #expect(run.status == 2)
        #expect(run.standardOutput.isEmpty)
        let lines = try OutputParser.lines(run.standardError)
        var expected = ["error: " + mistake.error]
        if let hint = mistake.hint { expected.append("hint: " + hint) }
        #expect(Array(lines.dropLast()) == expected)
        #expect(lines.last?.hasPrefix("usage: colonnade \(command) ") == true, "\(run.standardError)")
        #expect(lines.last?.hasSuffix("; see 'colonnade help \(command)'") == true, "\(run.standardError)")
    }

    struct BadExpression: CustomTestStringConvertible, Sendable {
        var option: String
        var text: String
        var error: String
        /// Where the caret points, as the prefix of `text` before it.
        var before: String
        var hint: String?
        var testDescription: String { "\(option) \(text)" }
    }

    static let badExpressions: [BadExpression] = [
        BadExpression(
            option: "--where", text: "close > 100 and hihg < 5", error: "--where: unknown column 'hihg' at 1:17, did you mean 'high'?",
            before: "close > 100 and ", hint: "'colonnade info' lists the columns; quote source names like \"Adj. Close\""),
        BadExpression(
            option: "--where", text: "(close > 1", error: "--where: expected ')' to close the '(' at 1:1, found end of expression at 1:11",
            before: "(close > 1"),
        BadExpression(
            option: "--where", text: "date >= 2014-13-01 and close > 1",
            error: "--where: invalid date '2014-13-01' (expected YYYY-MM-DD) at 1:9",
            before: "date >= "),
        BadExpression(
            option: "--agg", text: "count,sun(close)", error: "--agg: unknown aggregate 'sun' at 1:7, did you mean 'sum'?",
            before: "count,"),
    ]

    @Test(arguments: badExpressions)
    func badExpressionsExitTwoWithACaretUnderTheProblem(bad: BadExpression) throws {
        let fx = try EndToEndFixture.get()
        let run = try fx.run("filter", bad.option, bad.text)
        #expect(run.status == 2)
        #expect(run.standardOutput.isEmpty)
        let lines = try OutputParser.lines(run.standardError)
        try #require(lines.count >= 4, "\(run.standardError)")
        #expect(lines[0].hasPrefix("error: " + bad.error), "\(lines[0])")
        #expect(lines[1] == "  " + bad.text)
        #expect(lines[2] == "  " + String(repeating: " ", count: bad.before.count) + "^")
        #expect(lines.count == (bad.hint == nil ? 4 : 5), "\(run.standardError)")
        if let hint = bad.hint { #expect(lines[3] == "hint: " + hint) }
        #expect(lines.last == "usage: colonnade filter [options]; see 'colonnade help filter'")
    }

    @Test func anUnknownColumnInAnAggregateIsAUsageError() throws {
        let fx = try EndToEndFixture.get()
        for arguments in [["--agg", "count,sum(clse)"], ["--agg", "max(hihg)", "--by", "ticker"]] {
            let run = try fx.run(["filter", "--snapshot", fx.snapshot] + arguments)
            #expect(run.status == 2)
            #expect(run.standardOutput.isEmpty)
            let lines = try OutputParser.lines(run.standardError)
            #expect(lines.first?.hasPrefix("error: --agg: unknown column '") == true, "\(run.standardError)")
            #expect(lines.first?.contains("did you mean '") == true)
            #expect(lines.last == "usage: colonnade filter [options]; see 'colonnade help filter'")
        }
    }

    // MARK: Which snapshot is read

    /// `directory/snapshots/quotes.snapshot` (the fixture's 3,600 rows) and
    /// `directory/elsewhere/other.snapshot` (20 rows).
    static func workingDirectoryWithTwoSnapshots() throws -> (directory: URL, quotes: String, other: String) {
        let directory = try EndToEndFixture.scratchDirectory("cwd")
        let fx = try EndToEndFixture.get()
        let quotes = directory.appendingPathComponent("snapshots/quotes.snapshot").path
        let other = directory.appendingPathComponent("elsewhere/other.snapshot").path
        for path in [quotes, other] {
            try FileManager.default.createDirectory(atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
        }
        try FileManager.default.copyItem(atPath: fx.snapshot, toPath: quotes)
        try QuoteGenerator(tickers: 2, days: 10, seed: 3).makeTable().save(to: other)
        return (directory, quotes, other)
    }

    static func environment(snapshot: String?) -> [String: String] {
        var environment = EndToEndFixture.cleanEnvironment
        environment["COLONNADE_SNAPSHOT"] = snapshot
        return environment
    }

    /// The snapshot `info` reports reading, and `filter --count`'s answer, both without --snapshot.
    static func whatIsRead(in directory: URL, snapshot: String?) throws -> (path: String?, count: String, notes: String) {
        let environment = environment(snapshot: snapshot)
        let info = try runBuiltColonnade(["info", "--format", "json"], environment: environment, in: directory)
        let object = try? JSONSerialization.jsonObject(with: Data(info.standardOutput.utf8)) as? [String: Any]
        let count = try runBuiltColonnade(["filter", "--count"], environment: environment, in: directory)
        #expect(info.standardError == count.standardError)
        return (object?["path"] as? String, count.standardOutput, count.standardError)
    }

    @Test func theEnvironmentVariableWinsOverTheWorkingDirectory() throws {
        let (directory, _, other) = try Self.workingDirectoryWithTwoSnapshots()
        let absolute = try Self.whatIsRead(in: directory, snapshot: other)
        #expect(absolute.path == other)
        #expect(absolute.count == "20\n")
        #expect(absolute.notes.isEmpty)
        // A relative path in the variable is relative to the working directory.
        let relative = try Self.whatIsRead(in: directory, snapshot: "elsewhere/other.snapshot")
        #expect(relative.path == other)
        #expect(relative.count == "20\n")
        // --snapshot wins over both.
        let fx = try EndToEndFixture.get()
        let given = try runBuiltColonnade(
            ["filter", "--count", "--snapshot", fx.snapshot],
            environment: Self.environment(snapshot: other), in: directory)
        #expect(given.standardOutput == "3600\n")
    }

    @Test func withoutTheVariableTheWorkingDirectorysQuotesSnapshotIsRead() throws {
        let (directory, quotes, _) = try Self.workingDirectoryWithTwoSnapshots()
        for variable in [nil, ""] {
            let read = try Self.whatIsRead(in: directory, snapshot: variable)
            #expect(read.path == quotes)
            #expect(read.count == "3600\n")
            #expect(read.notes.isEmpty)
        }
    }

    @Test func aVariableNamingAMissingFileIsAnErrorNotAFallback() throws {
        let (directory, _, _) = try Self.workingDirectoryWithTwoSnapshots()
        let run = try runBuiltColonnade(["filter", "--count"], environment: Self.environment(snapshot: "gone.snapshot"), in: directory)
        #expect(run.status == 1)
        #expect(run.standardOutput.isEmpty)
        let lines = try OutputParser.lines(run.standardError)
        #expect(lines.count == 2)
        #expect(lines.first == "error: \(directory.appendingPathComponent("gone.snapshot").path): no such file or directory")
    }

    // MARK: Missing and damaged snapshots

    @Test(arguments: [["filter"], ["filter", "--no-verify"], ["info"], ["verify"], ["export", "--format", "ndjson"]])
    func aMissingSnapshotIsOneErrorLineAndAHint(arguments: [String]) throws {
        let directory = try EndToEndFixture.scratchDirectory("missing")
        let run = try runBuiltColonnade(arguments + ["--snapshot", "nope.snapshot"], in: directory)
        #expect(run.status == 1)
        #expect(run.standardOutput.isEmpty)
        #expect(
            try OutputParser.lines(run.standardError) == [
                "error: \(directory.appendingPathComponent("nope.snapshot").path): no such file or directory",
                "hint: create one with 'colonnade generate', 'colonnade import' or 'colonnade fetch', or pass --snapshot PATH",
            ])
    }

    /// A copy of the fixture with one byte of the `close` column's values flipped.
    ///
    /// Payloads (docs/SNAPSHOT_FORMAT.md) start at 4096, 64-byte aligned: the dates (int32), then
    /// each value column in schema order (float64 here; no validity bitmaps, nothing is null).
    static func snapshotWithADamagedCloseColumn() throws -> String {
        let fx = try EndToEndFixture.get()
        let path = try copyOfFile(fx.snapshot, named: "damaged.snapshot")
        let n = fx.table.rowCount
        let close = try #require(fx.table.columnIndex(named: "close"))
        let offset = 4096 + align64(n * 4) + close * align64(n * 8) + 8 * 1234 + 3
        var bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        bytes[offset] ^= 0x10
        try bytes.write(to: URL(fileURLWithPath: path))
        return path
    }

    @Test func aFlippedPayloadByteFailsTheChecksumNamingTheColumn() throws {
        let path = try Self.snapshotWithADamagedCloseColumn()
        for arguments in [["filter", "--count"], ["filter", "--where", "high > 10", "--format", "csv"], ["export", "--format", "csv"]] {
            let run = try runBuiltColonnade(arguments + ["--snapshot", path])
            #expect(run.status == 1)
            #expect(run.standardOutput.isEmpty, "\(arguments)")
            let lines = try OutputParser.lines(run.standardError)
            #expect(lines.count == 2, "\(run.standardError)")
            #expect(
                lines.first?.hasPrefix("error: \(path): checksum mismatch in payload (column close): stored 0x") == true,
                "\(run.standardError)")
            #expect(
                lines.last
                    == "hint: the file is damaged; 'colonnade verify --snapshot \(path)' lists every problem. Restore it or re-create it")
        }

        let verify = try runBuiltColonnade(["verify", "--snapshot", path])
        #expect(verify.status == 1)
        #expect(verify.standardOutput.isEmpty)
        let problems = try OutputParser.lines(verify.standardError)
        #expect(problems.count == 2, "\(verify.standardError)")
        #expect(problems.first?.contains("column close") == true)
        #expect(problems.first?.contains("checksum mismatch") == true)
        #expect(problems.last == "\(path): 1 problem found")

        let info = try runBuiltColonnade(["info", "--snapshot", path])
        #expect(info.status == 1)
        #expect(info.standardOutput.contains("\nchecksums   FAILED: \(path): checksum mismatch in payload (column close)"))
    }

    @Test func noVerifySkipsThePayloadChecksums() throws {
        let fx = try EndToEndFixture.get()
        let path = try Self.snapshotWithADamagedCloseColumn()
        let run = try runBuiltColonnade(["filter", "--snapshot", path, "--no-verify", "--where", "volume > 1e6", "--count", "--timing"])
        #expect(run.status == 0)
        #expect(run.standardOutput == "\(try fx.table.select(where: "volume > 1e6").count)\n")
        let timing = try OutputParser.jsonObject(try OutputParser.lines(run.standardError).first ?? "")
        #expect((timing["verified"] as? NSNumber)?.boolValue == false)
        // Columns other than the damaged one read back exactly.
        let rows = try runBuiltColonnade([
            "filter", "--snapshot", path, "--no-verify", "--columns", "ticker,date,open,volume", "--format", "csv",
        ])
        #expect(
            try OutputParser.csv(rows.standardOutput).rows
                == fx.expectedRows(0 ..< fx.table.rowCount, columns: ["ticker", "date", "open", "volume"]))
    }

    @Test func aTruncatedSnapshotIsReportedAsTruncatedEvenWithoutVerifying() throws {
        let fx = try EndToEndFixture.get()
        let path = try copyOfFile(fx.snapshot, named: "truncated.snapshot")
        let bytes = try Data(contentsOf: URL(fileURLWithPath: path))
        try bytes.prefix(bytes.count - 1000).write(to: URL(fileURLWithPath: path))
        for arguments in [["filter", "--count"], ["filter", "--count", "--no-verify"], ["export", "--format", "csv"], ["verify"]] {
            let run = try runBuiltColonnade(arguments + ["--snapshot", path])
            #expect(run.status == 1, "\(arguments)")
            #expect(run.standardOutput.isEmpty, "\(arguments)")
            #expect(
                run.standardError.contains("\(path): truncated snapshot: \(bytes.count - 1000) bytes, expected \(bytes.count)"),
                "\(arguments): \(run.standardError)")
        }
    }

    @Test func aFileThatIsNotASnapshotPointsToImport() throws {
        let directory = try EndToEndFixture.scratchDirectory("not-a-snapshot")
        let path = directory.appendingPathComponent("quotes.csv").path
        try Data(String(repeating: "Date,Open,High,Low,Close\n2014-01-02,1,2,0.5,1.5\n", count: 100).utf8).write(
            to: URL(fileURLWithPath: path))
        let run = try runBuiltColonnade(["filter", "--snapshot", path])
        #expect(run.status == 1)
        #expect(run.standardOutput.isEmpty)
        #expect(
            try OutputParser.lines(run.standardError) == [
                "error: \(path): not a Colonnade snapshot (no COLNSNAP magic)",
                "hint: to read Nasdaq Data Link JSON or CSV responses, use 'colonnade import FILE'",
            ])
    }

    // MARK: A reader that goes away

    @Test(arguments: [
        ["filter", "--format", "csv", "--columns", "all"],
        ["filter", "--format", "ndjson", "--sort", "-date"],
        ["export", "--format", "csv"],
    ])
    func aReaderClosingThePipeAfterOneLineEndsTheCommandQuietly(arguments: [String]) throws {
        // The bundled sample: 100,800 rows, megabytes of output, far more than a pipe buffers.
        let sample = EndToEndFixture.bundledSample
        let (firstLine, result) = try BuiltExecutable.runReadingOneLine(
            arguments + ["--snapshot", sample],
            environment: EndToEndFixture.cleanEnvironment)
        #expect(!firstLine.isEmpty)
        #expect(arguments.contains("ndjson") ? firstLine.hasPrefix("{\"ticker\":") : firstLine.hasPrefix("ticker,date,open,high,low,close"))
        #expect(!result.terminatedBySignal)
        #expect(result.status == 0)
        #expect(result.standardError.isEmpty)
    }
}
