@testable import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// The Zstandard decoder against the reference `zstd` tool (frames it made, committed under
/// `Tests/Fixtures/zstd`, and, when the tool is installed, frames it makes at test time), and
/// against frames made by hand for each block type and each way a frame can be wrong.
@Suite struct ZstdTests {
    // MARK: Helpers

    static func decode(_ bytes: [UInt8], maximum: Int = 1 << 30, expected: Int? = nil) throws(ZstdError) -> [UInt8] {
        let result = bytes.withUnsafeBytes { raw in
            Result { () throws(ZstdError) -> [UInt8] in try Zstd.decompress(raw, maximumOutputSize: maximum, expectedSize: expected) }
        }
        return try result.get()
    }

    /// The error decoding `bytes` throws, or nil when it decodes.
    static func error(_ bytes: [UInt8], maximum: Int = 1 << 30, expected: Int? = nil) -> ZstdError? {
        do {
            _ = try decode(bytes, maximum: maximum, expected: expected)
            return nil
        } catch { return error }
    }

    static func fixture(_ name: String) throws -> [UInt8] {
        [UInt8](try Data(contentsOf: Fixtures.directory.appendingPathComponent("zstd/\(name)")))
    }

    static let zstdTool: String? = {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/zstd" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }()

    /// `data` compressed by the `zstd` tool with `arguments`.
    static func compress(_ data: [UInt8], _ arguments: [String]) throws -> [UInt8] {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("zstd-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let input = directory.appendingPathComponent("in"), output = directory.appendingPathComponent("in.zst")
        try Data(data).write(to: input)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: zstdTool ?? "zstd")
        process.arguments = ["-q", "-f"] + arguments + [input.path, "-o", output.path]
        try process.run()
        process.waitUntilExit()
        guard process.terminationStatus == 0 else { throw CocoaError(.fileWriteUnknown) }
        return [UInt8](try Data(contentsOf: output))
    }

    /// Seeded inputs of each kind.
    static func input(_ kind: String, size: Int) -> [UInt8] {
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15 &* UInt64(size + 1)
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        switch kind {
        case "random":  // compressible: a small alphabet, skewed
            return (0 ..< size).map { _ in UInt8(truncatingIfNeeded: next() % 16 &* next() % 7) }
        case "incompressible":
            return (0 ..< size).map { _ in UInt8(truncatingIfNeeded: next()) }
        case "repetitive":
            let unit = Array("0123456789abcdef-quotes-".utf8)
            return (0 ..< size).map { unit[($0 / 3 + $0 % 5) % unit.count] }
        default:  // csv
            var text = [UInt8]()
            text.reserveCapacity(size + 64)
            var price = 10_000 as UInt64
            while text.count < size {
                price = price &+ next() % 201 &- 100
                text += Array(
                    "2014-\(next() % 12 + 10)-\(next() % 18 + 10),\(["AAPL", "MSFT", "IBM"][Int(next() % 3)]),\(price / 100).\(price % 100),\(next() % 100_000)\n"
                        .utf8)
            }
            return Array(text.prefix(size))
        }
    }

    /// A frame: magic, a single-segment header with a 1-byte content size (or none), the blocks.
    static func frame(contentSize: Int?, checksum: Bool = false, blocks: [[UInt8]]) -> [UInt8] {
        var bytes: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD]
        if let contentSize {
            bytes += [0x20 | (checksum ? 4 : 0), UInt8(contentSize)]
        } else {
            bytes += [checksum ? 4 : 0, 0x00]  // window descriptor: 1 KiB
        }
        for block in blocks { bytes += block }
        return bytes
    }

    /// A block header: last flag, type, size.
    static func blockHeader(last: Bool, type: Int, size: Int) -> [UInt8] {
        let value = (last ? 1 : 0) | type << 1 | size << 3
        return [UInt8(value & 0xFF), UInt8(value >> 8 & 0xFF), UInt8(value >> 16)]
    }

    /// Made by `zstd -19` from "hello hello hello, zstd! hello hello hello, zstd! abcabcabcabc":
    /// raw literals, predefined sequence tables, repeat offsets, a checksum.
    static let helloFrame: [UInt8] = [
        0x28, 0xB5, 0x2F, 0xFD, 0x04, 0x68, 0xE5, 0x00, 0x00, 0x88, 0x68, 0x65, 0x6C, 0x6C, 0x6F, 0x20, 0x2C, 0x20,
        0x7A, 0x73, 0x74, 0x64, 0x21, 0x20, 0x61, 0x62, 0x63, 0x03, 0x00, 0xBA, 0x62, 0xF0, 0x5C, 0x3C, 0x46, 0x29,
        0x02, 0x41, 0x1B, 0x11, 0x61,
    ]
    static let hello = Array("hello hello hello, zstd! hello hello hello, zstd! abcabcabcabc".utf8)

    /// Made by `zstd --ultra -22` from a five-line CSV: Huffman literals (FSE-compressed weights).
    static let csvFrame: [UInt8] = [
        0x28, 0xB5, 0x2F, 0xFD, 0x04, 0x88, 0xC5, 0x01, 0x00, 0x42, 0x43, 0x0B, 0x11, 0xB0, 0xB9, 0x01, 0x28, 0x99,
        0x9A, 0x44, 0x45, 0xD2, 0x96, 0xA4, 0x74, 0xD9, 0x16, 0x53, 0x24, 0x40, 0x60, 0xD3, 0xC6, 0xEF, 0xDD, 0x9B,
        0xFE, 0xD6, 0x44, 0xCB, 0xDF, 0x49, 0xD4, 0xFE, 0x5B, 0x5C, 0xC0, 0x0B, 0x03, 0x4F, 0x80, 0x84, 0x94, 0x31,
        0x5A, 0xA7, 0x04, 0x03, 0x04, 0x07, 0x80, 0x03, 0x7E, 0xCD, 0x31, 0x2A, 0xCF, 0xD2, 0x5B,
    ]
    static let csv = Array("Date,Open\n2014-01-02,555.68\n2014-01-03,553.13\n2014-01-06,556.57\n2014-01-07,554.37\n".utf8)

    // MARK: Frames made by the zstd tool, committed

    @Test func committedFramesDecodeToTheirSources() throws {
        let quotes = try Self.fixture("quotes.csv")
        #expect(quotes.count > 128 * 1024)
        for name in ["quotes.19.zst", "quotes.1-nocheck-nosize.zst", "quotes.19-window1k.zst"] {
            let same = try Self.decode(try Self.fixture(name)) == quotes
            #expect(same, "\(name)")
        }
        #expect(try Self.decode(try Self.fixture("empty.zst")) == [])
        #expect(try Self.decode(try Self.fixture("one-byte.zst")) == [0x61])
        let zeros = try Self.decode(try Self.fixture("zeros-300000.zst")) == [UInt8](repeating: 0, count: 300_000)
        #expect(zeros)
        #expect(try Self.decode(Self.helloFrame) == Self.hello)
        #expect(try Self.decode(Self.csvFrame) == Self.csv)
    }

    @Test func decodingIntoACallersBufferGivesTheSameBytes() throws {
        let quotes = try Self.fixture("quotes.csv")
        let frame = try Self.fixture("quotes.19.zst")
        var buffer = [UInt8](repeating: 0xAA, count: quotes.count)
        let written = try frame.withUnsafeBytes { input in
            try buffer.withUnsafeMutableBytes { try Zstd.decompress(input, into: $0) }
        }
        #expect(written == quotes.count)
        let same = buffer == quotes
        #expect(same)
        var short = [UInt8](repeating: 0, count: quotes.count - 1)
        #expect(throws: ZstdError.self) {
            try frame.withUnsafeBytes { input in try short.withUnsafeMutableBytes { try Zstd.decompress(input, into: $0) } }
        }
        var none = [UInt8]()
        let empty = try Self.fixture("empty.zst")
        #expect(try empty.withUnsafeBytes { input in try none.withUnsafeMutableBytes { try Zstd.decompress(input, into: $0) } } == 0)
    }

    // MARK: Frames the zstd tool makes now

    @Test(.enabled(if: zstdTool != nil, "the zstd tool is not installed"))
    func everyKindAndSizeRoundTripsThroughTheZstdTool() throws {
        let sizes = [0, 1, 127, 128 * 1024 - 1, 128 * 1024, 128 * 1024 + 1, 3 * 1024 * 1024 + 17]
        for kind in ["random", "incompressible", "repetitive", "csv"] {
            for size in sizes {
                let data = Self.input(kind, size: size)
                for arguments in [["-1"], ["-3", "--no-check", "--no-content-size"]] {
                    let frame = try Self.compress(data, arguments)
                    let decoded = try Self.decode(frame, expected: arguments.contains("--no-content-size") ? nil : size)
                    let same = decoded == data  // not in #expect: it would print megabytes on a failure
                    #expect(same, "\(kind) \(size) bytes, zstd \(arguments): \(decoded.count) bytes decoded")
                }
            }
        }
    }

    @Test(.enabled(if: zstdTool != nil, "the zstd tool is not installed"))
    func everyLevelAndOptionRoundTripsThroughTheZstdTool() throws {
        let options: [[String]] = [
            ["-1"], ["-3"], ["-19"], ["--ultra", "-22", "--long"], ["-3", "--check"], ["-3", "--no-check"],
            ["-3", "--no-content-size"], ["-19", "--zstd=wlog=10"], ["-5", "-B65536", "-T2"],
            ["-3", "--target-compressed-block-size=1024"], ["--fast=3"],
        ]
        for kind in ["csv", "random", "repetitive"] {
            let data = Self.input(kind, size: 700_000)
            for arguments in options {
                let frame = try Self.compress(data, arguments)
                let same = try Self.decode(frame) == data
                #expect(same, "\(kind), zstd \(arguments)")
            }
        }
    }

    /// Little-endian doubles as a Parquet page of quotes holds them (prices of two decimals on a
    /// random walk, whole volumes, runs of 0.0 and 1.0): matches 8, 16, 24 … bytes back and
    /// Huffman literals; and runs repeating a pattern of every period 1–15 (matches of every
    /// short offset), between random bytes.
    static func columnLikeInputs(size: Int) -> [String: [UInt8]] {
        var state: UInt64 = 0x853C_49E6_748F_EA9B
        func next() -> UInt64 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return state >> 33
        }
        var doubles = [UInt8]()
        doubles.reserveCapacity(size + 8)
        var cents: Int64 = 19_547
        while doubles.count < size {
            cents = max(1, cents + Int64(next() % 41) - 20)
            let value: Double =
                switch next() % 4 {
                case 0: Double(cents) / 100
                case 1: Double(next() % 400_000)
                case 2: 0
                default: next() % 8 == 0 ? Double(cents) / 100 : 1
                }
            withUnsafeBytes(of: value.bitPattern.littleEndian) { doubles += $0 }
        }
        var periods = [UInt8]()
        periods.reserveCapacity(size + 200)
        while periods.count < size {
            let period = Int(next() % 15) + 1
            let pattern = (0 ..< period).map { _ in UInt8(truncatingIfNeeded: next()) }
            let length = Int(next() % 120) + 3
            for i in 0 ..< length { periods.append(pattern[i % period]) }
            for _ in 0 ..< Int(next() % 9) { periods.append(UInt8(truncatingIfNeeded: next())) }
        }
        return ["doubles": Array(doubles.prefix(size)), "periods": Array(periods.prefix(size))]
    }

    @Test(.enabled(if: zstdTool != nil, "the zstd tool is not installed"))
    func columnsOfDoublesAndShortPeriodsRoundTripThroughTheZstdTool() throws {
        for size in [1000, 128 * 1024 + 3, 1_500_000] {
            for (kind, data) in Self.columnLikeInputs(size: size).sorted(by: { $0.key < $1.key }) {
                for arguments in [["-1"], ["-3"], ["-19"], ["--fast=5"]] {
                    let frame = try Self.compress(data, arguments)
                    let same = try Self.decode(frame, expected: size) == data
                    #expect(same, "\(kind) \(size) bytes, zstd \(arguments)")
                    // Into a buffer of exactly the content's size (no slack past it).
                    var buffer = [UInt8](repeating: 0xAA, count: size)
                    let written = try frame.withUnsafeBytes { input in
                        try buffer.withUnsafeMutableBytes { try Zstd.decompress(input, into: $0) }
                    }
                    let exact = written == size && buffer == data
                    #expect(exact, "\(kind) \(size) bytes into a buffer of its size, zstd \(arguments)")
                }
            }
        }
    }

    // MARK: Hand-made frames

    @Test func aRawBlockAndAnRLEBlockDecode() throws {
        let raw = Self.frame(contentSize: 3, blocks: [Self.blockHeader(last: true, type: 0, size: 3) + [1, 2, 3]])
        #expect(try Self.decode(raw) == [1, 2, 3])
        let rle = Self.frame(contentSize: 200, blocks: [Self.blockHeader(last: true, type: 1, size: 200) + [7]])
        #expect(try Self.decode(rle) == [UInt8](repeating: 7, count: 200))
        let both = Self.frame(
            contentSize: nil,
            blocks: [
                Self.blockHeader(last: false, type: 1, size: 5) + [9],
                Self.blockHeader(last: true, type: 0, size: 2) + [4, 5],
            ])
        #expect(try Self.decode(both) == [9, 9, 9, 9, 9, 4, 5])
    }

    @Test func repeatOffsetsAndRepeatModeTablesCarryAcrossBlocks() throws {
        // Three compressed blocks with raw literals and RLE-mode tables, so the bitstreams hold
        // only extra bits. Block 1: literals "abcd", one sequence (literal length 4, offset code 2
        // with extra bits 3: offset value 7, offset 4; match length 3) -> "abcdabc"; the repeat
        // offsets become 4, 1, 4. Block 2: literals "xy", one sequence (literal length 2, offset
        // value 1: repeat offset 1, which is block 1's 4; match length 4) -> "xybcxy". Block 3:
        // repeat mode for all three tables (block 2's), literals "zw" -> "zwxyzw".
        let block1: [UInt8] = [0x20] + Array("abcd".utf8) + [0x01, 0x54, 0x04, 0x02, 0x00, 0x07]
        let block2: [UInt8] = [0x10] + Array("xy".utf8) + [0x01, 0x54, 0x02, 0x00, 0x01, 0x01]
        let block3: [UInt8] = [0x10] + Array("zw".utf8) + [0x01, 0xFC, 0x01]
        let frame = Self.frame(
            contentSize: nil,
            blocks: [
                Self.blockHeader(last: false, type: 2, size: block1.count) + block1,
                Self.blockHeader(last: false, type: 2, size: block2.count) + block2,
                Self.blockHeader(last: true, type: 2, size: block3.count) + block3,
            ])
        #expect(try Self.decode(frame) == Array("abcdabcxybcxyzwxyzw".utf8))
        // A raw block between them changes neither the offsets nor the tables.
        let withRaw = Self.frame(
            contentSize: nil,
            blocks: [
                Self.blockHeader(last: false, type: 2, size: block1.count) + block1,
                Self.blockHeader(last: false, type: 0, size: 4) + Array("1234".utf8),
                Self.blockHeader(last: true, type: 2, size: block2.count) + block2,
            ])
        #expect(try Self.decode(withRaw) == Array("abcdabc1234xy34xy".utf8))
        // Repeat mode in a frame's first compressed block has nothing to repeat.
        let first = Self.frame(contentSize: nil, blocks: [Self.blockHeader(last: true, type: 2, size: block3.count) + block3])
        guard case .malformed(_, let detail)? = Self.error(first) else {
            Issue.record("repeat mode accepted")
            return
        }
        #expect(detail.contains("repeat mode"))
    }

    /// A raw block of 64 bytes, then a compressed block of `count` sequences with no literals and
    /// RLE-mode tables (literal length code 0, offset code 1, match length code 0: every sequence
    /// has no literals, a match of 3 and an offset value of 2 or 3 from its one extra bit), the
    /// bit of sequence i (from 0) being `bits(i)`; and what it decodes to when every bit is 0 (each
    /// sequence's offset then the third repeat offset: 8, 4, 1 in turn).
    static func repeatOffsetFrame(count: Int, bits: (Int) -> Bool) -> (frame: [UInt8], zeros: [UInt8]) {
        let raw = (0 ..< 64).map { UInt8(truncatingIfNeeded: $0 &* 37 &+ 11) }
        // The bitstream is read backwards: written forwards from the last sequence's bit to the
        // first's, then the marker bit.
        var stream: [UInt8] = []
        var used = 0
        for bit in (0 ..< count).reversed().map(bits) + [true] {
            if used % 8 == 0 { stream.append(0) }
            if bit { stream[stream.count - 1] |= 1 << UInt8(used % 8) }
            used += 1
        }
        let block: [UInt8] = [0x00, UInt8(0x80 + (count >> 8)), UInt8(count & 0xFF), 0x54, 0x00, 0x01, 0x00] + stream
        let frame = Self.frame(
            contentSize: nil,
            blocks: [
                Self.blockHeader(last: false, type: 0, size: raw.count) + raw,
                Self.blockHeader(last: true, type: 2, size: block.count) + block,
            ])
        var zeros = raw
        for i in 0 ..< count {
            let offset = [8, 4, 1][i % 3]
            for _ in 0 ..< 3 { zeros.append(zeros[zeros.count - offset]) }
        }
        return (frame, zeros)
    }

    @Test(
        "The repeat offsets (RFC 8878 §3.1.2.5) resolve alike in the fast loop and the checked path, a repeat offset of 0 refused by both")
    func repeatOffsetsAgreeOnBothPathsAndZeroIsRefused() throws {
        // 300 sequences: a bitstream long enough for the fast loop.
        let good = Self.repeatOffsetFrame(count: 300) { _ in false }
        let expected = "bytes \(good.zeros.withUnsafeBytes { XXHash64.hash($0) })"
        let clean = Self.fastAndChecked(good.frame, size: good.zeros.count)
        #expect(clean.exact == expected && clean.array == expected && clean.checked == expected)
        #expect(try Self.decode(good.frame) == good.zeros)
        // After a multiple of three sequences the repeat offsets are 1, 4, 8 again: an offset
        // value of 3 with no literals is the first repeat offset less 1, which is 0. Early in the
        // block (the fast loop's) and last (the checked path's alone).
        for bad in [3, 9, 297] {
            let frame = Self.repeatOffsetFrame(count: 300) { $0 == bad }.frame
            let result = Self.fastAndChecked(frame, size: good.zeros.count)
            #expect(result.checked.contains("sequence \(bad): a repeat offset of 0"), "\(result.checked)")
            #expect(result.exact == result.checked && result.array == result.checked, "sequence \(bad)")
        }
        // An offset value of 3 after sequences that leave the first repeat offset at 8 or 4 is
        // that less 1 (7 or 3): not refused.
        for fine in [1, 2] {
            let frame = Self.repeatOffsetFrame(count: 300) { $0 == fine }.frame
            var reference = Array(good.zeros.prefix(64))
            var reps = (1, 4, 8)
            for i in 0 ..< 300 {
                let offset: Int
                if i == fine {
                    offset = reps.0 - 1
                    reps = (offset, reps.0, reps.1)
                } else {
                    offset = reps.2
                    reps = (offset, reps.0, reps.1)
                }
                for _ in 0 ..< 3 { reference.append(reference[reference.count - offset]) }
            }
            let want = "bytes \(reference.withUnsafeBytes { XXHash64.hash($0) })"
            let result = Self.fastAndChecked(frame, size: reference.count)
            #expect(result.exact == want && result.array == want && result.checked == want, "sequence \(fine)")
        }
    }

    @Test func anEmptyFrameDecodesToNothing() throws {
        #expect(try Self.decode(Self.frame(contentSize: nil, blocks: [Self.blockHeader(last: true, type: 0, size: 0)])) == [])
        #expect(try Self.decode(Self.frame(contentSize: 0, blocks: [Self.blockHeader(last: true, type: 1, size: 0) + [1]])) == [])
    }

    @Test func skippableFramesBeforeBetweenAndAfterAreSkipped() throws {
        let skippable: [UInt8] = [0x53, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 0xDE, 0xAD, 0xBE]
        let empty: [UInt8] = [0x5F, 0x2A, 0x4D, 0x18, 0, 0, 0, 0]
        let input = skippable + Self.helloFrame + empty + Self.csvFrame + skippable
        #expect(try Self.decode(input) == Self.hello + Self.csv)
        #expect(try Self.decode(skippable) == [])
        #expect(Self.error(Array(skippable.dropLast())) == .truncated(offset: 10, needed: 1))
    }

    @Test func concatenatedFramesDecodeOneAfterTheOther() throws {
        let one = try Self.fixture("one-byte.zst")
        #expect(try Self.decode(one + Self.helloFrame + one) == [0x61] + Self.hello + [0x61])
        #expect(try Self.decode(one + one, expected: 2) == [0x61, 0x61])
        // Each frame starts with fresh repeat offsets and tables: the second hello frame's first
        // sequences use repeat offsets 1, 4, 8 again.
        #expect(try Self.decode(Self.helloFrame + Self.helloFrame) == Self.hello + Self.hello)
    }

    @Test func aFlippedBitIsAChecksumMismatch() throws {
        var frame = Self.helloFrame
        frame[frame.count - 2] ^= 0x10
        guard case .checksumMismatch(let offset, _, _)? = Self.error(frame) else {
            Issue.record("no checksum mismatch")
            return
        }
        #expect(offset == frame.count - 4)
        // A bit flipped in a raw literal changes the content, not the structure.
        var literal = Self.helloFrame
        literal[12] ^= 0x01
        guard case .checksumMismatch? = Self.error(literal) else {
            Issue.record("no checksum mismatch")
            return
        }
    }

    @Test func everyTruncationOfASmallFrameIsAnError() throws {
        for frame in [Self.helloFrame, Self.csvFrame, try Self.fixture("one-byte.zst"), try Self.fixture("empty.zst")] {
            for length in 0 ..< frame.count {
                #expect(Self.error(Array(frame.prefix(length))) != nil, "\(length) of \(frame.count) bytes")
            }
        }
    }

    @Test func everyFlippedBitOfASmallFrameDecodesOrFailsCleanly() throws {
        for frame in [Self.helloFrame, Self.csvFrame] {
            for bit in 0 ..< frame.count * 8 {
                var changed = frame
                changed[bit / 8] ^= 1 << (bit % 8)
                if let error = Self.error(changed), let offset = error.offset {
                    #expect(offset >= 0 && offset <= changed.count, "bit \(bit): \(error)")
                }
            }
        }
    }

    @Test func aFrameNamingADictionaryIsRefused() throws {
        let named: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x21, 0x2A, 0x03] + Self.blockHeader(last: true, type: 0, size: 3) + [1, 2, 3]
        #expect(Self.error(named) == .dictionaryNotSupported(offset: 0, dictionaryID: 42))
        #expect("\(Self.error(named)!)".contains("dictionary 42"))
        let four: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x03, 0x00, 0x01, 0x02, 0x03, 0x04] + Self.blockHeader(last: true, type: 0, size: 0)
        #expect(Self.error(four) == .dictionaryNotSupported(offset: 0, dictionaryID: 0x0403_0201))
        // A dictionary ID of 0 names none.
        let zero: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x21, 0x00, 0x03] + Self.blockHeader(last: true, type: 0, size: 3) + [1, 2, 3]
        #expect(try Self.decode(zero) == [1, 2, 3])
    }

    @Test func aWindowPastTheCapIsRefused() throws {
        // Window descriptor exponent 18: 1 << 28 bytes; exponent 17: exactly the cap.
        let tooLarge: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 18 << 3] + Self.blockHeader(last: true, type: 0, size: 0)
        #expect(Self.error(tooLarge) == .windowTooLarge(offset: 0, windowSize: 1 << 28, limit: Zstd.maximumWindowSize))
        let atCap: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 17 << 3] + Self.blockHeader(last: true, type: 0, size: 0)
        #expect(try Self.decode(atCap) == [])
        let mantissa: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x00, 17 << 3 | 1] + Self.blockHeader(last: true, type: 0, size: 0)
        #expect(Self.error(mantissa) == .windowTooLarge(offset: 0, windowSize: (1 << 27) + (1 << 24), limit: Zstd.maximumWindowSize))
    }

    @Test func outputPastTheMaximumIsRefusedBeforeItIsWritten() throws {
        let zeros = try Self.fixture("zeros-300000.zst")  // no content size in its header
        #expect(try Self.decode(zeros, maximum: 300_000).count == 300_000)
        guard case .tooLarge(_, 299_999)? = Self.error(zeros, maximum: 299_999) else {
            Issue.record("not refused")
            return
        }
        guard case .tooLarge(_, 1000)? = Self.error(zeros, expected: 1000) else {
            Issue.record("not refused")
            return
        }
        #expect(Self.error(zeros, expected: 300_001) == .sizeMismatch(expected: 300_001, actual: 300_000))
        // A frame that declares its size is refused at its header.
        let quotes = try Self.fixture("quotes.19.zst")
        #expect(Self.error(quotes, maximum: 1000) == .tooLarge(offset: 0, limit: 1000))
        #expect(Self.error(quotes, expected: 1000) == .tooLarge(offset: 0, limit: 1000))
        // Without a declared size: refused at the block that passes the limit (the second, at 10).
        let blocks = Self.frame(
            contentSize: nil,
            blocks: [
                Self.blockHeader(last: false, type: 1, size: 1000) + [1],
                Self.blockHeader(last: true, type: 1, size: 1000) + [2],
            ])
        #expect(Self.error(blocks, maximum: 1500) == .tooLarge(offset: 10, limit: 1500))
        #expect(try Self.decode(blocks, maximum: 2000).count == 2000)
        let compressed = try Self.fixture("quotes.1-nocheck-nosize.zst")
        guard case .tooLarge? = Self.error(compressed, maximum: 100_000) else {
            Issue.record("not refused")
            return
        }
    }

    @Test func aDeclaredContentSizeMustMatch() throws {
        let short = Self.frame(contentSize: 5, blocks: [Self.blockHeader(last: true, type: 0, size: 3) + [1, 2, 3]])
        #expect(Self.error(short) == .contentSizeMismatch(offset: 0, declared: 5, actual: 3))
        let exact = Self.frame(contentSize: 2, blocks: [Self.blockHeader(last: true, type: 0, size: 2) + [1, 2]])
        #expect(try Self.decode(exact) == [1, 2])
        let over = Self.frame(
            contentSize: 2,
            blocks: [
                Self.blockHeader(last: false, type: 0, size: 2) + [1, 2], Self.blockHeader(last: true, type: 1, size: 2) + [3],
            ])
        #expect(Self.error(over) == .contentSizeMismatch(offset: 0, declared: 2, actual: 4))
    }

    @Test func malformedHeadersAndBlocksAreRefusedWithTheirOffset() throws {
        #expect(Self.error([]) == .truncated(offset: 0, needed: 4))
        #expect(
            Self.error([1, 2, 3, 4, 5])
                == .malformed(offset: 0, detail: "not a Zstandard frame (magic number 0x4030201, expected 0xfd2fb528)"))
        let reserved: [UInt8] = [0x28, 0xB5, 0x2F, 0xFD, 0x08, 0x00] + Self.blockHeader(last: true, type: 0, size: 0)
        #expect(Self.error(reserved) == .malformed(offset: 4, detail: "a frame header with the reserved bit set"))
        let type3 = Self.frame(contentSize: nil, blocks: [Self.blockHeader(last: true, type: 3, size: 0)])
        #expect(Self.error(type3) == .malformed(offset: 6, detail: "a block of reserved type 3"))
        // A 1 KiB window allows blocks of at most 1 KiB.
        let big = Self.frame(contentSize: nil, blocks: [Self.blockHeader(last: true, type: 1, size: 1025) + [0]])
        guard case .malformed(6, _)? = Self.error(big) else {
            Issue.record("a block past the window accepted")
            return
        }
        // Treeless literals with no table before them.
        let treeless = Self.frame(contentSize: nil, blocks: [Self.blockHeader(last: true, type: 2, size: 4) + [0x03, 0x00, 0x00, 0x00]])
        guard case .malformed(_, let detail)? = Self.error(treeless) else {
            Issue.record("treeless accepted")
            return
        }
        #expect(detail.contains("treeless"))
        // Repeat mode with no table before it.
        let repeatMode = Self.frame(contentSize: nil, blocks: [Self.blockHeader(last: true, type: 2, size: 4) + [0x00, 0x01, 0xFC, 0x81]])
        guard case .malformed(_, let repeatDetail)? = Self.error(repeatMode) else {
            Issue.record("repeat accepted")
            return
        }
        #expect(repeatDetail.contains("repeat mode"))
    }

    // MARK: The fast sequence loop against the checked path

    /// Seeded data that makes encoders emit every kind of sequence: literal runs of 0 to 40 bytes,
    /// matches 1 to 15 bytes back (overlapping), 16 to 64 back, and up to 200 KB back (across
    /// blocks), lengths 3 to 300, runs of one byte, and 8-byte values like a column of doubles.
    static func sequenceMix(size: Int, seed: UInt64) -> [UInt8] {
        var state = seed &* 0x9E37_79B9_7F4A_7C15 | 1
        func next(_ bound: Int) -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int((state >> 33) % UInt64(bound))
        }
        var data = [UInt8]()
        data.reserveCapacity(size + 400)
        while data.count < size {
            switch next(6) {
            case 0:
                for _ in 0 ..< next(41) { data.append(UInt8(truncatingIfNeeded: next(256))) }
            case 1, 2:
                let distance = [1 + next(15), 16 + next(49), 1 + next(200_000)][next(3)]
                let length = 3 + next(next(8) == 0 ? 298 : 30)
                if distance > data.count {
                    data.append(UInt8(truncatingIfNeeded: next(256)))
                    continue
                }
                for _ in 0 ..< length { data.append(data[data.count - distance]) }
            case 3:
                data += repeatElement(UInt8(truncatingIfNeeded: next(4)), count: 1 + next(100))
            default:
                let price = Double(100 + next(20)) + Double(next(100)) / 100
                for _ in 0 ..< 1 + next(8) { withUnsafeBytes(of: price.bitPattern.littleEndian) { data += $0 } }
            }
        }
        return Array(data.prefix(size))
    }

    /// Decoding `frame` with the fast loop (into an exact buffer, no slack; and into an array
    /// with slack) and with the checked path alone: the bytes, or the error's text.
    static func fastAndChecked(_ frame: [UInt8], size: Int) -> (exact: String, array: String, checked: String) {
        func text(_ run: () throws -> [UInt8]) -> String {
            do { return "bytes \(try run().withUnsafeBytes { XXHash64.hash($0) })" } catch { return "\(error)" }
        }
        return frame.withUnsafeBytes { input in
            (
                text {
                    var buffer = [UInt8](repeating: 0xAA, count: size)
                    let n = try buffer.withUnsafeMutableBytes { try Zstd.decompress(input, into: $0) }
                    return Array(buffer.prefix(n))
                },
                text { try Zstd.decompress(input, maximumOutputSize: size) },
                text { try Zstd.decompressCheckedOnly(input, maximumOutputSize: size) }
            )
        }
    }

    @Test("The fast sequence loop decodes seeded frames (ours and the zstd tool's) as the checked path does, and damaged ones fail alike")
    func theFastLoopMatchesTheCheckedPath() throws {
        var tool: [[String]] = []
        if Self.zstdTool != nil { tool = [["-1"], ["-19"], ["-3", "--no-content-size"], ["-19", "--zstd=wlog=10"]] }
        for seed in 1 ... 6 as ClosedRange<UInt64> {
            let size = [100, 5_000, 131_072, 131_073, 300_000, 700_001][Int(seed) - 1]
            let data = Self.sequenceMix(size: size, seed: seed)
            var frames = [1, 3, 9].map { level in data.withUnsafeBytes { ZstdCompressor.compress($0, level: level) } }
            for arguments in tool { frames.append(try Self.compress(data, arguments)) }
            let expected = "bytes \(data.withUnsafeBytes { XXHash64.hash($0) })"
            var state = seed
            for (f, frame) in frames.enumerated() {
                let clean = Self.fastAndChecked(frame, size: size)
                #expect(clean.exact == expected && clean.array == expected && clean.checked == expected, "seed \(seed), frame \(f)")
                for _ in 0 ..< 12 {
                    state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
                    var damaged = frame
                    let at = Int((state >> 33) % UInt64(frame.count))
                    damaged[at] ^= UInt8(truncatingIfNeeded: state >> 20) | 1
                    let result = Self.fastAndChecked(damaged, size: size)
                    #expect(result.exact == result.checked, "seed \(seed), frame \(f), byte \(at) changed")
                    #expect(result.array == result.checked, "seed \(seed), frame \(f), byte \(at) changed")
                }
            }
        }
    }

    @Test func xxHash64MatchesKnownValues() {
        #expect([UInt8]().withUnsafeBytes { XXHash64.hash($0) } == 0xEF46_DB37_51D8_E999)
        #expect(Array("abc".utf8).withUnsafeBytes { XXHash64.hash($0) } == 0x44BC_2CF5_AD77_0999)
    }
}
