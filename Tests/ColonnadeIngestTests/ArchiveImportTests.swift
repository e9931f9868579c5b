import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

/// Zip archives through the import pipeline (`ArchiveImporter`, `QuoteImporter`): the table is
/// the one the uncompressed file gives, bit for bit, whatever the chunking and the threads; the
/// errors are the whole file's; nothing changes on failure.
@Suite("Importing zip archives")
struct ArchiveImportTests {
    static let zipNames = [
        "WIKI-PRICES.export.zip", "WIKI-PRICES.2014.infozip-9.zip",
        "WIKI-PRICES.2014.stored.zip", "WIKI-PRICES.2014.zip64.zip",
    ]
    static let csvName = "WIKI-PRICES.datatable.2014.csv"

    static func zipPath(_ name: String) -> String { Fixtures.exportDirectory.appendingPathComponent(name).path }

    /// The reference: the uncompressed CSV imported as a file.
    static func reference() throws -> QuoteTable {
        try QuoteImporter.importFiles([Fixtures.quandlPath(csvName)])
    }

    static func options(threads: Int, chunkSize: Int) -> ArchiveImporter.Options {
        ArchiveImporter.Options(threads: threads, chunkSize: chunkSize)
    }

    /// Writes `bytes` to a fresh temporary file named `name` and returns its path.
    static func temporaryFile(_ name: String, _ bytes: [UInt8]) throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-zip-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let url = directory.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    @Test(arguments: zipNames)
    func everyFixtureZipImportsToTheCSVsTableBitForBit(_ name: String) throws {
        let expected = try Self.reference()
        #expect(expected.rowCount > 400 && expected.tickers.count == 4, "the fixture: 4 tickers over 2014")
        #expect(try QuoteImporter.importFiles([Self.zipPath(name)]) == expected)
        // Small chunks (many per ticker, tickers cut mid-run), any number of decoding threads.
        for threads in [1, 2, 3, 5] {
            for chunkSize in [1024, 1500, 7919, 1 << 20] {
                let table = try ArchiveImporter.importArchive(
                    atPath: Self.zipPath(name),
                    options: Self.options(threads: threads, chunkSize: chunkSize))
                #expect(table == expected, "threads \(threads), chunks of \(chunkSize)")
            }
        }
        // From memory, as `import -` reads it.
        let bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.zipPath(name))))
        #expect(try QuoteImporter.importBytes(bytes, source: "-") == expected)
    }

    /// Seeded quotes with nulls, written as a datatable CSV whose rows are shuffled (so every
    /// chunk holds pieces of many tickers), stored in a zip: the pipeline's table equals the
    /// whole file's.
    @Test(arguments: [UInt64(1), 2, 3])
    func shuffledGeneratedRowsImportTheSameInAnyChunking(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let generated = QuoteGenerator.datatableCSV(QuoteGenerator(tickers: 9, days: 400, seed: seed).makeTable())
        // Blank about one value in 40 (nulls are empty fields); tickers and dates stay.
        var csv: [UInt8] = []
        var field = 0
        var line = 0
        var i = 0
        while i < generated.count {
            let b = generated[i]
            csv.append(b)
            i += 1
            if b == UInt8(ascii: "\n") {
                field = 0
                line += 1
                continue
            }
            if b == UInt8(ascii: ",") {
                field += 1
                // Never in the header (line 0): a column needs a name.
                if line > 0 && field >= 2 && rng.chance(40) {
                    while i < generated.count, generated[i] != UInt8(ascii: ","), generated[i] != UInt8(ascii: "\n") { i += 1 }
                }
            }
        }
        var lines = csv.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: true).map(Array.init)
        let header = lines.removeFirst()
        for i in stride(from: lines.count - 1, to: 0, by: -1) { lines.swapAt(i, rng.below(i + 1)) }
        let shuffled = ([header] + lines).joined(separator: [UInt8(ascii: "\n")]) + [UInt8(ascii: "\n")]
        let expected = try QuoteDecoder.decode(shuffled, source: "PRICES.csv").table
        let zip = ZipBuilder([.stored("PRICES.csv", shuffled)]).bytes()
        let archive = try ZipArchive(bytes: zip, name: "PRICES.zip")
        for threads in [1, 2, 4] {
            for chunkSize in [1024, 4099, 65_536] {
                var table = try ArchiveImporter.importArchive(archive, options: Self.options(threads: threads, chunkSize: chunkSize))
                var reference = expected
                reference.computeSummaries()
                table.computeSummaries()
                #expect(table == reference, "seed \(seed), threads \(threads), chunks of \(chunkSize)")
            }
        }
    }

    @Test func anArchiveOfSeveralResponseShapesImportsLikeItsFiles() throws {
        let names = ["WIKI-AAPL.2014.asc.csv", "WIKI-AMZN.dataset.json", "WIKI-PRICES.datatable.json"]
        let expected = try QuoteImporter.importFiles(names.map(Fixtures.quandlPath))
        var members: [ZipBuilder.Member] = [.stored("responses/", [])]
        for name in names { members.append(.stored("responses/" + name, [UInt8](try Fixtures.quandl(name)))) }
        members.append(.stored("__MACOSX/responses/._WIKI-AAPL.2014.asc.csv", [0, 5, 22, 7, 0, 2, 0, 0]))
        let path = try Self.temporaryFile("responses.zip", ZipBuilder(members).bytes())
        let imported = try QuoteImporter.importFiles([path])
        #expect(imported == expected)
        #expect(imported.ticker("AAPL") != nil, "the ticker from the member's file name")
        // --ticker overrides single-ticker members, as for files.
        let aaplOnly = try QuoteImporter.importFiles([path], ticker: "XYZ")
        #expect(aaplOnly.ticker("XYZ") != nil && aaplOnly.ticker("AAPL") == nil)
    }

    // MARK: Failures: precise, and nothing changes

    /// The fixture CSV with one bad value deep inside (past the first chunks).
    static func csvWithBadValue() throws -> (bytes: [UInt8], line: Int) {
        let text = String(decoding: try Fixtures.quandl(csvName), as: UTF8.self)
        var lines = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        let line = 350
        var fields = lines[line - 1].split(separator: ",", omittingEmptySubsequences: false).map(String.init)
        fields[3] = "12x4"
        lines[line - 1] = fields.joined(separator: ",")
        return (Array(lines.joined(separator: "\n").utf8), line)
    }

    @Test func aBadValueDeepInAMemberIsReportedAtItsLineInTheMember() throws {
        let (csv, line) = try Self.csvWithBadValue()
        var whole: ResponseError?
        do { _ = try QuoteDecoder.decode(csv, source: "prices.zip:PRICES.csv") } catch { whole = error }
        let expected = try #require(whole)
        guard case .decoding(.badNumber(let position, _)) = expected else {
            Issue.record("\(expected)")
            return
        }
        #expect(position.line == line)
        let archive = try ZipArchive(bytes: ZipBuilder([.stored("PRICES.csv", csv)]).bytes(), name: "prices.zip")
        for chunkSize in [1024, 5000, 1 << 20] {
            #expect(throws: expected) {
                try ArchiveImporter.importArchive(archive, options: Self.options(threads: 2, chunkSize: chunkSize))
            }
        }
        #expect(expected.description.hasPrefix("prices.zip:PRICES.csv:\(line):"), "\(expected)")
    }

    /// A bad value in an early piece of a large member, found by a worker while this thread is
    /// still inflating: the inflation stops a few chunks later (not at the end of the member),
    /// and the error is the whole file's, naming the member with line:column.
    @Test(arguments: [1, 2, 4])
    func aBadPieceStopsTheInflationAndGivesTheWholeFilesError(threads: Int) throws {
        var csv = QuoteGenerator.datatableCSV(QuoteGenerator(tickers: 4, days: 3000, seed: 9).makeTable())
        // Line 40's third field (a price) becomes "1x5".
        var line = 1, i = 0
        while line < 40 {
            if csv[i] == UInt8(ascii: "\n") { line += 1 }
            i += 1
        }
        var commas = 0
        while commas < 2 {
            if csv[i] == UInt8(ascii: ",") { commas += 1 }
            i += 1
        }
        csv[i + 1] = UInt8(ascii: "x")
        var whole: ResponseError?
        do { _ = try QuoteDecoder.decode(csv, source: "big.zip:PRICES.csv") } catch { whole = error }
        let expected = try #require(whole)
        #expect(expected.description.hasPrefix("big.zip:PRICES.csv:40:"), "\(expected)")
        let chunkSize = 4096
        #expect(csv.count > 100 * chunkSize, "the member is many chunks long")
        for zip in [ZipBuilder([.stored("PRICES.csv", csv)]).bytes()] {
            let archive = try ZipArchive(bytes: zip, name: "big.zip")
            var options = Self.options(threads: threads, chunkSize: chunkSize)
            let statistics = PipelineStatistics()
            options.statistics = statistics
            #expect(throws: expected) { try ArchiveImporter.importArchive(archive, options: options) }
            #expect(statistics.runs == 1)
            // At most threads + 1 pieces wait behind the failing one, plus the chunk being made.
            let bound = (threads + 5) * (chunkSize + 512)
            #expect(statistics.bytesInflated <= bound, "inflated \(statistics.bytesInflated) of \(csv.count)")
        }
    }

    @Test func aDuplicateRowInAnotherChunkIsTheWholeFilesError() throws {
        var csv = [UInt8](try Fixtures.quandl(Self.csvName))
        // Repeat the first data line at the end: the same (ticker, date) far apart.
        let lines = csv.split(separator: UInt8(ascii: "\n")).map { Array($0) }
        csv += lines[1] + [UInt8(ascii: "\n")]
        var whole: ResponseError?
        do { _ = try QuoteDecoder.decode(csv, source: "dup.zip:PRICES.csv") } catch { whole = error }
        let expected = try #require(whole)
        guard case .decoding(.duplicateDate) = expected else {
            Issue.record("\(expected)")
            return
        }
        let archive = try ZipArchive(bytes: ZipBuilder([.stored("PRICES.csv", csv)]).bytes(), name: "dup.zip")
        #expect(throws: expected) {
            try ArchiveImporter.importArchive(archive, options: Self.options(threads: 2, chunkSize: 2048))
        }
    }

    /// Each zip failure class reaches the importer as `DecodeError.archive` naming the archive,
    /// and the table being imported into is unchanged.
    @Test func corruptAndTruncatedZipsFailPreciselyAndChangeNothing() throws {
        let good = [UInt8](try Data(contentsOf: URL(fileURLWithPath: Self.zipPath("WIKI-PRICES.export.zip"))))
        let member = try #require(try ZipArchive(bytes: good, name: "x").members.first)
        var crc = good
        crc[member.dataOffset + member.compressedSize / 2] ^= 0x10  // inside the deflate stream
        var method = good
        method[member.localHeaderOffset + 8] = 12  // bzip2 in the local header…
        let central = try #require(Self.lastIndex(of: [0x50, 0x4B, 0x01, 0x02], in: good))
        method[central + 10] = 12  // …and in the central directory
        let cases: [(String, [UInt8], (ZipError) -> Bool)] = [
            (
                "truncated.zip", Array(good.prefix(good.count - 30)),
                { if case .notAZip = $0 { true } else if case .truncated = $0 { true } else { false } }
            ),
            ("cut-in-data.zip", Array(good.prefix(member.dataOffset + 100)), { _ in true }),
            (
                "flipped.zip", crc,
                { error in
                    switch error {
                    case .corruptData(_, "QUANDL_SAMPLE_TABLE.csv", let offset, _):
                        offset >= member.dataOffset && offset < member.dataOffset + member.compressedSize
                    case .checksumMismatch(_, "QUANDL_SAMPLE_TABLE.csv", _, _), .sizeMismatch(_, "QUANDL_SAMPLE_TABLE.csv", _, _): true
                    default: false
                    }
                }
            ),
            (
                "bzip2.zip", method,
                { error in
                    if case .unsupportedMethod(_, "QUANDL_SAMPLE_TABLE.csv", _, 12) = error {
                        error.description.contains("bzip2")
                    } else {
                        false
                    }
                }
            ),
        ]
        let original = try Self.reference()
        for (name, bytes, check) in cases {
            let path = try Self.temporaryFile(name, bytes)
            var table = original
            do {
                try QuoteImporter.importFiles([Fixtures.quandlPath("WIKI-AAPL.2014.asc.csv"), path], into: &table)
                Issue.record("\(name): no error")
            } catch {
                guard case .archive(let zipError) = error else {
                    Issue.record("\(name): \(error)")
                    continue
                }
                #expect(zipError.archive == name, "\(error)")
                #expect(check(zipError), "\(name): \(error)")
                #expect(error.description.hasPrefix(name), "\(error)")
            }
            #expect(table == original, "\(name): the table is unchanged")
        }
    }

    @Test func theZipBombLimitsAreHonouredAndCanBeRaised() throws {
        let path = Self.zipPath("WIKI-PRICES.export.zip")
        let tight = ArchiveImporter.Options(limits: ZipLimits(maximumRatio: 2, maximumSize: 1 << 30, ratioFloor: 0))
        #expect {
            try ArchiveImporter.importArchive(atPath: path, options: tight)
        } throws: { error in
            guard let error = error as? ResponseError, case .archive(.tooLarge(_, _, let size, _, let limit)) = error else { return false }
            return size == 109_607 && limit < size
        }
        let raised = ArchiveImporter.Options(limits: ZipLimits(maximumRatio: 4, maximumSize: 1 << 30, ratioFloor: 0))
        #expect(try ArchiveImporter.importArchive(atPath: path, options: raised) == Self.reference())
    }

    @Test func anArchiveWithNothingToImportIsAnError() throws {
        let empty = ZipBuilder([.stored("dir/", []), .stored("__MACOSX/._x", [1, 2])]).bytes()
        #expect(throws: ResponseError.empty(source: "empty.zip")) {
            try QuoteImporter.importBytes(empty, source: "empty.zip")
        }
    }

    static func lastIndex(of needle: [UInt8], in haystack: [UInt8]) -> Int? {
        guard haystack.count >= needle.count else { return nil }
        var i = haystack.count - needle.count
        while i >= 0 {
            if Array(haystack[i ..< i + needle.count]) == needle { return i }
            i -= 1
        }
        return nil
    }
}
