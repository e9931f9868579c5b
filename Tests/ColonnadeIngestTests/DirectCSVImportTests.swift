import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
@testable import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

/// One large datatable CSV imported straight into the new snapshot file (`importDirectCSV`: the
/// exact row count, the pieces placed into a `SnapshotDraft`) against the ordinary path
/// (`importFiles` with the same piece knobs, then `save`): the same bytes for 1–3 threads with
/// pieces cutting across rows and quoted line ends, the fallbacks with nothing left behind, and
/// the row count against the decoder's.
@Suite("Importing one large CSV straight into the snapshot file")
struct DirectCSVImportTests {
    /// A datatable CSV: tickers one after another (`grouped`) or with one ticker's rows split
    /// around a long run of another's, each ticker's dates ascending; LF and CRLF line ends,
    /// blank lines, quoted fields (tickers holding a comma, an LF or a CR LF; quoted dates and
    /// numbers), nulls only with `nulls`, a line end after the last row only with
    /// `trailingLineEnd`.
    static func csv(
        seed: UInt64, tickers: Int = 12, nulls: Bool = false, trailingLineEnd: Bool,
        grouped: Bool = true, quotes: Bool = true
    ) -> [UInt8] {
        var rng = SplitMix64(seed: seed)
        func lineEnd() -> String { rng.chance(2) ? "\r\n" : "\n" }
        var lines: [String] = []
        func row(_ symbol: String, _ day: Int) -> String {
            let date = Day(daysSinceEpoch: Int32(12_000 + day)).description
            var line = symbol + "," + (quotes && rng.chance(7) ? "\"\(date)\"" : date)
            for _ in 0 ..< 3 {
                let value: String
                switch rng.below(nulls ? 5 : 4) {
                case 0: value = String(Double(bitPattern: rng.next() & 0x7FEF_FFFF_FFFF_FFFF))
                case 1: value = "\(rng.below(100_000)).\(rng.below(100_000_000))"
                case 4: value = ""
                default: value = String(Double(rng.below(1 << 40)) / 1_000.0)
                }
                line += "," + (quotes && !value.isEmpty && rng.chance(6) ? "\"\(value)\"" : value)
            }
            return line
        }
        func symbol(_ t: Int) -> String {
            guard quotes else { return "T\(t)" }
            switch t % 4 {
            case 1: return "\"T\(t),X\""
            case 2: return "\"T\(t)\nX\""
            case 3: return "\"T\(t)\r\nX\""
            default: return "T_\(t)"
            }
        }
        for t in 0 ..< tickers {
            let days = rng.below(40)
            var day = rng.below(50)
            for _ in 0 ..< days {
                lines.append(row(symbol(t), day))
                day += 1 + rng.below(3)
            }
        }
        if !grouped {
            // U's rows before and after a long run of V's (later dates: only the split is wrong).
            lines = (0 ..< 5).map { row("U", $0) } + (0 ..< 200).map { row("V", $0) } + (0 ..< 20).map { row("U", 1_000 + $0) } + lines
        }
        var text = "ticker,date,open,high,close" + lineEnd()
        for (i, line) in lines.enumerated() {
            if rng.chance(9) { text += lineEnd() }  // a blank line
            text += line
            if i + 1 < lines.count || trailingLineEnd { text += lineEnd() }
        }
        return Array(text.utf8)
    }

    /// The ordinary path's snapshot bytes, its pieces cut as the direct path's.
    static func ordinaryBytes(_ path: String, threads: Int, chunkSize: Int, in dir: String) throws -> Data {
        let out = dir + "/ordinary.snapshot"
        defer { try? FileManager.default.removeItem(atPath: out) }
        try QuoteImporter.importFiles(
            [path], ticker: nil, archiveOptions: ArchiveImporter.Options(), threads: threads,
            chunkSize: chunkSize, largeFileSize: 1, progress: nil
        ).save(to: out)
        return try Data(contentsOf: URL(fileURLWithPath: out))
    }

    static func direct(
        _ path: String, threads: Int, chunkSize: Int, snapshot: String,
        progress: ImportProgress? = nil, writebackStride: Int = SnapshotDraft.defaultWritebackStride
    ) throws -> (table: QuoteTable, inPlace: Bool)? {
        try QuoteImporter.importDirect(
            [path], ticker: nil, threads: threads, progress: progress, snapshot: snapshot,
            chunkSize: chunkSize, largeFileSize: 1, writebackStride: writebackStride)
    }

    static func nothingCounted(_ progress: ImportProgress) -> Bool {
        progress.current.files == 0 && progress.current.rows == 0 && progress.current.bytes == 0
    }

    /// A scratch directory with the CSV written as `quotes.csv` and an empty `out` folder.
    static func scratch(_ bytes: [UInt8]) throws -> (dir: String, csv: String, out: String) {
        let dir = ImportTests.directory()
        try Data(bytes).write(to: URL(fileURLWithPath: dir + "/quotes.csv"))
        try FileManager.default.createDirectory(atPath: dir + "/out", withIntermediateDirectories: true)
        return (dir, dir + "/quotes.csv", dir + "/out")
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func writesTheOrdinaryBytesInPlaceForOneToThreeThreads(seed: UInt64) throws {
        let bytes = Self.csv(seed: seed, trailingLineEnd: seed % 2 == 0)
        let (dir, csv, out) = try Self.scratch(bytes)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let whole = try bytes.withUnsafeBytes { try QuoteDecoder.decode($0, source: "quotes.csv").table }
        #expect(whole.rowCount > 100 && whole.tickers.contains { $0.symbol.contains("\r\n") })
        // Pieces of a few rows, cutting inside quoted fields' line ends and between CR and LF.
        for chunkSize in [37, 301, 1 << 20] {
            for threads in 1 ... 3 {
                let expected = try Self.ordinaryBytes(csv, threads: threads, chunkSize: chunkSize, in: out)
                let snapshot = out + "/direct.snapshot"
                let progress = ImportProgress()
                let result = try #require(
                    try Self.direct(csv, threads: threads, chunkSize: chunkSize, snapshot: snapshot, progress: progress))
                #expect(result.inPlace, "chunk \(chunkSize), threads \(threads): counted right, written in place")
                #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == expected, "chunk \(chunkSize), threads \(threads)")
                #expect(result.table == whole)
                #expect(result.table == (try QuoteTable.load(from: snapshot)))
                #expect(progress.current.files == 1 && progress.current.rows == whole.rowCount && progress.current.bytes > 0)
                #expect(try DirectImportTests.names(in: out) == ["direct.snapshot"], "no temporary left")
                try FileManager.default.removeItem(atPath: snapshot)
                // Starting the writeback every page written (the import is durable) changes no byte.
                let often = try #require(
                    try Self.direct(
                        csv, threads: threads, chunkSize: chunkSize, snapshot: snapshot,
                        writebackStride: 4096))
                let written = try Data(contentsOf: URL(fileURLWithPath: snapshot))
                #expect(often.inPlace && written == expected, "chunk \(chunkSize), threads \(threads), writeback")
                try FileManager.default.removeItem(atPath: snapshot)
            }
        }
    }

    @Test func aPlainCSVWithoutQuotesIsCountedByWholeBlocks() throws {
        // Long enough for many 4,096-byte blocks without quotes or blank lines (the vectorized count).
        var bytes = Self.csv(seed: 9, tickers: 80, trailingLineEnd: true, quotes: false)
        bytes = bytes.filter { $0 != UInt8(ascii: "\r") }
        var collapsed: [UInt8] = []
        for b in bytes where !(b == UInt8(ascii: "\n") && collapsed.last == UInt8(ascii: "\n")) { collapsed.append(b) }
        let (dir, csv, out) = try Self.scratch(collapsed)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        #expect(collapsed.count > 8 * 4096)
        for threads in 1 ... 3 {
            let expected = try Self.ordinaryBytes(csv, threads: threads, chunkSize: 5000, in: out)
            let result = try #require(try Self.direct(csv, threads: threads, chunkSize: 5000, snapshot: out + "/d.snapshot"))
            #expect(result.inPlace)
            #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/d.snapshot")) == expected, "threads \(threads)")
            try FileManager.default.removeItem(atPath: out + "/d.snapshot")
        }
    }

    @Test(arguments: [UInt64(11), 12])
    func nullsAreWrittenInPlaceWithTheOrdinaryBytes(seed: UInt64) throws {
        let (dir, csv, out) = try Self.scratch(Self.csv(seed: seed, nulls: true, trailingLineEnd: true))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for threads in 1 ... 3 {
            let expected = try Self.ordinaryBytes(csv, threads: threads, chunkSize: 53, in: out)
            let result = try #require(try Self.direct(csv, threads: threads, chunkSize: 53, snapshot: out + "/d.snapshot"))
            #expect(result.inPlace, "threads \(threads): the bitmaps go after every column's values")
            #expect(result.table.columns.contains { $0.validity != nil })
            #expect(result.table == (try QuoteTable.load(from: out + "/d.snapshot")), "threads \(threads)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/d.snapshot")) == expected, "threads \(threads)")
            #expect(try DirectImportTests.names(in: out) == ["d.snapshot"])
            try FileManager.default.removeItem(atPath: out + "/d.snapshot")
        }
    }

    @Test func rowsNotGroupedByTickerTakeTheOrdinaryPathWithNothingLeft() throws {
        let (dir, csv, out) = try Self.scratch(Self.csv(seed: 21, trailingLineEnd: true, grouped: false))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        for threads in 1 ... 3 {
            let progress = ImportProgress()
            #expect(try Self.direct(csv, threads: threads, chunkSize: 200, snapshot: out + "/d.snapshot", progress: progress) == nil)
            #expect(Self.nothingCounted(progress), "nothing counted when it gives up")
            #expect(try DirectImportTests.names(in: out).isEmpty, "threads \(threads): nothing written")
            // The ordinary path merges the pieces instead.
            #expect(
                try QuoteImporter.importFiles(
                    [csv], ticker: nil, archiveOptions: ArchiveImporter.Options(), threads: threads,
                    chunkSize: 200, largeFileSize: 1, progress: nil
                ).rowCount > 200)
        }
    }

    @Test func noRowsOrAQuoteInATickerTakeTheOrdinaryPath() throws {
        for text in [
            "ticker,date,open\n", "ticker,date,open", "ticker,date,open\r\n\r\n\n",
            "ticker,date,open\nA,2020-01-02,1\n\"B\"\"B\",2020-01-02,1\n", "ticker,date,open\nA\"B,2020-01-02,1\n",
        ] {
            let (dir, csv, out) = try Self.scratch(Array(text.utf8))
            defer { try? FileManager.default.removeItem(atPath: dir) }
            for threads in 1 ... 2 {
                #expect(try Self.direct(csv, threads: threads, chunkSize: 8, snapshot: out + "/d.snapshot") == nil, "\(text)")
                #expect(try DirectImportTests.names(in: out).isEmpty)
            }
        }
    }

    @Test func aFailingCSVLeavesTheOrdinaryErrorToTheOrdinaryPathAndNothingBehind() throws {
        // Byte lines (a Swift string would keep CR LF as one character).
        var lines = Self.csv(seed: 31, trailingLineEnd: true, quotes: false).split(
            separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false
        ).map(Array.init)
        // A bad number in the open column of a row well inside the file.
        let target = try #require((lines.count * 2 / 3 ..< lines.count).first { lines[$0].split(separator: UInt8(ascii: ",")).count == 5 })
        let fields = lines[target].split(separator: UInt8(ascii: ","), omittingEmptySubsequences: false).map(Array.init)
        lines[target] = Array(([fields[0], fields[1], Array("1.2.3".utf8)] + fields[3...]).joined(separator: [UInt8(ascii: ",")]))
        let (dir, csv, out) = try Self.scratch(Array(lines.joined(separator: [UInt8(ascii: "\n")])))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let column = fields[0].count + fields[1].count + 3
        for threads in 1 ... 3 {
            var ordinary: ResponseError?
            do {
                _ = try QuoteImporter.importFiles(
                    [csv], ticker: nil, archiveOptions: ArchiveImporter.Options(), threads: threads,
                    chunkSize: 64, largeFileSize: 1, progress: nil)
            } catch { ordinary = error }
            let error = try #require(ordinary)
            #expect("\(error)".contains("quotes.csv:\(target + 1):\(column) "), "\(error)")
            #expect("\(error)".contains("1.2.3"))
            let progress = ImportProgress()
            #expect(try Self.direct(csv, threads: threads, chunkSize: 64, snapshot: out + "/d.snapshot", progress: progress) == nil)
            #expect(Self.nothingCounted(progress))
            #expect(try DirectImportTests.names(in: out).isEmpty, "threads \(threads): no snapshot, no temporary")
        }
    }

    @Test func aSnapshotThatCannotBeCreatedLeavesTheErrorToTheOrdinaryPath() throws {
        let (dir, csv, _) = try Self.scratch(Self.csv(seed: 41, trailingLineEnd: false))
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let progress = ImportProgress()
        #expect(try Self.direct(csv, threads: 2, chunkSize: 100, snapshot: dir + "/none/s.snapshot", progress: progress) == nil)
        #expect(Self.nothingCounted(progress))
        #expect(!FileManager.default.fileExists(atPath: dir + "/none"))
    }

    /// The decoder's row count of `text` (a whole datatable CSV), or nil when it fails.
    static func decodedRows(_ text: [UInt8]) -> Int? {
        text.withUnsafeBytes { try? QuoteDecoder.decode($0, source: "t.csv").table.rowCount }
    }

    /// `countCSVRows` over every cut of `text`'s data lines; the survey's plain line count, when
    /// it has one, must be the same.
    static func counted(_ text: [UInt8], chunkSize: Int) -> Int? {
        text.withUnsafeBytes { raw in
            guard let (input, _, survey) = QuoteImporter.pieceLayout(raw, source: "t.csv", threads: 1, chunkSize: chunkSize) else {
                return nil
            }
            let rows = QuoteImporter.countCSVRows(input.base, cuts: survey.cuts, end: input.count, threads: 2)
            if let plain = survey.plainLines {
                #expect(plain == rows, "plain lines \(plain), counted \(rows), chunk \(chunkSize)")
            }
            return rows
        }
    }

    @Test(arguments: [UInt64(51), 52, 53])
    func theRowCountIsTheDecodersForEveryCut(seed: UInt64) throws {
        // CSVPieceTests' random CSV: interleaved tickers, quoted line ends, blank lines, CRLF.
        let text = CSVPieceTests.randomCSV(seed: seed, rows: 600).text
        let rows = try #require(Self.decodedRows(text))
        #expect(rows == 600)
        for chunkSize in [1, 7, 64, 4095, 4096, 5000, 1 << 20] {
            #expect(Self.counted(text, chunkSize: chunkSize) == rows, "chunk \(chunkSize)")
        }
        for trailing in [false, true] {
            let own = Self.csv(seed: seed, trailingLineEnd: trailing)
            #expect(Self.counted(own, chunkSize: 97) == Self.decodedRows(own))
        }
    }

    @Test func blankAndTrailingLinesAreCountedAsTheDecoderSkipsThem() throws {
        let cases = [
            "", "\n", "\r\n", "\n\n\r\n", "A,2020-01-02,1", "A,2020-01-02,1\r", "A,2020-01-02,1\r\n",
            "\nA,2020-01-02,1\n\n", "\r\nA,2020-01-02,1\r\n\r\nA,2020-01-03,1\n\r\n",
            "\"A\nB\",2020-01-02,1\n\"C\r\n\n\",2020-01-02,\"2\"\n\n",
        ]
        for body in cases {
            let text = Array(("ticker,date,open\n" + body).utf8)
            #expect(Self.counted(text, chunkSize: 1 << 20) == (Self.decodedRows(text) ?? -1), "\(body.debugDescription)")
            #expect(Self.counted(text, chunkSize: 3) == (Self.decodedRows(text) ?? -1), "\(body.debugDescription)")
        }
        // Counted as the decoder would, though it fails them (the import then takes the ordinary path).
        func count(_ body: String) -> Int? { Self.counted(Array(("ticker,date,open\n" + body).utf8), chunkSize: 1 << 20) }
        #expect(count("A,2020-01-02,1\n\r") == 2)
        #expect(count("A,2020-01-02,1\n \n") == 2)
        // Blocks of 4,096 bytes: a blank line, a CR LF and a quoted line end across a block's end.
        // (The first block starts after the header; rows of 15 bytes, the first one padded, put
        // the line start nearest the block's end at every distance from it.)
        for pad in 0 ..< 16 {
            for (name, insert) in [
                ("blank", "\n"), ("crlf blank", "\r\n"), ("quoted", "\"Q\nQ\",2020-01-01,1\n"), ("crlf row", "Q,2020-01-01,1\r\n"),
            ] {
                var body = "A,2000-01-01," + String(repeating: "1", count: pad + 1) + "\n"
                var day = 0
                while body.utf8.count < 4096 - 14 {
                    body += "A,\(Day(daysSinceEpoch: Int32(10_000 + day)).description),1\n"
                    day += 1
                }
                body += insert
                for _ in 0 ..< 3 {
                    body += "A,\(Day(daysSinceEpoch: Int32(10_000 + day)).description),1\n"
                    day += 1
                }
                let text = Array(("ticker,date,open\n" + body + "B,2020-01-02,1\nB,2020-01-03,1").utf8)
                let decoded = try #require(Self.decodedRows(text), "\(name), pad \(pad)")
                #expect(Self.counted(text, chunkSize: 1 << 20) == decoded, "\(name), pad \(pad)")
                #expect(Self.counted(text, chunkSize: 4096) == decoded, "\(name), pad \(pad)")
            }
        }
    }

    @Test(arguments: [UInt64(61), 62])
    func perTickerCSVFilesAreWrittenInPlaceToo(seed: UInt64) throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = try DirectImportTests.withoutNulls(ParallelImportTests.randomTable(seed: seed, tickers: 20))
        let paths = try QuoteGenerator.writeTimeSeriesCSV(table, toDirectory: dir + "/csv")
        for (path, entry) in zip(paths, table.tickers) {
            #expect(QuoteImporter.countDataRows(atPath: path) == entry.rowCount)
        }
        let out = dir + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        for threads in 1 ... 3 {
            let expected = try DirectImportTests.ordinaryBytes(paths, threads: threads, in: out)
            let result = try #require(
                try QuoteImporter.importDirect(paths, ticker: nil, threads: threads, progress: nil, snapshot: out + "/d.snapshot"))
            #expect(result.inPlace, "threads \(threads)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: out + "/d.snapshot")) == expected, "threads \(threads)")
            #expect(try DirectImportTests.names(in: out) == ["d.snapshot"])
            try FileManager.default.removeItem(atPath: out + "/d.snapshot")
        }
    }
}
