@testable import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// Files written through `ReplacementFile` (reserved with `fallocate`, then cut back to the bytes
/// written) hold exactly the bytes the in-memory output receives, whatever the estimate; and the
/// year partitions written on several threads equal those written one at a time.
@Suite struct InteropFileOutputTests {
    static func temporaryDirectory() throws -> String {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-out-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        return dir
    }

    static func contents(_ path: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: URL(fileURLWithPath: path)))
    }

    @Test(
        "Arrow and Parquet files equal the in-memory output byte for byte (the reservation is cut back)",
        arguments: [0, 1, 63, 64, 5_000])
    func filesEqualMemory(rows: Int) throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = TestTables.random(rows: rows, tickers: max(1, min(rows, 9)), seed: UInt64(rows) + 7, nullRate: rows == 5_000 ? 0 : 0.1)
        for format in [ArrowIPCWriter.Format.file, .stream] {
            let writer = ArrowIPCWriter(table: table, format: format, batchRows: 1_024)
            let memory = MemoryInteropOutput()
            try writer.write(to: memory)
            let path = dir + "/t.arrow"
            try writer.write(toFile: path, durable: false)
            #expect(try Self.contents(path) == memory.bytes, "Arrow \(format) at \(rows) rows")
        }
        for compression in [ParquetWriter.Compression.none, .snappy] {
            var writer = ParquetWriter(table: table)
            writer.rowGroupRows = 2_000
            writer.compression = compression
            let memory = MemoryInteropOutput()
            try writer.write(to: memory)
            let path = dir + "/t.parquet"
            try writer.write(toFile: path, durable: false)
            #expect(try Self.contents(path) == memory.bytes, "Parquet \(compression) at \(rows) rows")
        }
    }

    @Test("A reservation below or far above the bytes written leaves exactly the bytes written")
    func reservationIsAHint() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let bytes = (0 ..< 300_000).map { UInt8(truncatingIfNeeded: $0 &* 31) }
        for reserve in [0, 10, 299_999, 300_000, 300_001, 8 << 20] {
            let path = dir + "/r.bin"
            try ReplacementFile.write(to: path, durable: false) { output throws(InteropError) in
                try output.reserve(reserve)
                try output.write(Array(bytes[..<100]))
                try output.write(Array(bytes[100...]))
            }
            #expect(try Self.contents(path) == bytes, "reserve \(reserve)")
        }
    }

    @Test("Year partitions written at once on several threads equal those written one at a time")
    func partitionsOnThreads() throws {
        let dir = try Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = QuoteGenerator(tickers: 5, days: 1_500, seed: 12).makeTable()
        var one = ParquetWriter(table: table)
        one.threads = 1
        var many = ParquetWriter(table: table)
        many.threads = 4
        let a = try one.writePartitionedByYear(toDirectory: dir + "/one", durable: false)
        let b = try many.writePartitionedByYear(toDirectory: dir + "/many", durable: false)
        #expect(a.count >= 4)
        #expect(
            a.map { $0.replacingOccurrences(of: dir + "/one", with: "") } == b.map { $0.replacingOccurrences(of: dir + "/many", with: "") })
        for (x, y) in zip(a, b) { #expect(try Self.contents(x) == Self.contents(y), "\(x)") }
    }

    @Test("An output buffer that cannot be allocated is an error naming the file, not a stop")
    func anOutputBufferThatCannotBeAllocatedThrows() throws {
        #expect(throws: InteropError.io(file: "out.arrow", operation: "allocate", errno: ENOMEM)) {
            _ = try DescriptorInteropOutput(fd: 1, name: "out.arrow", bufferSize: 1 << 50)
        }
        #expect(
            InteropError.io(file: "out.arrow", operation: "allocate", errno: ENOMEM).description
                == "out.arrow: allocate failed: Cannot allocate memory")
    }
}
