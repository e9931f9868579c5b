@testable import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// A Parquet file decoded on 1, 2 or 3 threads (`threads:`, column chunks decoded at once; an
/// Arrow file's record batches likewise; see ARCHITECTURE.md, Arrow and Parquet inputs) gives the
/// same table, bit for bit, across row group
/// and page boundaries that are not multiples of 64 rows, with nulls and every codec; a damaged
/// file gives the same error naming the file, column, row group and page, the first in file
/// order whichever thread finds it. Counted, not timed: more than one thread really ran.
@Suite struct ParquetParallelDecodeTests {
    static func file(
        _ table: QuoteTable, compression: ParquetWriter.Compression, rowGroupRows: Int, pageRows: Int
    ) throws -> [UInt8] {
        var writer = ParquetWriter(table: table)
        writer.rowGroupRows = rowGroupRows
        writer.pageRows = pageRows
        writer.compression = compression
        let out = MemoryInteropOutput()
        try writer.write(to: out)
        return out.bytes
    }

    static func read(_ bytes: [UInt8], threads: Int) throws(InteropError) -> QuoteTable {
        try withInteropBytes(bytes) { b throws(InteropError) in try InteropReader.read(b, file: "p.parquet", threads: threads) }
    }

    static func error(_ bytes: [UInt8], threads: Int) -> InteropError? {
        do throws(InteropError) {
            _ = try read(bytes, threads: threads)
            return nil
        } catch {
            return error
        }
    }

    @Test(
        "The same table at 1, 2 and 3 threads, across row groups and pages, with and without nulls",
        arguments: [ParquetWriter.Compression.none, .snappy, .zstd(level: 3), .lz4Raw], [0.0, 0.1])
    func sameTableAtEveryThreadCount(compression: ParquetWriter.Compression, nullRate: Double) throws {
        let table = TestTables.random(rows: 3_001, tickers: 11, seed: 91, nullRate: nullRate, specialRate: 0.05)
        // Row groups of 700 rows (not a multiple of 64: validity words straddle them), pages of 250.
        let bytes = try Self.file(table, compression: compression, rowGroupRows: 700, pageRows: 250)
        #expect(try ParquetLayoutTests.footer(bytes)[4]?.list?.count == 5)
        let one = try Self.read(bytes, threads: 1)
        #expect(one == table)
        for threads in [2, 3] {
            let (many, regions) = try ParallelRegions.counted { try Self.read(bytes, threads: threads) }
            #expect(many == one, "\(threads) threads, \(compression), nulls \(nullRate)")
            #expect(regions >= 1, "\(threads) threads ran in parallel")
        }
        let (_, regions) = try ParallelRegions.counted { try Self.read(bytes, threads: 1) }
        #expect(regions == 0, "one thread stays on the caller's thread")
    }

    @Test(
        "One ZSTD page of PLAIN values without nulls per chunk (as Polars writes): decoded into the rows, borrowing the previous chunk's last rows once it is done, the same table at 1, 2 and 3 threads"
    )
    func onePagePerChunkAtEveryThreadCount() throws {
        let table = TestTables.random(rows: 4_007, tickers: 7, seed: 17, nullRate: 0, specialRate: 0.05)
        // 41 row groups of 98 rows (the last one shorter), one page each.
        let bytes = try Self.file(table, compression: .zstd(level: 3), rowGroupRows: 98, pageRows: 98)
        #expect(try ParquetLayoutTests.footer(bytes)[4]?.list?.count == 41)
        #expect(try Self.read(bytes, threads: 1) == table)
        for threads in [2, 3] {
            for _ in 0 ..< 5 { #expect(try Self.read(bytes, threads: threads) == table, "\(threads) threads") }
        }
    }

    @Test(
        "Column memory reused from freed columns full of garbage is not zeroed first: every row is written, a null as zeros, at 1 and 2 threads"
    )
    func nullsAreZerosInReusedColumnMemory() throws {
        // 270 011 rows: 4-byte columns (dates, tickers, i32, f32) of about 1.08 MB and 8-byte ones
        // of 2.16 MB, both reusable mappings (1 MiB or more) of sizes no other test uses.
        let rows = 270_011
        let table = TestTables.random(rows: rows, tickers: 9, seed: 29, nullRate: 0.2, specialRate: 0.05)
        let bytes = try Self.file(table, compression: .none, rowGroupRows: 100_000, pageRows: 30_000)
        let narrow = ColumnStorage.paddedByteCount(rows * 4), wide = ColumnStorage.paddedByteCount(rows * 8)
        for threads in [1, 2] {
            // Freed mappings of exactly the reader's sizes, full of garbage, for it to take.
            var garbage =
                (0 ..< 4).compactMap { _ in ColumnStorage(reusableByteCount: rows * 4) }
                + (0 ..< 3).compactMap { _ in ColumnStorage(reusableByteCount: rows * 8) }
            for g in garbage { g.base.initializeMemory(as: UInt8.self, repeating: 0xA5, count: g.byteCapacity) }
            garbage = []
            #expect(ReusedMappings.keptCount(capacity: narrow) >= 4 && ReusedMappings.keptCount(capacity: wide) >= 3)
            let read = try Self.read(bytes, threads: threads)
            // The reader took them (its table's columns are views of its storages; the tickers'
            // are copied out, and their storage is back).
            #expect(ReusedMappings.keptCount(capacity: narrow) <= 1, "\(threads) threads")
            #expect(ReusedMappings.keptCount(capacity: wide) == 0, "\(threads) threads")
            #expect(read == table, "\(threads) threads")
            var nulls = 0
            for name in ["i32", "i64", "f32", "f64", "Adj. F64"] {
                var nonZero = 0
                switch read.column(named: name) {
                case .int32(let c)?: nonZero = Self.nonZeroNulls(c, nulls: &nulls)
                case .int64(let c)?: nonZero = Self.nonZeroNulls(c, nulls: &nulls)
                case .float32(let c)?: nonZero = Self.nonZeroNulls(c, nulls: &nulls)
                case .float64(let c)?: nonZero = Self.nonZeroNulls(c, nulls: &nulls)
                default: Issue.record("no column \(name)")
                }
                #expect(nonZero == 0, "\(name), \(threads) threads: nulls that are not zeros")
            }
            #expect(nulls > rows / 2, "the table has nulls in every column")
        }
    }

    /// The null rows of `column` whose bytes are not all zero; `nulls` counts the null rows.
    static func nonZeroNulls<T: ColumnElement>(_ column: Column<T>, nulls: inout Int) -> Int {
        column.withUnsafeBufferPointer { values in
            let bytes = UnsafeRawBufferPointer(values)
            var nonZero = 0
            for row in 0 ..< column.count where column.isNull(row) {
                nulls += 1
                let size = MemoryLayout<T>.stride
                if !bytes[row * size ..< (row + 1) * size].allSatisfy({ $0 == 0 }) { nonZero += 1 }
            }
            return nonZero
        }
    }

    @Test("Every interop fixture (Parquet and Arrow) reads the same at 1 and 3 threads (or fails the same way)")
    func fixturesAtEveryThreadCount() throws {
        let dir = Fixtures.directory.appendingPathComponent("interop")
        let names = try FileManager.default.contentsOfDirectory(atPath: dir.path).filter {
            $0.hasSuffix(".parquet") || $0.hasSuffix(".arrow") || $0.hasSuffix(".arrows") || $0.hasSuffix(".feather")
        }.sorted()
        #expect(names.count >= 20)
        for name in names {
            let bytes = try [UInt8](Data(contentsOf: dir.appendingPathComponent(name)))
            var results: [Result<QuoteTable, InteropError>] = []
            for threads in [1, 3] {
                do throws(InteropError) {
                    results.append(.success(try Self.read(bytes, threads: threads)))
                } catch {
                    results.append(.failure(error))
                }
            }
            switch (results[0], results[1]) {
            case (.success(let a), .success(let b)): #expect(a == b, "\(name)")
            case (.failure(let a), .failure(let b)): #expect(a == b, "\(name)")
            default: Issue.record("\(name): \(results[0]) at 1 thread, \(results[1]) at 3")
            }
        }
    }

    /// The offset of the first data page body of column `column` in row group `group`, and its
    /// compressed length, from the footer and the page header.
    static func pageBody(_ bytes: [UInt8], group: Int, column: Int) throws -> Range<Int> {
        let footer = try ParquetLayoutTests.footer(bytes)
        let meta = try #require(footer[4]?.list?[group].fields?[1]?.list?[column].fields?[3]?.fields)
        let start = Int(try #require(meta[9]?.int))
        return try bytes.withUnsafeBytes { raw in
            var reader = ThriftCompactReader(UnsafeRawBufferPointer(rebasing: raw[start...]), file: "t", fileOffset: start)
            let header = try reader.readStruct()
            let body = start + reader.position
            return body ..< body + Int(try #require(header[3]?.int))
        }
    }

    @Test("A damaged page gives the same error at every thread count, naming column, row group and page; the first in file order wins")
    func damagedPagesGiveTheSameError() throws {
        let table = TestTables.random(rows: 3_001, tickers: 11, seed: 92, nullRate: 0, specialRate: 0)
        for compression in [ParquetWriter.Compression.snappy, .zstd(level: 3)] {
            let clean = try Self.file(table, compression: compression, rowGroupRows: 700, pageRows: 250)
            // Column 2 is the first value column (after ticker and date); damage it in row group 3,
            // then also a later column in row group 1 and a value column in row group 4.
            var once = clean
            let late = try Self.pageBody(clean, group: 3, column: 2)
            for i in late { once[i] = 0xFF }
            let expected = try #require(Self.error(once, threads: 1))
            guard case let .malformed(file, _, detail) = expected else {
                Issue.record("\(compression): \(expected)")
                continue
            }
            #expect(file == "p.parquet")
            #expect(detail.contains("row group 3, page 0"), "\(compression): \(detail)")
            #expect(detail.contains("column '\(table.schema[0].name)'"), "\(compression): \(detail)")
            for threads in [2, 3] { #expect(Self.error(once, threads: threads) == expected, "\(compression), \(threads) threads") }
            var twice = once
            for i in try Self.pageBody(clean, group: 1, column: 4) { twice[i] = 0xFF }
            for i in try Self.pageBody(clean, group: 4, column: 2) { twice[i] = 0xFF }
            let first = try #require(Self.error(twice, threads: 1))
            if case let .malformed(_, _, detail) = first {
                #expect(detail.contains("column '\(table.schema[2].name)', row group 1, page 0"), "\(compression): \(detail)")
            } else {
                Issue.record("\(compression): \(first)")
            }
            for threads in [2, 3] { #expect(Self.error(twice, threads: threads) == first, "\(compression), \(threads) threads") }
        }
    }

    @Test("Arrow files: the same table at 1, 2 and 3 threads (record batches decoded at once), and the same first error")
    func arrowBatchesAtEveryThreadCount() throws {
        let table = TestTables.random(rows: 1_001, tickers: 9, seed: 93, nullRate: 0.1, specialRate: 0.05)
        let out = MemoryInteropOutput()
        try ArrowIPCWriter(table: table, format: .file, batchRows: 100).write(to: out)
        let bytes = out.bytes
        func read(_ b: [UInt8], _ threads: Int) -> Result<QuoteTable, InteropError> {
            do throws(InteropError) {
                return .success(
                    try withInteropBytes(b) { p throws(InteropError) in try InteropReader.read(p, file: "a.arrow", threads: threads) })
            } catch {
                return .failure(error)
            }
        }
        #expect(try read(bytes, 1).get() == table)
        for threads in [2, 3] {
            let (result, regions) = ParallelRegions.counted { read(bytes, threads) }
            #expect(try result.get() == table, "\(threads) threads")
            #expect(regions >= 1)
        }
        // Damage anywhere (a byte changed every 61 bytes, one at a time): the same table or the
        // same error (the first failing batch in file order) at 1 and 3 threads.
        var failures = 0
        for position in stride(from: 8, to: bytes.count - 10, by: 61) {
            var damaged = bytes
            damaged[position] ^= 0x5A
            let one = read(damaged, 1), three = read(damaged, 3)
            switch (one, three) {
            case (.success(let a), .success(let b)): #expect(a == b, "byte \(position)")
            case (.failure(let a), .failure(let b)):
                #expect(a == b, "byte \(position)")
                failures += 1
            default: Issue.record("byte \(position): \(one) at 1 thread, \(three) at 3")
            }
        }
        #expect(failures > 0)
    }

    @Test(
        "Arrow files read whole: each field's values land at their rows whatever the batches' sizes, nulls only where a batch had them",
        arguments: [1, 63, 64, 100, 1_000])
    func arrowBatchesIntoOneColumnPerField(batchRows: Int) throws {
        // Nulls in a few batches only (rows 130-134 and the last row of i32), none in i64, and
        // every type the reader converts to (Int32, Int64, Float, Double).
        let rows = 1_000
        var i32 = Column<Int32>(), i64 = Column<Int64>(), f32 = Column<Float>(), f64 = Column<Double>()
        var rng = SplitMix64(seed: 97)
        for r in 0 ..< rows {
            if (130 ..< 135).contains(r) || r == rows - 1 { i32.appendNull() } else { i32.append(Int32(r)) }
            i64.append(Int64(r) * 1_000_000_007)
            if r == 7 { f32.appendNull() } else { f32.append(Float(r) / 4) }
            f64.append(Double(rng.next() % 100_000) / 100)
        }
        let table = try QuoteTable(
            sortingRows: [TickerEntry(symbol: "A"), TickerEntry(symbol: "B")],
            rowTickers: (0 ..< rows).map { Int32($0 * 2 / rows) }, dates: Column((0 ..< rows).map { Int32(10_000 + $0 % 500) }),
            schema: [
                ColumnDescriptor(name: "i32", type: .int32), ColumnDescriptor(name: "i64", type: .int64),
                ColumnDescriptor(name: "f32", type: .float32), ColumnDescriptor(name: "f64", type: .float64),
            ],
            columns: [AnyColumn(i32), AnyColumn(i64), AnyColumn(f32), AnyColumn(f64)])
        let out = MemoryInteropOutput()
        try ArrowIPCWriter(table: table, format: .file, batchRows: batchRows).write(to: out)
        for threads in [1, 2] {
            let read = try withInteropBytes(out.bytes) { p throws(InteropError) in
                try InteropReader.read(p, file: "a.arrow", threads: threads)
            }
            #expect(read == table, "\(batchRows)-row batches, \(threads) threads")
            #expect(read.columns[1].validity == nil, "no nulls in i64: no validity")
            #expect(read.columns[0].validity?.nonzeroBitCount == rows - 6)
        }
    }

    /// The bytes the Snappy format says `input` decodes to, one element and one byte at a time.
    static func referenceSnappy(_ input: [UInt8]) -> [UInt8]? {
        var i = 0, length = 0, shift = 0
        while true {
            guard i < input.count else { return nil }
            length |= Int(input[i] & 0x7F) << shift
            shift += 7
            i += 1
            if input[i - 1] < 0x80 { break }
        }
        var out: [UInt8] = []
        while i < input.count {
            let tag = Int(input[i])
            i += 1
            if tag & 3 == 0 {
                var n = tag >> 2
                if n >= 60 {
                    let extra = n - 59
                    n = 0
                    for k in 0 ..< extra { n |= Int(input[i + k]) << (8 * k) }
                    i += extra
                }
                n += 1
                guard i + n <= input.count else { return nil }
                out += input[i ..< i + n]
                i += n
            } else {
                let n: Int, offset: Int
                if tag & 3 == 1 {
                    n = 4 + (tag >> 2) & 7
                    offset = (tag >> 5) << 8 | Int(input[i])
                    i += 1
                } else {
                    n = (tag >> 2) + 1
                    offset = Int(input[i]) | Int(input[i + 1]) << 8
                    i += 2
                }
                guard offset > 0, offset <= out.count else { return nil }
                for _ in 0 ..< n { out.append(out[out.count - offset]) }
            }
        }
        return out.count == length ? out : nil
    }

    @Test("Snappy decodes literals and overlapping copies at every offset and length as the format says, with and without slack")
    func snappyAgainstItsReference() throws {
        var rng = SplitMix64(seed: 5)
        for offset in 1 ... 40 {
            for length in [1, 4, 7, 8, 11, 15, 16, 17, 31, 33, 64] {
                // A literal of `offset` (at least) bytes, a copy, then a short literal.
                let lead = max(offset, Int(rng.next() % 50) + 1)
                var body: [UInt8] = []
                if lead <= 60 {
                    body.append(UInt8((lead - 1) << 2))
                } else {
                    body += [60 << 2, UInt8(lead - 1)]
                }
                body += (0 ..< lead).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                body += [UInt8((length - 1) << 2 | 2), UInt8(offset & 0xFF), UInt8(offset >> 8)]
                body += [2 << 2, 1, 2, 3]
                let total = lead + length + 3
                var stream: [UInt8] = []
                var n = total
                while n >= 0x80 {
                    stream.append(UInt8(n & 0x7F) | 0x80)
                    n >>= 7
                }
                stream.append(UInt8(n))
                stream += body
                let expected = try #require(Self.referenceSnappy(stream))
                let got = try stream.withUnsafeBytes { try Snappy.decompress($0, file: "s", fileOffset: 0) }
                #expect(got == expected, "offset \(offset), length \(length)")
                // Into a buffer of exactly the length, no slack: every copy takes the careful path.
                let exact = UnsafeMutableRawBufferPointer.allocate(byteCount: total, alignment: 1)
                defer { exact.deallocate() }
                try stream.withUnsafeBytes {
                    try Snappy.decompress($0, file: "s", fileOffset: 0, expectedLength: total, into: exact, slack: 0)
                }
                #expect(Array(exact) == expected, "offset \(offset), length \(length), no slack")
            }
        }
        // Our compressor's output of quote-like bytes, at every size up to 300.
        let raw = (0 ..< 40).flatMap { i in withUnsafeBytes(of: 80.25 + Double(i % 7) * 0.5) { Array($0) } }
        for size in 0 ... 300 {
            let input = Array(raw.prefix(size))
            let compressed = input.withUnsafeBytes { Snappy.compress($0) }
            let got = try compressed.withUnsafeBytes { try Snappy.decompress($0, file: "s", fileOffset: 0, expectedLength: size) }
            #expect(got == input, "size \(size)")
        }
    }
}
