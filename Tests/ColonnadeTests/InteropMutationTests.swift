@testable import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// The Arrow IPC and Parquet readers on damaged input: truncated footers, lying offsets and
/// lengths, bad Thrift, bad flatbuffers, bad Snappy. Every damaged file either reads or fails with
/// an `InteropError` naming the file and an offset inside it — never a crash, never a read past
/// the input. (A crash would stop the test process, which is the failure these tests catch.)
@Suite("Arrow IPC and Parquet readers on damaged input")
struct InteropMutationTests {
    /// Small files of every kind: ours (every element type, nulls, several row groups, pages and
    /// batches; uncompressed and Snappy) and the real tools' fixtures.
    static func samples() throws -> [(name: String, bytes: [UInt8])] {
        var table = TestTables.random(rows: 70, tickers: 3, seed: 12, nullRate: 0.2)
        table.metadata = ["source": "mutation test"]
        var out: [(String, [UInt8])] = []
        for format in [ArrowIPCWriter.Format.file, .stream] {
            let o = MemoryInteropOutput()
            try ArrowIPCWriter(table: table, format: format, batchRows: 64).write(to: o)
            out.append(("ours.\(format == .file ? "arrow" : "arrows")", o.bytes))
        }
        for compression in [ParquetWriter.Compression.none, .snappy] {
            var w = ParquetWriter(table: table)
            w.rowGroupRows = 40
            w.compression = compression
            let o = MemoryInteropOutput()
            try w.write(to: o)
            out.append(("ours-\(compression).parquet", o.bytes))
        }
        for name in ["pyarrow.arrow", "polars.arrows", "pyarrow-default.parquet", "duckdb-default.parquet", "polars-uncompressed.parquet"] {
            let url = Fixtures.directory.appendingPathComponent("interop/\(name)")
            out.append((name, try [UInt8](Data(contentsOf: url))))
        }
        return out
    }

    /// Reads `bytes`; returns the error, or nil when it read. Checks any offset lies in the input.
    @discardableResult
    static func read(_ bytes: [UInt8], _ name: String, _ note: @autoclosure () -> String) -> InteropError? {
        do throws(InteropError) {
            _ = try withInteropBytes(bytes) { b throws(InteropError) in try InteropReader.read(b, file: name) }
            return nil
        } catch {
            switch error {
            case let .truncated(file, offset, needed):
                #expect(file == name && offset >= 0 && offset <= bytes.count && needed >= 0, "\(note()): \(error)")
            case let .malformed(file, offset, _):
                #expect(file == name && offset >= 0 && offset <= bytes.count, "\(note()): \(error)")
            default:
                break
            }
            return error
        }
    }

    @Test("Every truncation of a file is an error with an offset inside it; a cut stream reads whole messages only")
    func everyTruncation() throws {
        for (name, bytes) in try Self.samples() {
            let whole = try bytes.withUnsafeBytes { try InteropReader.read($0, file: name) }
            for n in Self.positions(bytes.count) {
                let cut = Array(bytes[..<n])
                let error = Self.read(cut, name, "\(name) cut to \(n) bytes")
                if !name.hasSuffix(".arrows") {
                    #expect(error != nil, "\(name) cut to \(n) bytes read without an error")
                } else if error == nil {
                    // A stream cut between messages is a shorter stream: never more rows, never other values.
                    let part = try cut.withUnsafeBytes { try InteropReader.read($0, file: name) }
                    #expect(part.rowCount <= whole.rowCount, "\(name) cut to \(n)")
                }
            }
        }
    }

    @Test("Every single-byte change reads or fails with a precise error, never crashes")
    func everyByteChanged() throws {
        for (name, bytes) in try Self.samples() {
            for i in Self.positions(bytes.count) {
                for value in i >= bytes.count - 256 ? [bytes[i] ^ 0xFF, bytes[i] == 0x7F ? 0x80 : 0x7F] : [bytes[i] ^ 0xFF] {
                    var damaged = bytes
                    damaged[i] = value
                    let error = Self.read(damaged, name, "\(name) byte \(i) = \(value)")
                    // A changed magic number is never read.
                    if i < 4 { #expect(error != nil, "\(name): byte \(i) of the magic changed, yet it read") }
                }
            }
        }
    }

    @Test("Random bytes after a real header are refused with a precise error")
    func randomBodies() throws {
        var rng = SplitMix64(seed: 99)
        for (name, bytes) in try Self.samples() {
            var refused = 0
            for _ in 0 ..< 100 {
                // A real start (at least the 8-byte header) and end (the last 12 bytes: the
                // footer's length and magic, or a stream's end marker), with 1 to 256 random bytes
                // in place of whatever lay between: a file no writer made.
                let keep = 8 + Int(rng.next() % UInt64(bytes.count - 20))
                var damaged = Array(bytes[..<keep])
                let extra = 1 + Int(rng.next() % 256)
                for _ in 0 ..< extra { damaged.append(UInt8(truncatingIfNeeded: rng.next())) }
                damaged.append(contentsOf: bytes.suffix(12))
                let error = Self.read(damaged, name, "\(name) with \(extra) random bytes from \(keep)")
                #expect(error != nil, "\(name) with \(extra) random bytes from byte \(keep) of \(bytes.count) read without an error")
                if error != nil { refused += 1 }
            }
            #expect(refused == 100, "\(name): \(refused) of 100 refused")
        }
    }

    /// Byte positions to damage in an input of `count` bytes: all of the first 32 and the last
    /// 256 (headers, footers, the last pages and batches) and every 7th in between, so the sweep
    /// stays fast in a debug build.
    static func positions(_ count: Int) -> [Int] {
        (0 ..< count).filter { $0 < 32 || $0 >= count - 256 || $0 % 7 == 0 }
    }

    // MARK: One test per failure class, with the exact error

    static func ours(_ format: String) throws -> [UInt8] {
        try Self.samples().first { $0.name == format }.map(\.bytes) ?? []
    }

    @Test("Parquet: a truncated footer (no closing PAR1) names the end of the file")
    func parquetTruncatedFooter() throws {
        let bytes = Array(try Self.ours("ours-none.parquet").dropLast())
        let error = Self.read(bytes, "t.parquet", "")
        #expect(
            error
                == .malformed(
                    file: "t.parquet", offset: bytes.count - 4, detail: "no PAR1 at the end (a truncated or unfinished Parquet file)"))
    }

    @Test("Parquet: a footer length larger than the file is refused at the length's offset")
    func parquetLyingFooterLength() throws {
        var bytes = try Self.ours("ours-none.parquet")
        let n = bytes.count
        withUnsafeBytes(of: UInt32(n).littleEndian) { for k in 0 ..< 4 { bytes[n - 8 + k] = $0[k] } }
        #expect(
            Self.read(bytes, "t.parquet", "")
                == .malformed(file: "t.parquet", offset: n - 8, detail: "Parquet footer length \(n) in a file of \(n) bytes"))
    }

    @Test("Parquet: bad Thrift in the footer (an unknown field type) is refused at its byte")
    func parquetBadThrift() throws {
        var bytes = try Self.ours("ours-none.parquet")
        let n = bytes.count
        let footerLength = Int(bytes[n - 8]) | Int(bytes[n - 7]) << 8 | Int(bytes[n - 6]) << 16 | Int(bytes[n - 5]) << 24
        let footerStart = n - 8 - footerLength
        bytes[footerStart] = 0x1D  // field 1, type 13: no such compact-protocol type
        #expect(
            Self.read(bytes, "t.parquet", "") == .malformed(file: "t.parquet", offset: footerStart + 1, detail: "Thrift: unknown type 13"))
    }

    /// The errors of every one-byte change to `0x7F` in `range` of `bytes`.
    static func footerChanges(_ bytes: [UInt8], _ range: Range<Int>, _ name: String) -> [InteropError] {
        range.compactMap { i in
            var damaged = bytes
            damaged[i] = damaged[i] == 0x7F ? 0x3F : 0x7F
            return Self.read(damaged, name, "\(name) byte \(i)")
        }
    }

    @Test("Parquet: lying column-chunk offsets in the footer are refused with the chunk metadata's offset")
    func parquetLyingChunkOffset() throws {
        let bytes = try Self.ours("ours-none.parquet")
        let n = bytes.count
        let footerLength = Int(bytes[n - 8]) | Int(bytes[n - 7]) << 8 | Int(bytes[n - 6]) << 16 | Int(bytes[n - 5]) << 24
        let footer = (n - 8 - footerLength) ..< (n - 8)
        let lies = Self.footerChanges(bytes, footer, "t.parquet").filter {
            if case let .malformed(_, offset, detail) = $0 { return detail.contains("outside the file") && footer.contains(offset) }
            return false
        }
        #expect(!lies.isEmpty)
    }

    @Test("Arrow file: lying block offsets in the footer are refused with the block's offset")
    func arrowLyingBlockOffset() throws {
        let bytes = try Self.ours("ours.arrow")
        let n = bytes.count
        let footerLength = Int(bytes[n - 10]) | Int(bytes[n - 9]) << 8 | Int(bytes[n - 8]) << 16 | Int(bytes[n - 7]) << 24
        let footer = (n - 10 - footerLength) ..< (n - 10)
        let lies = Self.footerChanges(bytes, footer, "t.arrow").filter {
            if case let .malformed(_, offset, detail) = $0 {
                return detail.contains("outside the file's messages") && footer.contains(offset)
            }
            return false
        }
        #expect(!lies.isEmpty)
    }

    @Test("Arrow file: a footer length larger than the file is refused at the length's offset")
    func arrowLyingFooterLength() throws {
        var bytes = try Self.ours("ours.arrow")
        let n = bytes.count
        withUnsafeBytes(of: UInt32(n).littleEndian) { for k in 0 ..< 4 { bytes[n - 10 + k] = $0[k] } }
        #expect(
            Self.read(bytes, "t.arrow", "")
                == .malformed(file: "t.arrow", offset: n - 10, detail: "Arrow footer length \(n) in a file of \(n) bytes"))
    }

    @Test("Arrow file: a truncated footer (no closing ARROW1) is refused")
    func arrowTruncatedFooter() throws {
        let bytes = Array(try Self.ours("ours.arrow").dropLast(3))
        #expect(Self.read(bytes, "t.arrow", "") == .truncated(file: "t.arrow", offset: bytes.count, needed: 6))
    }

    @Test("Arrow stream: a flatbuffer offset past the message is refused at the offset's own byte")
    func arrowBadFlatbuffer() throws {
        var bytes = try Self.ours("ours.arrows")
        // 0xFFFFFFFF continuation, metadata length, then the flatbuffer's root uoffset at byte 8.
        let metaLength = Int(bytes[4]) | Int(bytes[5]) << 8 | Int(bytes[6]) << 16 | Int(bytes[7]) << 24
        for k in 0 ..< 4 { bytes[8 + k] = 0xF0 }
        #expect(
            Self.read(bytes, "t.arrows", "")
                == .malformed(
                    file: "t.arrows", offset: 8,
                    detail: "flatbuffer offset 4042322160 points past the end of its \(metaLength)-byte buffer"))
    }

    @Test("Arrow stream: a body length past the end is refused as truncated at the body")
    func arrowLyingBodyLength() throws {
        let bytes = try Self.ours("ours.arrows")
        // Drop the end-of-stream marker and the last bytes of the last batch's body.
        let cut = Array(bytes.dropLast(8 + 16))
        guard case .truncated(_, _, let needed)? = Self.read(cut, "t.arrows", "") else {
            Issue.record("a stream cut inside a body read without a truncation error")
            return
        }
        #expect(needed > 0)
    }

    @Test("Snappy: lying lengths and copy offsets are refused with their offsets")
    func snappyDamage() {
        func decompress(_ b: [UInt8], expected: Int? = nil) -> InteropError? {
            do throws(InteropError) {
                _ = try withInteropBytes(b) { p throws(InteropError) in
                    try Snappy.decompress(p, file: "s", fileOffset: 100, expectedLength: expected)
                }
                return nil
            } catch {
                return error
            }
        }
        // Length 5, then a 1-byte-offset copy of 4 bytes from 9 bytes back, with nothing written yet.
        #expect(decompress([5, 0x01, 9]) == .malformed(file: "s", offset: 103, detail: "Snappy: copy offset 9 at output 0"))
        // A literal longer than the input.
        #expect(
            decompress([5, 4 << 2, 65])
                == .malformed(file: "s", offset: 102, detail: "Snappy: literal of 5 bytes past the end of the input"))
        // A declared length no Snappy stream of 3 bytes can reach.
        #expect(
            decompress([0xFF, 0xFF, 0x7F])
                == .malformed(file: "s", offset: 100, detail: "Snappy: uncompressed length 2097151 from 0 bytes of Snappy data (at most 0)")
        )
        // A length other than the page header's, or a negative expectation.
        #expect(
            decompress([1, 0, 65], expected: 2) == .malformed(file: "s", offset: 100, detail: "Snappy: uncompressed length 1, expected 2"))
        #expect(
            decompress([1, 0, 65], expected: -1) == .malformed(file: "s", offset: 100, detail: "Snappy: uncompressed length 1, expected -1")
        )
        #expect(decompress([1, 0, 65]) == nil)
    }

    @Test("Empty, tiny and foreign inputs are refused with what was found")
    func foreignInputs() {
        #expect(Self.read([], "e", "") == .truncated(file: "e", offset: 0, needed: 8))
        #expect(Self.read(Array("PAR1".utf8), "p", "") == .truncated(file: "p", offset: 4, needed: 8))
        #expect(Self.read(Array("date,close\n2014-01-02,1\n".utf8), "c", "") == .unrecognizedFormat(file: "c"))
    }

    /// A Parquet footer may claim up to 8 rows per byte of file before the reader refuses it
    /// (dictionary and run-length pages are that dense); for a large file that can still be more
    /// memory than there is. Here a sparse 4 TiB file (no disk used) claims 2^45 rows of a date
    /// and a Float64 column, 128 TiB for the dates alone, more than a 47-bit address space holds
    /// whatever the overcommit setting: an error naming the file, not a stop of the process.
    @Test("Parquet: a believable row count that cannot be allocated is an error naming the file")
    func parquetRowsThatCannotBeAllocated() throws {
        var w = ThriftCompactWriter()
        w.structBegin(nil)
        w.i32(1, 2)
        w.listBegin(2, .structure, count: 4)
        w.structBegin(nil)
        w.string(4, "schema")
        w.i32(5, 3)
        w.structEnd()
        w.structBegin(nil)
        w.i32(1, ParquetFormat.PhysicalType.byteArray.rawValue)
        w.i32(3, ParquetFormat.Repetition.required.rawValue)
        w.string(4, "ticker")
        w.i32(6, ParquetFormat.Converted.utf8)
        w.structEnd()
        w.structBegin(nil)
        w.i32(1, ParquetFormat.PhysicalType.int32.rawValue)
        w.i32(3, ParquetFormat.Repetition.required.rawValue)
        w.string(4, "date")
        w.i32(6, ParquetFormat.Converted.date)
        w.structEnd()
        w.structBegin(nil)
        w.i32(1, ParquetFormat.PhysicalType.double.rawValue)
        w.i32(3, ParquetFormat.Repetition.optional.rawValue)
        w.string(4, "close")
        w.structEnd()
        let fileSize = 1 << 42
        w.i64(3, Int64(fileSize * 8))
        w.listBegin(4, .structure, count: 0)
        w.structEnd()
        var tail = w.bytes
        withUnsafeBytes(of: UInt32(w.bytes.count).littleEndian) { tail += $0 }
        tail += Array("PAR1".utf8)

        let path = NSTemporaryDirectory() + "colonnade-sparse-\(getpid())-\(UInt64.random(in: 0 ... .max)).parquet"
        let fd = open(path, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC, 0o600)
        try #require(fd >= 0)
        defer {
            close(fd)
            unlink(path)
        }
        try #require(ftruncate(fd, off_t(fileSize)) == 0, "a sparse file of 4 TiB")
        try #require(pwrite(fd, "PAR1", 4, 0) == 4)
        try #require(tail.withUnsafeBytes { pwrite(fd, $0.baseAddress, $0.count, off_t(fileSize - tail.count)) } == tail.count)
        let mapped = try #require(mmap(nil, fileSize, PROT_READ, MAP_SHARED, fd, 0).flatMap { $0 == MAP_FAILED ? nil : $0 })
        defer { munmap(mapped, fileSize) }
        #expect(throws: InteropError.io(file: "huge.parquet", operation: "allocate", errno: ENOMEM)) {
            _ = try ParquetReader.read(UnsafeRawBufferPointer(start: mapped, count: fileSize), file: "huge.parquet")
        }
        #expect(
            InteropError.io(file: "huge.parquet", operation: "allocate", errno: ENOMEM).description
                == "huge.parquet: allocate failed: Cannot allocate memory")
    }
}
