@testable import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// Tables written by our Arrow IPC and Parquet writers and read back by our readers are equal
/// bit for bit (values, nulls, NaN payloads, ±0, tickers with metadata, column source names).
@Suite("Arrow IPC and Parquet round trips")
struct InteropRoundTripTests {
    static func arrow(_ table: QuoteTable, _ format: ArrowIPCWriter.Format, batchRows: Int = 1 << 20) throws -> QuoteTable {
        let out = MemoryInteropOutput()
        try ArrowIPCWriter(table: table, format: format, batchRows: batchRows).write(to: out)
        return try out.bytes.withUnsafeBytes { try InteropReader.read($0, file: "memory") }
    }

    static func parquet(
        _ table: QuoteTable, rowGroupRows: Int = 1 << 20, compression: ParquetWriter.Compression = .none
    ) throws -> QuoteTable {
        var writer = ParquetWriter(table: table)
        writer.rowGroupRows = rowGroupRows
        writer.compression = compression
        let out = MemoryInteropOutput()
        try writer.write(to: out)
        return try out.bytes.withUnsafeBytes { try InteropReader.read($0, file: "memory") }
    }

    static func tables() -> [(String, QuoteTable)] {
        var out: [(String, QuoteTable)] = []
        for (rows, tickers) in [(1, 1), (63, 2), (64, 1), (65, 3), (511, 7), (4097, 13)] {
            var t = TestTables.random(rows: rows, tickers: tickers, seed: UInt64(rows * 31 + tickers))
            t.metadata = ["source": "test", "rows": "\(rows)"]
            t.updateMetadata(ofTicker: "T0", ["name": "Ticker zero, \"quoted\" ünïcode"])
            out.append(("\(rows) rows, \(tickers) tickers", t))
        }
        out.append(
            (
                "empty",
                QuoteTable(schema: [ColumnDescriptor(name: "Close", type: .float64), ColumnDescriptor(name: "Volume", type: .int64)])
            ))
        out.append(("no columns", QuoteTable()))
        out.append(("generated", QuoteGenerator(tickers: 5, days: 300, seed: 9).makeTable()))
        return out
    }

    @Test("Arrow IPC file and stream round-trip every element type, nulls and special values")
    func arrowRoundTrips() throws {
        for (name, table) in Self.tables() {
            for format in [ArrowIPCWriter.Format.file, .stream] {
                #expect(try Self.arrow(table, format) == table, "\(name) \(format)")
                #expect(try Self.arrow(table, format, batchRows: 64) == table, "\(name) \(format) in 64-row batches")
            }
        }
    }

    @Test("Parquet round-trips every element type, nulls and special values, across row groups and pages")
    func parquetRoundTrips() throws {
        for (name, table) in Self.tables() {
            for compression in [ParquetWriter.Compression.none, .snappy] {
                #expect(try Self.parquet(table, compression: compression) == table, "\(name) \(compression)")
                #expect(
                    try Self.parquet(table, rowGroupRows: 100, compression: compression) == table, "\(name) \(compression) 100-row groups")
            }
        }
    }

    @Test("5,000 tickers round-trip through Arrow and Parquet, ticker order and metadata kept")
    func manyTickers() throws {
        var table = TestTables.random(rows: 20_000, tickers: 5_000, seed: 77, nullRate: 0.01)
        table.updateMetadata(ofTicker: "T4999", ["exchange": "XNYS"])
        #expect(try Self.arrow(table, .file) == table)
        #expect(try Self.arrow(table, .stream) == table)
        #expect(try Self.parquet(table, rowGroupRows: 4096) == table)
    }

    @Test("Parquet pages smaller than a row group keep nulls aligned")
    func smallPages() throws {
        let table = TestTables.random(rows: 1000, tickers: 4, seed: 5, nullRate: 0.3)
        var writer = ParquetWriter(table: table)
        writer.rowGroupRows = 333
        let out = MemoryInteropOutput()
        try writer.write(to: out)
        #expect(try out.bytes.withUnsafeBytes { try ParquetReader.read($0, file: "m") } == table)
    }

    @Test("Partitioned Parquet writes year=YYYY/part-00000.parquet and reads back as the same table")
    func partitionedRoundTrip() throws {
        let table = QuoteGenerator(tickers: 4, days: 700, seed: 11).makeTable()
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-parts-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = try ParquetWriter(table: table).writePartitionedByYear(toDirectory: dir, durable: false)
        #expect(files.map { ($0 as NSString).lastPathComponent } == Array(repeating: "part-00000.parquet", count: files.count))
        #expect(files.count >= 2)
        let years = files.map { URL(fileURLWithPath: $0).deletingLastPathComponent().lastPathComponent }
        #expect(years == years.sorted() && years.allSatisfy { $0.hasPrefix("year=") })
        // No temporaries left behind.
        for y in years {
            let names = try FileManager.default.contentsOfDirectory(atPath: dir + "/" + y)
            #expect(names == ["part-00000.parquet"])
        }
        #expect(try InteropReader.read(path: dir) == table)
        // Each partition holds exactly its year's rows.
        for (file, year) in zip(files, years) {
            let part = try InteropReader.read(path: file)
            let y = Int(year.dropFirst(5))!
            part.dates.withUnsafeBufferPointer { d in
                #expect(d.allSatisfy { Day(daysSinceEpoch: $0).components.year == y })
            }
        }
    }

    /// A probe found the partitioned export dropping rows dated on the last day numbers (while
    /// reporting every row written), and building its year set by walking every year between a
    /// ticker's first and last dates (10 such tickers: 20 s for 20 rows). Partitions now come from
    /// the years present, found by binary search, and every row must land in one.
    @Test("Partitioned Parquet holds the rows at both ends of the date range, in partitions of the years present only")
    func partitionedExportKeepsTheEndsOfTheRangeAndOnlyTheYearsPresent() throws {
        let first = Day.storableDayNumbers.lowerBound, last = Day.storableDayNumbers.upperBound
        // Ten tickers, each with a row on 0001-01-01 … and one on 9999-12-31, and a few between.
        var tickers: [TickerEntry] = []
        var dates: [Int32] = []
        for t in 0 ..< 10 {
            let days: [Int32] = t % 2 == 0 ? [first, first + 400, 16_000 + Int32(t), last] : [first + 1, last - 1, last]
            tickers.append(TickerEntry(symbol: "T\(t)", firstRow: dates.count, rowCount: days.count))
            dates += days
        }
        let close = Column<Double>(dates.indices.map { Double($0) * 0.25 })
        let table = try QuoteTable(
            schema: [ColumnDescriptor(name: "close", type: .float64)], columns: [.float64(close)],
            dates: Column(dates), tickers: tickers)
        #expect(ParquetWriter.yearsPresent(in: table) == [1, 2, 2013, 9999])

        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-ends-\(UUID().uuidString)").path
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let files = try ParquetWriter(table: table).writePartitionedByYear(toDirectory: dir, durable: false)
        #expect(
            files.map { URL(fileURLWithPath: $0).deletingLastPathComponent().lastPathComponent }
                == ["year=1", "year=2", "year=2013", "year=9999"])
        let back = try InteropReader.read(path: dir)
        #expect(back == table)
        #expect(back.rowCount == dates.count)
    }

    @Test("Parquet rows are sorted by ticker bytes, then date, with per-chunk statistics")
    func parquetOrderAndStatistics() throws {
        let table = TestTables.random(rows: 300, tickers: 12, seed: 3, nullRate: 0)
        let out = MemoryInteropOutput()
        var writer = ParquetWriter(table: table)
        writer.rowGroupRows = 100
        try writer.write(to: out)
        // Read back without Colonnade's metadata key: tickers then come in file (sorted) order.
        let text = String(decoding: out.bytes, as: UTF8.self)
        #expect(text.contains("T10"))
        let imported = try out.bytes.withUnsafeBytes { try ParquetReader.read($0, file: "m") }
        #expect(imported.tickers.map(\.symbol) == table.tickers.map(\.symbol))
    }

    @Test("Snappy round-trips random, repetitive and empty inputs")
    func snappy() throws {
        var rng = SplitMix64(seed: 1)
        var inputs: [[UInt8]] = [[], [1], Array(repeating: 7, count: 100_000), Array("abcabcabcabd".utf8)]
        inputs.append((0 ..< 70_000).map { _ in UInt8(truncatingIfNeeded: rng.next()) })
        inputs.append((0 ..< 200_000).map { UInt8(truncatingIfNeeded: $0 / 3 + Int(rng.next() % 2)) })
        for input in inputs {
            let compressed = input.withUnsafeBytes { Snappy.compress($0) }
            let back = try compressed.withUnsafeBytes { try Snappy.decompress($0, file: "memory", fileOffset: 0) }
            #expect(back == input)
        }
    }
}
