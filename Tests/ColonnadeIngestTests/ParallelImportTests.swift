import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
@testable import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

/// The parallel import against the slow path (each file decoded alone, upserted one at a time),
/// compared as saved snapshot bytes, and the all-or-nothing rule with errors from any thread.
@Suite("Importing on several threads")
struct ParallelImportTests {
    /// A random table with nulls, ±0, tiny and huge values, tickers of 0 to 70 days.
    static func randomTable(seed: UInt64, tickers: Int, columns: Int = 4, firstSymbol: Int = 0) -> QuoteTable {
        var rng = SplitMix64(seed: seed)
        let schema = (0 ..< columns).map {
            ColumnDescriptor(name: ["Open", "High", "Low", "Close", "Volume", "Adj. Close"][$0 % 6], type: .float64)
        }
        var dates: [Int32] = []
        var values = [[Double?]](repeating: [], count: columns)
        var entries: [TickerEntry] = []
        for t in 0 ..< tickers {
            let days = rng.below(71)
            entries.append(TickerEntry(symbol: "T\(firstSymbol + t)", firstRow: dates.count, rowCount: days))
            var day = Int32(10_000 + rng.below(500))
            for _ in 0 ..< days {
                dates.append(day)
                day += Int32(1 + rng.below(4))
                for c in 0 ..< columns {
                    let value: Double?
                    switch rng.below(12) {
                    case 0: value = nil
                    case 1: value = -0.0
                    case 2: value = Double(bitPattern: rng.next() & 0x000F_FFFF_FFFF_FFFF)  // subnormal
                    case 3: value = Double(rng.below(10_000_000))
                    default: value = (Double(rng.below(1 << 30)) / 997.0) * (rng.chance(5) ? -1 : 1)
                    }
                    values[c].append(value)
                }
            }
        }
        return try! QuoteTable(schema: schema, columns: values.map { .float64(Column($0)) }, dates: Column(dates), tickers: entries)
    }

    static func snapshotBytes(_ table: QuoteTable, in dir: String) throws -> Data {
        let path = dir + "/bytes-\(UUID().uuidString).snapshot"
        try table.save(to: path, durable: false)
        defer { try? FileManager.default.removeItem(atPath: path) }
        return try Data(contentsOf: URL(fileURLWithPath: path))
    }

    /// JSON per ticker, a time-series CSV, a datatable CSV overlapping the JSON tickers (later
    /// rows win), and a zip of two JSON responses: every kind of input in one import.
    static func writeMixedInputs(in dir: String, seed: UInt64) throws -> [String] {
        let json = randomTable(seed: seed, tickers: 12)
        var paths = try QuoteGenerator.writeDatasetJSON(json, toDirectory: dir + "/json")
        let series = randomTable(seed: seed + 1, tickers: 2, firstSymbol: 100)
        paths += try QuoteGenerator.writeTimeSeriesCSV(series, toDirectory: dir + "/series")
        let overlapping = randomTable(seed: seed + 2, tickers: 20, firstSymbol: 6)
        try QuoteGenerator.writeDatatableCSV(overlapping, to: dir + "/PRICES.csv")
        paths.append(dir + "/PRICES.csv")
        let zipped = randomTable(seed: seed + 3, tickers: 2, firstSymbol: 200)
        let zip = ZipBuilder([
            .stored("WIKI-T200.json", QuoteGenerator.datasetJSON(zipped, ticker: 0)),
            .stored("WIKI-T201.json", QuoteGenerator.datasetJSON(zipped, ticker: 1)),
        ]).bytes()
        try Data(zip).write(to: URL(fileURLWithPath: dir + "/more.zip"))
        paths.insert(dir + "/more.zip", at: 3)
        return paths
    }

    /// The slow path: each file decoded alone, then upserted one at a time.
    static func slowImport(_ paths: [String]) throws -> QuoteTable {
        var table = QuoteTable()
        for path in paths {
            if QuoteImporter.isZipFile(path) {
                table.upsert(try ArchiveImporter.importArchive(atPath: path, options: .init(threads: 1)))
            } else {
                table.upsert(try QuoteImporter.decodeFile(path).table)
            }
        }
        return table
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func parallelImportSavesTheSameBytesAsTheSlowPathForOneToFourThreads(seed: UInt64) throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let paths = try Self.writeMixedInputs(in: dir, seed: seed)
        var reference = try Self.slowImport(paths)
        reference.shrinkToFit()
        let expected = try Self.snapshotBytes(reference, in: dir)
        for threads in 1 ... 4 {
            // Small pieces and a small threshold: the datatable CSV is decoded in pieces too.
            let imported = try QuoteImporter.importFiles(
                paths, ticker: nil, archiveOptions: .init(threads: threads), threads: threads,
                chunkSize: 257, largeFileSize: 1, progress: nil)
            #expect(imported == reference, "threads \(threads)")
            #expect(try Self.snapshotBytes(imported, in: dir) == expected, "threads \(threads)")
        }
    }

    @Test func progressCountsEveryFileRowAndByte() throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = Self.randomTable(seed: 9, tickers: 10)
        let paths = try QuoteGenerator.writeDatasetJSON(table, toDirectory: dir)
        let progress = ImportProgress()
        let imported = try QuoteImporter.importFiles(paths, threads: 3, progress: progress)
        let bytes = try paths.reduce(0) { $0 + (try FileManager.default.attributesOfItem(atPath: $1)[.size] as! Int) }
        #expect(progress.current.files == paths.count)
        #expect(progress.current.rows == imported.rowCount)
        #expect(progress.current.bytes == bytes)
    }

    /// A bad number at a known line and column in one file of many.
    static func corrupt(_ path: String, occurrence: Int = 0) throws -> (line: Int, column: Int) {
        var bytes = [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
        // The n-th `,` followed by a digit gets an `x` after it: `,x12.5`.
        var seen = 0
        for i in bytes.indices.dropLast()
        where bytes[i] == UInt8(ascii: ",") && (UInt8(ascii: "0") ... UInt8(ascii: "9")).contains(bytes[i + 1]) {
            if seen == occurrence {
                bytes.insert(UInt8(ascii: "x"), at: i + 1)
                try Data(bytes).write(to: URL(fileURLWithPath: path))
                let before = bytes[..<(i + 1)]
                let line = before.filter { $0 == UInt8(ascii: "\n") }.count + 1
                let lineStart = (before.lastIndex(of: UInt8(ascii: "\n")) ?? -1) + 1
                return (line, i + 1 - lineStart + 1)
            }
            seen += 1
        }
        Issue.record("no number to corrupt in \(path)")
        return (0, 0)
    }

    @Test(arguments: [0, 7, 19])
    func aBadFileAmongManyNamesItsLineAndColumnForEveryThreadCount(bad: Int) throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = Self.randomTable(seed: UInt64(bad), tickers: 24).filteringEmptyTickers()
        var paths = try QuoteGenerator.writeDatasetJSON(table, toDirectory: dir + "/json")
        try QuoteGenerator.writeDatatableCSV(table, to: dir + "/ALL.csv")
        paths.append(dir + "/ALL.csv")
        let (line, column) = try Self.corrupt(paths[bad])
        // A later file is bad too: the earlier one is the error, whichever thread got there first.
        _ = try Self.corrupt(paths[paths.count - 1], occurrence: 5)
        for threads in 1 ... 4 {
            var target = Self.randomTable(seed: 77, tickers: 3)
            let before = target
            do {
                try QuoteImporter.importFiles(paths, threads: threads, into: &target)
                Issue.record("imported a corrupt file with \(threads) threads")
            } catch {
                guard case let .decoding(decodeError) = error, let p = decodeError.position else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(p.source == QuoteImporter.fileName(of: paths[bad]), "threads \(threads)")
                #expect(p.line == line && p.column == column, "threads \(threads): \(p)")
            }
            #expect(target == before)
        }
    }

    @Test func aBadPieceOfALargeCSVGivesTheWholeFilesError() throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = Self.randomTable(seed: 5, tickers: 30)
        try QuoteGenerator.writeDatatableCSV(table, to: dir + "/ALL.csv")
        let (line, column) = try Self.corrupt(dir + "/ALL.csv", occurrence: 400)
        for threads in 1 ... 4 {
            do {
                _ = try QuoteImporter.importFiles(
                    [dir + "/ALL.csv"], ticker: nil, archiveOptions: .init(), threads: threads,
                    chunkSize: 100, largeFileSize: 1, progress: nil)
                Issue.record("imported a corrupt CSV")
            } catch {
                guard case let .decoding(decodeError) = error, let p = decodeError.position else {
                    Issue.record("\(error)")
                    continue
                }
                #expect(p.source == "ALL.csv" && p.line == line && p.column == column, "threads \(threads): \(p)")
            }
        }
    }
}

extension QuoteTable {
    /// The table without its tickers that have no rows (a writer writes no file for them... or an
    /// empty one; tests that count lines want neither).
    func filteringEmptyTickers() -> QuoteTable {
        let kept = tickers.filter { $0.rowCount > 0 }
        var next = 0
        let entries = kept.map { t -> TickerEntry in
            defer { next += t.rowCount }
            return TickerEntry(symbol: t.symbol, firstRow: next, rowCount: t.rowCount)
        }
        return try! QuoteTable(schema: schema, columns: columns, dates: dates, tickers: entries)
    }
}
