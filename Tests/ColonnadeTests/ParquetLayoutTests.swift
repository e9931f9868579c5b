@testable import Colonnade
import ColonnadeTestSupport
import Foundation
import Synchronization
import Testing

/// What our Parquet files say about themselves, read from the footer field by field with the
/// field numbers of `parquet.thrift` (apache/parquet-format), not through `ParquetReader`: format
/// version 2, row groups of the requested size, `ticker` a dictionary-encoded UTF-8 byte array,
/// `date` an INT32 with the DATE logical type, value columns of their own type with definition
/// levels, and min/max statistics and null counts per column chunk equal to the data's.
@Suite struct ParquetLayoutTests {
    typealias Fields = [Int16: ThriftValue]

    /// The footer of a Parquet file as a Thrift struct.
    static func footer(_ bytes: [UInt8]) throws -> Fields {
        let n = bytes.count
        #expect(Array(bytes.prefix(4)) == Array("PAR1".utf8) && Array(bytes.suffix(4)) == Array("PAR1".utf8))
        let length = Int(UInt32(bytes[n - 8]) | UInt32(bytes[n - 7]) << 8 | UInt32(bytes[n - 6]) << 16 | UInt32(bytes[n - 5]) << 24)
        let start = n - 8 - length
        return try bytes.withUnsafeBytes { raw in
            var reader = ThriftCompactReader(UnsafeRawBufferPointer(rebasing: raw[start ..< n - 8]), file: "test", fileOffset: start)
            return try reader.readStruct()
        }
    }

    /// The rows of `table` in the order our writer puts them: tickers by their UTF-8 bytes, then
    /// dates ascending (the table's order within a ticker).
    static func fileOrder(_ table: QuoteTable) -> [Int] {
        table.tickers.sorted { Array($0.symbol.utf8).lexicographicallyPrecedes(Array($1.symbol.utf8)) }
            .flatMap { Array($0.rows) }
    }

    static func littleEndian<T: FixedWidthInteger>(_ bytes: [UInt8], as: T.Type) -> T? {
        guard bytes.count == MemoryLayout<T>.size else { return nil }
        return bytes.reversed().reduce(T.zero) { $0 << 8 | T($1) }
    }

    /// A statistics value as the column's numbers (PLAIN encoding, little-endian).
    static func number(_ bytes: [UInt8]?, _ type: ElementType) -> Double? {
        guard let bytes else { return nil }
        switch type {
        case .int32: return littleEndian(bytes, as: UInt32.self).map { Double(Int32(bitPattern: $0)) }
        case .int64: return littleEndian(bytes, as: UInt64.self).map { Double(Int64(bitPattern: $0)) }
        case .float32: return littleEndian(bytes, as: UInt32.self).map { Double(Float(bitPattern: $0)) }
        case .float64: return littleEndian(bytes, as: UInt64.self).map { Double(bitPattern: $0) }
        }
    }

    /// With nulls every page is staged; without them and uncompressed, pages go out straight from
    /// the columns (`ParquetPageEncoder.directPrefix`): both must give the same footer facts.
    @Test(arguments: [ParquetWriter.Compression.none, .snappy], [0.1, 0])
    func theFooterDescribesTheFileAsTheIssueAsks(compression: ParquetWriter.Compression, nullRate: Double) throws {
        var table = TestTables.random(rows: 2_500, tickers: 12, seed: 14, nullRate: nullRate, specialRate: 0.05)
        table.metadata = ["source": "layout test"]
        var writer = ParquetWriter(table: table)
        writer.rowGroupRows = 1_000
        writer.compression = compression
        let out = MemoryInteropOutput()
        try writer.write(to: out)
        let meta = try Self.footer(out.bytes)

        #expect(meta[1]?.int == 2, "format version 2")
        #expect(meta[3]?.int == 2_500, "num_rows")
        // Schema: root, ticker, date, then the value columns.
        let schema = (meta[2]?.list ?? []).compactMap { $0.fields }
        #expect(schema.count == 3 + table.schema.count)
        #expect(schema[0][5]?.int == Int64(2 + table.schema.count), "the root's num_children")
        let ticker = schema[1], date = schema[2]
        #expect(ticker[4]?.string == "ticker" && ticker[1]?.int == 6 && ticker[3]?.int == 0, "BYTE_ARRAY, REQUIRED")
        #expect(ticker[6]?.int == 0 && ticker[10]?.fields?[1] != nil, "UTF8 converted type and STRING logical type")
        #expect(date[4]?.string == "date" && date[1]?.int == 1 && date[3]?.int == 0, "INT32, REQUIRED")
        #expect(date[6]?.int == 6 && date[10]?.fields?[6] != nil, "DATE converted type and DATE logical type")
        for (element, descriptor) in zip(schema[3...], table.schema) {
            let physical: Int64 =
                switch descriptor.type {
                case .int32: 1
                case .int64: 2
                case .float32: 4
                case .float64: 5
                }
            #expect(element[4]?.string == descriptor.identifier && element[1]?.int == physical, "\(descriptor.identifier)")
            #expect(element[3]?.int == 1, "\(descriptor.identifier) is OPTIONAL: nulls through definition levels")
        }
        let keys = (meta[5]?.list ?? []).compactMap { $0.fields?[1]?.string }
        #expect(keys.contains("source"), "table metadata as key-value metadata")

        // Row groups of 1,000 rows, sorted by (ticker, date), with statistics per chunk.
        let groups = (meta[4]?.list ?? []).compactMap { $0.fields }
        #expect(groups.map { $0[3]?.int } == [1_000, 1_000, 500])
        let order = Self.fileOrder(table)
        var checkedNulls = 0, checkedBounds = 0
        for (g, group) in groups.enumerated() {
            let rows = Array(order[g * 1_000 ..< min(order.count, (g + 1) * 1_000)])
            let sorting = (group[4]?.list ?? []).compactMap { $0.fields?[1]?.int }
            #expect(sorting == [0, 1], "sorting_columns: ticker, then date")
            let chunks = (group[1]?.list ?? []).compactMap { $0.fields?[3]?.fields }
            #expect(chunks.count == 2 + table.schema.count)
            for chunk in chunks {
                #expect(chunk[4]?.int == (compression == .snappy ? 1 : 0), "codec")
                #expect(chunk[5]?.int == Int64(rows.count), "num_values")
            }
            // ticker: dictionary-encoded, min and max the first and last symbol by bytes.
            let symbols = rows.map { table.tickers[Int(table.tickerNumber(ofRow: $0))].symbol }
            #expect(chunks[0][11]?.int != nil, "a dictionary page")
            #expect(chunks[0][2]?.list?.compactMap(\.int).contains(8) == true, "RLE_DICTIONARY")
            let sortedSymbols = symbols.map { Array($0.utf8) }.sorted { $0.lexicographicallyPrecedes($1) }
            #expect(chunks[0][12]?.fields?[6]?.binary == sortedSymbols.first)
            #expect(chunks[0][12]?.fields?[5]?.binary == sortedSymbols.last)
            #expect(symbols.map { Array($0.utf8) } == sortedSymbols, "rows in ticker-byte order")
            // date: min and max of the group's days.
            let days = rows.map { table.dates[$0] }
            #expect(Self.number(chunks[1][12]?.fields?[6]?.binary, .int32) == days.min().map(Double.init))
            #expect(Self.number(chunks[1][12]?.fields?[5]?.binary, .int32) == days.max().map(Double.init))
            // Value columns: null count, and min/max of the values that are not null or NaN.
            for (c, descriptor) in table.schema.enumerated() {
                let column = table.columns[c]
                let statistics = try #require(chunks[2 + c][12]?.fields, "\(descriptor.identifier): statistics")
                let values = rows.compactMap { column.doubleValue(at: $0) }.filter { !$0.isNaN }
                #expect(
                    statistics[3]?.int == Int64(rows.count - rows.filter { !column.isNull($0) }.count),
                    "\(descriptor.identifier) null_count")
                checkedNulls += Int(statistics[3]?.int ?? 0)
                let low = Self.number(statistics[6]?.binary, descriptor.type), high = Self.number(statistics[5]?.binary, descriptor.type)
                #expect(
                    low == values.min() && high == values.max(),
                    "\(descriptor.identifier) group \(g): \(String(describing: low))…\(String(describing: high))")
                if let low, low == 0 { #expect(low.sign == .minus, "a zero minimum is written as -0.0") }
                if let high, high == 0 { #expect(high.sign == .plus, "a zero maximum is written as +0.0") }
                checkedBounds += 1
            }
        }
        #expect((checkedNulls > 0) == (nullRate > 0) && checkedBounds == 3 * table.schema.count)
        // And the data itself reads back whole.
        #expect(try out.bytes.withUnsafeBytes { try InteropReader.read($0, file: "memory") } == table)
    }

    /// `foldAll` (the vectorizable min/max of whole pieces) against `fold`, value by value, on
    /// pieces that start with NaN, hold only NaN, mix -0.0 and +0.0, and are empty.
    @Test func foldAllIsFoldValueByValue() {
        var rng = SplitMix64(seed: 1414)
        let specials: [Double] = [.nan, -0.0, 0.0, .infinity, -.infinity, 1, -1]
        var cases: [[Double]] = [[], [.nan], [.nan, .nan, 2, .nan, 1], [0.0, -0.0], [-0.0, 0.0], [.nan, -0.0, 0.0, .nan]]
        for n in [1, 7, 64, 65, 1000] {
            cases.append(
                (0 ..< n).map { _ in rng.next() % 4 == 0 ? specials[Int(rng.next() % 7)] : Double(Int(rng.next() % 2001) - 1000) / 8 })
        }
        for values in cases {
            for cut in Set([0, values.count / 3, values.count]) {
                var lo = 0.0, hi = 0.0, any = false
                var rlo = 0.0, rhi = 0.0, rany = false
                values.withUnsafeBufferPointer { b in
                    ParquetPageEncoder.foldAll(UnsafeBufferPointer(rebasing: b[..<cut]), &lo, &hi, &any)
                    ParquetPageEncoder.foldAll(UnsafeBufferPointer(rebasing: b[cut...]), &lo, &hi, &any)
                }
                for v in values { ParquetPageEncoder.fold(v, &rlo, &rhi, &rany) }
                #expect(any == rany, "\(values)")
                if any {
                    #expect(
                        lo.bitPattern == rlo.bitPattern && hi.bitPattern == rhi.bitPattern,
                        "\(values) cut at \(cut): \(lo)…\(hi), expected \(rlo)…\(rhi)")
                }
            }
        }
    }

    /// A compressed file's chunks are compressed on many threads and written in file order as
    /// they finish (`ParquetWriter.writeChunksInParallel`): the bytes are those of one thread
    /// writing chunk after chunk, for one row group and many, more threads than groups' chunks
    /// finish at once, with and without nulls.
    @Test(arguments: [ParquetWriter.Compression.zstd(level: 1), .lz4Raw], [0.1, 0])
    func chunksCompressedOnManyThreadsAreTheBytesOfOneThread(compression: ParquetWriter.Compression, nullRate: Double) throws {
        let table = TestTables.random(rows: 3_001, tickers: 9, seed: 21, nullRate: nullRate, specialRate: 0.05)
        for (rowGroupRows, threads) in [(300, 2), (375, 2), (1_000, 3), (5_000, 2)] {
            var writer = ParquetWriter(table: table)
            writer.rowGroupRows = rowGroupRows
            writer.pageRows = 128
            writer.compression = compression
            writer.columnThreads = 1
            let serial = MemoryInteropOutput()
            try writer.write(to: serial)
            writer.columnThreads = threads
            let parallel = MemoryInteropOutput()
            try writer.write(to: parallel)
            let groups = (table.rowCount + rowGroupRows - 1) / rowGroupRows
            #expect(try Self.footer(serial.bytes)[4]?.list?.count == groups, "\(groups) row groups")
            #expect(parallel.bytes == serial.bytes, "\(rowGroupRows) rows a group on \(threads) threads")
        }
    }

    /// An output that takes `limit` bytes, then fails every write with ENOSPC.
    final class FullDiskOutput: InteropOutput {
        let limit: Int
        private(set) var position = 0
        init(limit: Int) { self.limit = limit }
        func write(_ bytes: UnsafeRawBufferPointer) throws(InteropError) {
            guard position + bytes.count <= limit else { throw .io(file: "full", operation: "write", errno: ENOSPC) }
            position += bytes.count
        }
    }

    /// Chunks written in order by whichever thread finishes: a write that fails midway is the
    /// write's error (the chunks after it are neither written nor waited for), wherever the disk
    /// fills; and progress is told of each row group once, in file order, with its rows.
    @Test func aFailedWriteOnManyThreadsIsTheErrorAndProgressSeesEachGroupOnce() throws {
        let table = TestTables.random(rows: 4_000, tickers: 7, seed: 5, nullRate: 0.05, specialRate: 0.05)
        var writer = ParquetWriter(table: table)
        writer.rowGroupRows = 250
        writer.pageRows = 100
        writer.compression = .zstd(level: 1)
        writer.columnThreads = 2
        let whole = MemoryInteropOutput()
        try writer.write(to: whole)
        for limit in [0, 4, 1_000, whole.bytes.count / 3, whole.bytes.count - 9] {
            #expect(throws: InteropError.io(file: "full", operation: "write", errno: ENOSPC)) {
                try writer.write(to: FullDiskOutput(limit: limit))
            }
        }
        let seen = Mutex<[Int]>([])
        writer.progress = { rows, bytes in
            #expect(bytes > 0)
            seen.withLock { $0.append(rows) }
        }
        let again = MemoryInteropOutput()
        try writer.write(to: again)
        #expect(again.bytes == whole.bytes)
        #expect(seen.withLock { $0 } == Array(repeating: 250, count: 16))
    }
}
