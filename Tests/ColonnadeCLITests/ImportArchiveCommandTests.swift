import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import DataLinkFormat
import Foundation
import Testing

/// `colonnade import FILE.zip` and `colonnade import -`: the real export zip and standard-tool
/// zips import as their CSV does; a bad zip is one precise error and the snapshot stays
/// byte-identical.
@Suite struct ImportArchiveCommandTests {
    static func exportFixture(_ name: String) -> String { Fixtures.exportDirectory.appendingPathComponent(name).path }
    static let csv = Fixtures.quandlPath("WIKI-PRICES.datatable.2014.csv")

    /// The snapshot that importing the uncompressed CSV gives.
    static func referenceTable(in scratch: Scratch) async throws -> QuoteTable {
        let path = scratch.file("reference.snapshot")
        let run = await runOffPool(["import", csv, "--snapshot", path], in: scratch)
        #expect(run.status == 0, "\(run.standardError)")
        return try QuoteTable.load(from: path)
    }

    @Test(arguments: [
        "WIKI-PRICES.export.zip", "WIKI-PRICES.2014.infozip-9.zip", "WIKI-PRICES.2014.stored.zip", "WIKI-PRICES.2014.zip64.zip",
    ])
    func aZipImportsAsItsCSV(_ name: String) async throws {
        let scratch = try Scratch()
        let expected = try await Self.referenceTable(in: scratch)
        let run = await runOffPool(["import", Self.exportFixture(name), "--snapshot", scratch.snapshot], in: scratch)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.isEmpty)
        #expect(run.standardOutput.contains("imported \(expected.rowCount.groupedText) rows for 4 tickers"), "\(run.standardOutput)")
        #expect(try QuoteTable.load(from: scratch.snapshot) == expected)
    }

    @Test func aCorruptZipIsOneErrorAndChangesNothing() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.exportFixture("WIKI-PRICES.export.zip"))))
        let member = try #require(try ZipArchive(bytes: bytes, name: "x").members.first)
        // A byte near the end of the deflate stream: the damage shows late, after rows were decoded.
        bytes[member.dataOffset + member.compressedSize - 40] ^= 0x55
        try Data(bytes).write(to: URL(fileURLWithPath: scratch.file("damaged.zip")))
        let truncated = Array(bytes.prefix(bytes.count / 2))
        try Data(truncated).write(to: URL(fileURLWithPath: scratch.file("half.zip")))

        for name in ["damaged.zip", "half.zip"] {
            let run = await runOffPool(
                ["import", Fixtures.quandlPath("WIKI-AAPL.2014.asc.csv"), name, "--snapshot", scratch.snapshot],
                in: scratch)
            #expect(run.status == 1)
            #expect(run.standardOutput.isEmpty)
            #expect(run.errorLines.count == 1, "\(run.standardError)")
            #expect(run.errorLines.first?.hasPrefix("error: \(name)") == true, "\(run.standardError)")
            #expect(scratch.bytes("quotes.snapshot") == before, "\(name): the snapshot is byte-identical")
        }
        let damaged = await runOffPool(["import", "damaged.zip", "--snapshot", scratch.snapshot], in: scratch)
        #expect(damaged.standardError.contains("member 'QUANDL_SAMPLE_TABLE.csv'"), "\(damaged.standardError)")
    }

    @Test func theInflateLimitStopsAMemberAndTheOptionRaisesIt() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        // A stored datatable CSV of a little over 1 MiB.
        let table = QuoteGenerator(tickers: 4, days: 3000, seed: 4).makeTable()
        let csv = QuoteGenerator.datatableCSV(table)
        #expect(csv.count > 1 << 20)
        try Data(ZipBuilder([.stored("PRICES.csv", csv)]).bytes()).write(to: URL(fileURLWithPath: scratch.file("big.zip")))

        let refused = await runOffPool(["import", "big.zip", "--max-inflate-size", "1", "--snapshot", scratch.snapshot], in: scratch)
        #expect(refused.status == 1)
        #expect(refused.errorLines.first?.contains("big.zip: member 'PRICES.csv'") == true, "\(refused.standardError)")
        #expect(refused.errorLines.first?.contains("past the limit of 1048576 bytes") == true, "\(refused.standardError)")
        #expect(refused.standardError.contains("--max-inflate-size"), "the CLI names its own option in the hint")
        #expect(scratch.bytes("quotes.snapshot") == before)

        let allowed = await runOffPool(["import", "big.zip", "--max-inflate-size", "2", "--snapshot", scratch.snapshot], in: scratch)
        #expect(allowed.status == 0, "\(allowed.standardError)")
        #expect(allowed.standardOutput.contains("imported \(table.rowCount.groupedText) rows for 4 tickers"))
    }

    /// The ratio guard on a real bomb (70 MiB of newlines after one CSV row, 71 KB zipped by
    /// Info-ZIP: about 1,030:1): refused before inflating a byte, by the recorded size against 200 ×
    /// the compressed size; `--max-inflate-ratio` raises the ratio and the one row imports.
    @Test func aRatioBombIsRefusedAndTheRatioOptionRaisesTheLimit() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        let bomb = Fixtures.directory.appendingPathComponent("deflate/newline-bomb.zip").path
        let refused = await runOffPool(["import", bomb, "--snapshot", scratch.snapshot], in: scratch)
        #expect(refused.status == 1)
        #expect(refused.errorLines.count == 1, "\(refused.standardError)")
        #expect(
            refused.errorLines.first?.contains("member 'PRICES.csv': would inflate to 73400361 bytes") == true, "\(refused.standardError)")
        #expect(refused.standardError.contains("--max-inflate-ratio"), "the hint names the option")
        #expect(scratch.bytes("quotes.snapshot") == before)

        let allowed = await runOffPool(["import", bomb, "--max-inflate-ratio", "2000", "--snapshot", scratch.snapshot], in: scratch)
        #expect(allowed.status == 0, "\(allowed.standardError)")
        #expect(allowed.standardOutput.contains("imported 1 rows for 1 ticker"), "\(allowed.standardOutput)")
    }

    /// Every failure class a zip can have through `import FILE.zip`: one error line naming the
    /// file, the member and what is wrong (the method by name, the encryption, the CRC), exit 1,
    /// and the snapshot byte-identical — also when a good file came first on the command line.
    @Test func everyZipFailureClassIsOneErrorAndChangesNothing() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        let csv = Array("ticker,date,close\nAAPL,2014-01-02,553.13\n".utf8)
        func member(method: Int = 0, flags: Int = 0, crc: UInt32? = nil) -> ZipBuilder.Member {
            var m = ZipBuilder.Member.stored("PRICES.csv", csv)
            m.method = method
            m.flags = flags
            if let crc { m.crc32 = crc }
            return m
        }
        let cases: [(file: String, bytes: [UInt8], says: [String])] = [
            ("deflate64.zip", ZipBuilder([member(method: 9)]).bytes(), ["member 'PRICES.csv'", "Deflate64 (method 9)"]),
            ("bzip2.zip", ZipBuilder([member(method: 12)]).bytes(), ["member 'PRICES.csv'", "bzip2 (method 12)"]),
            ("lzma.zip", ZipBuilder([member(method: 14)]).bytes(), ["member 'PRICES.csv'", "LZMA (method 14)"]),
            ("zstd.zip", ZipBuilder([member(method: 93)]).bytes(), ["member 'PRICES.csv'", "Zstandard (method 93)"]),
            ("encrypted.zip", ZipBuilder([member(flags: 1)]).bytes(), ["member 'PRICES.csv'", "encrypted"]),
            ("crc.zip", ZipBuilder([member(crc: 0xDEAD_BEEF)]).bytes(), ["member 'PRICES.csv'", "CRC-32 mismatch"]),
            ("html.zip", Array("<html><body>not found</body></html>".utf8), ["html.zip"]),
        ]
        for c in cases {
            try Data(c.bytes).write(to: URL(fileURLWithPath: scratch.file(c.file)))
            let run = await runOffPool(
                ["import", Fixtures.quandlPath("WIKI-AAPL.2014.asc.csv"), c.file, "--snapshot", scratch.snapshot],
                in: scratch)
            #expect(run.status == 1, "\(c.file)")
            #expect(
                run.errorLines.count == 1 && run.errorLines.first?.hasPrefix("error: \(c.file)") == true, "\(c.file): \(run.standardError)")
            for text in c.says {
                #expect(run.standardError.contains(text), "\(c.file) should say \(text): \(run.standardError)")
            }
            #expect(scratch.bytes("quotes.snapshot") == before, "\(c.file): the snapshot is byte-identical")
        }
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains(".tmp") }.isEmpty,
            "no temporary left behind")
    }

    /// The README's own line, through a real pipe: `unzip -p export.zip | colonnade import -` saves
    /// the same table as `import export.zip` (skipped where Info-ZIP's unzip is not installed).
    @Test(.enabled(if: CompletionScriptTests.installed("unzip") != nil, "Info-ZIP unzip is not installed"))
    func unzipPipedIntoImportGivesTheSameTable() async throws {
        let scratch = try Scratch()
        let expected = try await Self.referenceTable(in: scratch)
        let shell = Process()
        shell.executableURL = URL(fileURLWithPath: "/bin/sh")
        let quote = { (s: String) in "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        shell.arguments = [
            "-c",
            "unzip -p \(quote(Self.exportFixture("WIKI-PRICES.2014.infozip-9.zip"))) | "
                + "\(quote(try BuiltExecutable.url().path)) import - --snapshot \(quote(scratch.snapshot))",
        ]
        shell.environment = EndToEndFixture.cleanEnvironment
        shell.standardOutput = FileHandle.nullDevice
        let errors = Pipe()
        shell.standardError = errors
        try shell.run()
        let errorText = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        shell.waitUntilExit()
        #expect(shell.terminationStatus == 0, "\(errorText)")
        #expect(try QuoteTable.load(from: scratch.snapshot) == expected)
    }

    /// A bad line in the first of several 4 MiB chunks of a member: a worker finds it while the
    /// member is still being inflated, which stops; the error is the whole file's (member and
    /// line:column), exit 1, the snapshot byte-identical and no temporary left. Through a file
    /// and through standard input.
    @Test func aBadLineFoundWhileInflatingChangesNothing() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        var csv = QuoteGenerator.datatableCSV(QuoteGenerator(tickers: 30, days: 3000, seed: 4).makeTable())
        #expect(csv.count > 2 * (4 << 20), "several chunks")
        // Line 1000's second field (the date) becomes 2014-13-01.
        var line = 1, i = 0
        while line < 1000 {
            if csv[i] == UInt8(ascii: "\n") { line += 1 }
            i += 1
        }
        while csv[i] != UInt8(ascii: ",") { i += 1 }
        csv.replaceSubrange(i + 1 ..< i + 11, with: Array("2014-13-01".utf8))
        try Data(ZipBuilder([.stored("PRICES.csv", csv)]).bytes()).write(to: URL(fileURLWithPath: scratch.file("big.zip")))
        try Data(csv).write(to: URL(fileURLWithPath: scratch.file("big.csv")))
        let run = await runOffPool(["import", "big.zip", "--snapshot", scratch.snapshot, "--threads", "2"], in: scratch)
        #expect(run.status == 1)
        #expect(
            run.errorLines.count == 1 && run.errorLines.first?.hasPrefix("error: big.zip:PRICES.csv:1000:") == true, "\(run.standardError)")
        #expect(scratch.bytes("quotes.snapshot") == before, "the snapshot is byte-identical")
        let piped = try BuiltExecutable.run(
            ["import", "-", "--snapshot", scratch.snapshot, "--threads", "2"],
            environment: EndToEndFixture.cleanEnvironment,
            standardInput: URL(fileURLWithPath: scratch.file("big.csv")))
        #expect(piped.status == 1)
        #expect(piped.standardError.contains("error: standard input:1000:"), "\(piped.standardError)")
        #expect(scratch.bytes("quotes.snapshot") == before, "the snapshot is byte-identical")
        #expect(
            try FileManager.default.contentsOfDirectory(atPath: scratch.path).filter { $0.contains(".tmp") }.isEmpty,
            "no temporary left behind")
    }

    /// `unzip -p x.zip | colonnade import -`: the real process with a body, or a zip, on standard input.
    @Test(arguments: [false, true])
    func standardInputTakesABodyOrAZip(zipped: Bool) async throws {
        let scratch = try Scratch()
        let expected = try await Self.referenceTable(in: scratch)
        let input = zipped ? Self.exportFixture("WIKI-PRICES.export.zip") : Self.csv
        let result = try BuiltExecutable.run(
            ["import", "-", "--snapshot", scratch.snapshot],
            environment: EndToEndFixture.cleanEnvironment,
            standardInput: URL(fileURLWithPath: input))
        #expect(result.status == 0, "\(result.standardError)")
        #expect(try QuoteTable.load(from: scratch.snapshot) == expected)

        // A bad body on standard input is named as such.
        try scratch.write("ticker,date,close\nAAPL,2014-13-01,1.0\n", to: "bad.csv")
        let before = try #require(scratch.bytes("quotes.snapshot"))
        let bad = try BuiltExecutable.run(
            ["import", "-", "--snapshot", scratch.snapshot],
            environment: EndToEndFixture.cleanEnvironment,
            standardInput: URL(fileURLWithPath: scratch.file("bad.csv")))
        #expect(bad.status == 1)
        #expect(bad.standardError.contains("error: standard input:2:"), "\(bad.standardError)")
        #expect(scratch.bytes("quotes.snapshot") == before)
    }
}
