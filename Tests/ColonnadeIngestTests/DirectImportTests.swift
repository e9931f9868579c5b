import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
@testable import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

/// A fresh import decoded straight into the new snapshot file (`importDirect`, `SnapshotDraft`)
/// against the ordinary path (`importFiles`, then `save`): the same bytes for 1–3 threads, the
/// same error for a failing file with nothing left behind, and the row pre-count.
@Suite("Importing straight into the snapshot file")
struct DirectImportTests {
    typealias P = ParallelImportTests

    /// `table` with every null replaced by a value (a table without validity bitmaps: written in place).
    static func withoutNulls(_ table: QuoteTable) throws -> QuoteTable {
        let columns: [AnyColumn] = table.columns.map { column in
            .float64(Column<Double>((0 ..< column.count).map { column.doubleValue(at: $0) ?? 1.25 }))
        }
        return try QuoteTable(
            schema: table.schema, columns: columns, dates: table.dates, tickers: table.tickers,
            dateColumnName: table.dateColumnName)
    }

    /// The ordinary path's snapshot bytes: decoded by `importFiles`, saved with `save`.
    static func ordinaryBytes(_ paths: [String], threads: Int, in dir: String) throws -> Data {
        let path = dir + "/ordinary.snapshot"
        defer { try? FileManager.default.removeItem(atPath: path) }
        try QuoteImporter.importFiles(paths, threads: threads).save(to: path)
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// The names in `dir` (no temporaries may be left there).
    static func names(in dir: String) throws -> [String] {
        try FileManager.default.contentsOfDirectory(atPath: dir).sorted()
    }

    @Test(arguments: [UInt64(31), 32, 33])
    func writesTheOrdinaryBytesInPlaceForOneToThreeThreads(seed: UInt64) throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = try Self.withoutNulls(P.randomTable(seed: seed, tickers: 40))
        var paths = try QuoteGenerator.writeDatasetJSON(table, toDirectory: dir + "/json")
        // Files without rows, at the start and in the middle.
        for (k, at) in [(1, 0), (2, 17)] {
            let empty = dir + "/json/WIKI-EMPTY\(k).json"
            try Data(#"{"dataset_data":{"column_names":["Date","Open","High","Low","Close"],"data":[]}}"#.utf8)
                .write(to: URL(fileURLWithPath: empty))
            paths.insert(empty, at: at)
        }
        let out = dir + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        for threads in 1 ... 3 {
            let expected = try Self.ordinaryBytes(paths, threads: threads, in: out)
            let snapshot = out + "/direct.snapshot"
            let result = try #require(
                try QuoteImporter.importDirect(paths, ticker: nil, threads: threads, progress: nil, snapshot: snapshot))
            #expect(result.inPlace, "threads \(threads): no nulls, rows counted right")
            #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == expected, "threads \(threads)")
            #expect(result.table == (try QuoteTable.load(from: snapshot)), "threads \(threads)")
            #expect(try Self.names(in: out) == ["direct.snapshot"], "threads \(threads): no temporary left")
            try FileManager.default.removeItem(atPath: snapshot)
            // Starting the writeback every page written (durable, as the CLI saves) changes no byte.
            let often = try #require(
                try QuoteImporter.importDirect(
                    paths, ticker: nil, threads: threads, progress: nil,
                    snapshot: snapshot, durable: true, writebackStride: 4096))
            #expect(often.inPlace, "threads \(threads)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == expected, "threads \(threads), writeback")
            try FileManager.default.removeItem(atPath: snapshot)
        }
    }

    @Test(arguments: [UInt64(41), 42])
    func nullsAreWrittenInPlaceWithTheOrdinaryBytes(seed: UInt64) throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = P.randomTable(seed: seed, tickers: 20)
        #expect(table.columns.contains { $0.validity != nil }, "the inputs hold nulls")
        let paths = try QuoteGenerator.writeDatasetJSON(table, toDirectory: dir + "/json")
        let out = dir + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        for threads in 1 ... 3 {
            let expected = try Self.ordinaryBytes(paths, threads: threads, in: out)
            let snapshot = out + "/direct.snapshot"
            let result = try #require(
                try QuoteImporter.importDirect(paths, ticker: nil, threads: threads, progress: nil, snapshot: snapshot))
            #expect(result.inPlace, "threads \(threads): the bitmaps go after every column's values")
            #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == expected, "threads \(threads)")
            let loaded = try QuoteTable.load(from: snapshot)
            #expect(loaded == result.table && loaded.columns.contains { $0.validity != nil }, "threads \(threads)")
            #expect(try Self.names(in: out) == ["direct.snapshot"], "threads \(threads): no temporary left")
            try FileManager.default.removeItem(atPath: snapshot)
        }
    }

    @Test(arguments: [UInt64(51), 52])
    func aFailingFileThrowsTheOrdinaryErrorAndLeavesNothing(seed: UInt64) throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var paths = try QuoteGenerator.writeDatasetJSON(
            try Self.withoutNulls(P.randomTable(seed: seed, tickers: 16)), toDirectory: dir + "/json")
        // A bad number in one file's rows (whose rows still count), and a later file that is not JSON.
        let bad = dir + "/json/WIKI-BAD.json"
        try Data(#"{"dataset_data":{"column_names":["Date","Open"],"data":[["2020-01-03",1.5],["2020-01-02",1.2.3]]}}"#.utf8)
            .write(to: URL(fileURLWithPath: bad))
        paths.insert(bad, at: 5)
        #expect(QuoteImporter.countDataRows(atPath: bad) == 2)
        paths.append(dir + "/json/missing.json")
        let out = dir + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        for threads in 1 ... 3 {
            var ordinary: ResponseError?
            do { _ = try QuoteImporter.importFiles(paths, threads: threads) } catch { ordinary = error }
            let expected = try #require(ordinary)
            #expect("\(expected)".contains("WIKI-BAD.json"))
            // The missing file cannot be counted, so the pre-count gives up: the caller imports the ordinary way.
            #expect(
                try QuoteImporter.importDirect(paths, ticker: nil, threads: threads, progress: nil, snapshot: out + "/s.snapshot") == nil)
            // Without it, the bad file fails the direct import itself.
            let counted = Array(paths.dropLast())
            #expect(throws: expected, "threads \(threads)") {
                _ = try QuoteImporter.importDirect(counted, ticker: nil, threads: threads, progress: nil, snapshot: out + "/s.snapshot")
            }
            #expect(try Self.names(in: out).isEmpty, "threads \(threads): no snapshot, no temporary")
        }
    }

    @Test func aSnapshotThatCannotBeCreatedLeavesTheErrorToTheOrdinaryPath() throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let paths = try QuoteGenerator.writeDatasetJSON(
            try Self.withoutNulls(P.randomTable(seed: 81, tickers: 5)), toDirectory: dir + "/json")
        let progress = ImportProgress()
        // No such directory: the temporary cannot be made; the ordinary save reports it.
        #expect(
            try QuoteImporter.importDirect(paths, ticker: nil, threads: 2, progress: progress, snapshot: dir + "/none/s.snapshot") == nil)
        #expect(progress.current.files == 0, "nothing counted when it gives up")
        #expect(!FileManager.default.fileExists(atPath: dir + "/none"))
        #expect(throws: SnapshotError.self) { try QuoteImporter.importFiles(paths, threads: 2).save(to: dir + "/none/s.snapshot") }
    }

    @Test func countsTheDataRowsOfEveryGeneratedShape() throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = P.randomTable(seed: 61, tickers: 12)
        for shape in [QuoteGenerator.JSONShape.datasetData, .dataset] {
            let paths = try QuoteGenerator.writeDatasetJSON(table, toDirectory: dir + "/\(shape)", shape: shape)
            for (path, entry) in zip(paths, table.tickers) {
                #expect(QuoteImporter.countDataRows(atPath: path) == entry.rowCount, "\(shape) \(entry.symbol)")
            }
        }
        // Files are read whole to be counted: past the limit, none is counted (the ordinary path runs).
        let all = try QuoteGenerator.writeDatasetJSON(table, toDirectory: dir + "/again")
        let largest = try all.map { try #require(try FileManager.default.attributesOfItem(atPath: $0)[.size] as? Int) }.max()!
        #expect(QuoteImporter.countDataRows(all, threads: 2, largestFile: largest) == table.tickers.map(\.rowCount))
        #expect(QuoteImporter.countDataRows(all, threads: 2, largestFile: largest - 1) == nil)
        let datatable = Fixtures.quandlPath("WIKI-PRICES.datatable.json")
        #expect(QuoteImporter.countDataRows(atPath: datatable) == (try QuoteImporter.decodeFile(datatable).table.rowCount))
        func count(_ text: String) -> Int? { Array(text.utf8).withUnsafeBytes { QuoteImporter.countDataRows($0) } }
        #expect(count(#" {"data" : [ ] }"#) == 0)
        #expect(count(#"{"x":"\"data\":[[1]]","data":[["a"],["b"]]}"#) == 2)
        #expect(count(#"{"data":[["a"],["b"]"#) == nil, "no end")
        #expect(count(#"{"rows":[["a"]]}"#) == nil, "no data key")
        #expect(count("Date,Open\n2020-01-02,1\n\n2020-01-03,2") == 2, "a CSV: its data lines (DirectCSVImportTests)")
        #expect(count("<html>") == nil && count("[1]") == nil, "neither JSON nor CSV")
        #expect(count("PK\u{3}\u{4}ticker,date\n1\n") == nil, "a zip is imported member by member on the ordinary path")
        #expect(count(#"{"data":[["a["],["b"]]}"#) == 3, "a bracket inside a string counts: the import finds the mismatch")
        #expect(count(#"{"data":[["a]]"],["b"]]}"#) == 1, "an end inside a string ends early: the rows do not fit")
    }

    /// A datatable JSON of tickers `symbols`, one row each, with `randomTable`'s columns.
    static func datatable(_ symbols: [String]) -> Data {
        let rows = symbols.enumerated().map { #"["\#($1)","2020-01-0\#($0 + 2)",\#($0).5,2,1,1.5]"# }.joined(separator: ",")
        let columns = ["Open", "High", "Low", "Close"].map { #"{"name":"\#($0)","type":"double"}"# }.joined(separator: ",")
        return Data(
            #"{"datatable":{"data":[\#(rows)],"columns":[{"name":"ticker","type":"String"},{"name":"Date","type":"Date"},\#(columns)]},"meta":{"next_cursor_id":null}}"#
                .utf8)
    }

    @Test func aMiscountedFileIsImportedTheOrdinaryWayWithTheSameBytes() throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let paths = try QuoteGenerator.writeDatasetJSON(
            try Self.withoutNulls(P.randomTable(seed: 71, tickers: 6)), toDirectory: dir + "/json")
        // Counted too high: the rows are placed, but the layout is not the planned one (16 rows
        // more: the padded payloads move, which 2 more might not).
        let over = dir + "/json/over.json"
        try Self.datatable(["X[[[[[[[[1", "X[[[[[[[[2"]).write(to: URL(fileURLWithPath: over))
        #expect(QuoteImporter.countDataRows(atPath: over) == 18)
        // Counted too low: the rows do not fit; nothing is written.
        let under = dir + "/json/under.json"
        try Self.datatable(["Y]]1", "Y2", "Y3"]).write(to: URL(fileURLWithPath: under))
        #expect(QuoteImporter.countDataRows(atPath: under) == 1)
        let out = dir + "/out"
        try FileManager.default.createDirectory(atPath: out, withIntermediateDirectories: true)
        for threads in 1 ... 3 {
            let snapshot = out + "/direct.snapshot"
            let expected = try Self.ordinaryBytes(paths + [over], threads: threads, in: out)
            let result = try #require(
                try QuoteImporter.importDirect(paths + [over], ticker: nil, threads: threads, progress: nil, snapshot: snapshot))
            #expect(!result.inPlace, "threads \(threads)")
            #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == expected, "threads \(threads)")
            try FileManager.default.removeItem(atPath: snapshot)
            let progress = ImportProgress()
            #expect(
                try QuoteImporter.importDirect(paths + [under], ticker: nil, threads: threads, progress: progress, snapshot: snapshot)
                    == nil)
            #expect(progress.current.files == 0 && progress.current.rows == 0, "threads \(threads): nothing counted when it gives up")
            #expect(try Self.names(in: out).isEmpty, "threads \(threads): nothing written")
        }
    }
}
