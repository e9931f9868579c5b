import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
@testable import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

/// A fresh import of plain files decoded straight into the final columns (`importPlacing`,
/// `ColumnAssembler`) against the slow path (each file decoded alone, upserted one at a time),
/// compared as tables and as saved snapshot bytes; and the inputs that must fall back to merging.
@Suite("Importing straight into the final columns")
struct PlacedImportTests {
    typealias P = ParallelImportTests

    /// Per-ticker JSON (nulls, ±0, subnormals), a time-series CSV directory, a datatable CSV of
    /// other tickers, and one ticker split over two files with later dates in the second.
    static func writeDistinctInputs(in dir: String, seed: UInt64) throws -> [String] {
        var paths = try QuoteGenerator.writeDatasetJSON(P.randomTable(seed: seed, tickers: 12), toDirectory: dir + "/json")
        paths += try QuoteGenerator.writeTimeSeriesCSV(
            P.randomTable(seed: seed + 1, tickers: 3, firstSymbol: 100),
            toDirectory: dir + "/series")
        try QuoteGenerator.writeDatatableCSV(P.randomTable(seed: seed + 2, tickers: 9, firstSymbol: 300), to: dir + "/PRICES.csv")
        paths.append(dir + "/PRICES.csv")
        // T500's first days, then its later days: the second continues the first across the seam.
        let whole = P.randomTable(seed: seed + 3, tickers: 1, firstSymbol: 500).filteringEmptyTickers()
        if whole.rowCount >= 2 {
            let half = whole.rowCount / 2
            for (name, rows) in [("early", 0 ..< half), ("late", half ..< whole.rowCount)] {
                let part = try QuoteTable(
                    schema: whole.schema, columns: whole.columns.map { .float64($0.convertedToFloat64().gathering(Array(rows))) },
                    dates: whole.dates.gathering(Array(rows)),
                    tickers: [TickerEntry(symbol: "T500", firstRow: 0, rowCount: rows.count)])
                try QuoteGenerator.writeDatatableCSV(part, to: dir + "/\(name).csv")
                paths.append(dir + "/\(name).csv")
            }
        }
        return paths
    }

    @Test(arguments: [UInt64(11), 12, 13])
    func placedImportSavesTheSameBytesAsTheSlowPathForOneToFourThreads(seed: UInt64) throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let paths = try Self.writeDistinctInputs(in: dir, seed: seed)
        var reference = try P.slowImport(paths)
        reference.shrinkToFit()
        let expected = try P.snapshotBytes(reference, in: dir)
        #expect(reference.columns.contains { $0.validity != nil }, "the inputs hold nulls")
        for threads in 1 ... 4 {
            // Taken: these files concatenate.
            let placed = try #require(try QuoteImporter.importPlacing(paths, ticker: nil, threads: threads, progress: nil))
            #expect(placed == reference, "threads \(threads)")
            #expect(try P.snapshotBytes(placed, in: dir) == expected, "threads \(threads)")
            let imported = try QuoteImporter.importFiles(paths, threads: threads)
            #expect(try P.snapshotBytes(imported, in: dir) == expected, "threads \(threads)")
        }
    }

    @Test func overlappingTickersOrOtherColumnsFallBackToMergingWithTheSameResult() throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let json = try QuoteGenerator.writeDatasetJSON(P.randomTable(seed: 21, tickers: 8), toDirectory: dir + "/json")
        // T3…T10 again, later rows winning.
        try QuoteGenerator.writeDatatableCSV(P.randomTable(seed: 22, tickers: 8, firstSymbol: 3), to: dir + "/again.csv")
        // Three value columns instead of four.
        try QuoteGenerator.writeDatatableCSV(P.randomTable(seed: 23, tickers: 2, columns: 3, firstSymbol: 50), to: dir + "/narrow.csv")
        for paths in [json + [dir + "/again.csv"], json + [dir + "/narrow.csv"], [dir + "/narrow.csv"] + json] {
            var reference = try P.slowImport(paths)
            reference.shrinkToFit()
            let expected = try P.snapshotBytes(reference, in: dir)
            for threads in [1, 3] {
                #expect(try QuoteImporter.importPlacing(paths, ticker: nil, threads: threads, progress: nil) == nil)
                let progress = ImportProgress()
                let imported = try QuoteImporter.importFiles(paths, threads: threads, progress: progress)
                #expect(imported == reference)
                #expect(try P.snapshotBytes(imported, in: dir) == expected)
                // Counted once, though placing started before it gave up.
                #expect(progress.current.files == paths.count)
                #expect(progress.current.rows <= imported.rowCount + 8 * 70)
            }
        }
    }

    @Test func theAssemblerGivesBackItsReservationAndKeepsNulls() throws {
        let buffersTable = P.randomTable(seed: 31, tickers: 1).filteringEmptyTickers()
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let paths = try QuoteGenerator.writeDatasetJSON(buffersTable, toDirectory: dir)
        let rows = try QuoteImporter.withContents(ofFile: paths[0]) { bytes throws(ResponseError) in
            try QuoteDecoder.decodeRows(bytes, ticker: "T0", source: "T0.json")
        }
        let assembler = try #require(
            ColumnAssembler(
                valueNames: rows.valueNames, dateColumnName: rows.dateColumnName,
                rowCapacity: 1_000_000))
        #expect(assembler.accepts(rows, at: 0))
        #expect(!assembler.accepts(rows, at: 1_000_000 - rows.rowCount + 1))
        assembler.place(rows, at: 0)
        let table = try assembler.finish(rowCount: rows.rowCount, tickers: rows.tickers)
        #expect(table == buffersTable)
        for column in table.columns {
            // The padded length exactly: nothing left of the million-row reservation.
            let values = column.convertedToFloat64()
            #expect(values.capacity == ColumnStorage.paddedByteCount(max(8, values.count * 8)) / 8)
        }
        #expect(table.dates.capacity == ColumnStorage.paddedByteCount(max(16, table.dates.count * 4)) / 4)
        #expect(table.hasSummaries)
    }

    /// A datatable CSV cut into pieces of every size from a few rows up, placed straight into
    /// the final columns, equals the whole-file decode for 1 to 4 threads; rows of one ticker in
    /// two non-adjacent places fall back to merging with the same result.
    @Test func aLargeCSVPlacedInPiecesEqualsTheWholeDecode() throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = P.randomTable(seed: 41, tickers: 25).filteringEmptyTickers()
        try QuoteGenerator.writeDatatableCSV(table, to: dir + "/ALL.csv")
        // The later half of one ticker's rows moved after everything else: that ticker is in two
        // places, so not one concatenation (the table is the same: rows are sorted on import).
        let split = try #require(table.tickers.dropLast().first { $0.rowCount >= 2 })
        var text = try String(contentsOfFile: dir + "/ALL.csv", encoding: .utf8)
        var lines = text.split(separator: "\n")
        let first = try #require(lines.firstIndex { $0.hasPrefix(split.symbol + ",") })
        let later = first + split.rowCount / 2 ..< first + split.rowCount
        let tail = Array(lines[later])
        lines.removeSubrange(later)
        text = (lines + tail).joined(separator: "\n") + "\n"
        try text.write(toFile: dir + "/SCATTERED.csv", atomically: false, encoding: .utf8)
        for (name, placeable) in [("ALL.csv", true), ("SCATTERED.csv", false)] {
            var reference = try QuoteImporter.decodeFile(dir + "/" + name).table
            reference.shrinkToFit()
            let expected = try P.snapshotBytes(reference, in: dir)
            for chunkSize in [100, 1_000, 10_000] {
                for threads in 1 ... 4 {
                    let placed = try QuoteImporter.withContents(ofFile: dir + "/" + name) { bytes throws(ResponseError) -> QuoteTable? in
                        guard
                            let (input, layout, survey) = QuoteImporter.pieceLayout(
                                bytes, source: name, threads: threads,
                                chunkSize: chunkSize)
                        else { return nil }
                        #expect(survey.cuts.count > 1 || chunkSize == 10_000)
                        return QuoteImporter.placedPieces(input, layout: layout, cuts: survey.cuts, threads: threads, progress: nil)
                    }
                    #expect((placed != nil) == placeable, "\(name) \(chunkSize) \(threads)")
                    if let placed { #expect(try P.snapshotBytes(placed, in: dir) == expected, "\(name) \(chunkSize) \(threads)") }
                    let imported = try QuoteImporter.importFiles(
                        [dir + "/" + name], ticker: nil, archiveOptions: .init(), threads: threads,
                        chunkSize: chunkSize, largeFileSize: 1, progress: nil)
                    #expect(try P.snapshotBytes(imported, in: dir) == expected, "\(name) \(chunkSize) \(threads)")
                }
            }
        }
    }
}
