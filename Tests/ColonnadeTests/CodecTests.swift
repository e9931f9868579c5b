@testable import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// The system's tools, for differential tests: the tests that need one skip (with the reason)
/// where it is not installed; CI installs `lz4` and `zstd`.
enum SystemTool {
    static func path(_ name: String) -> String? {
        let path = ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin"
        return path.split(separator: ":").map { "\($0)/\(name)" }.first { FileManager.default.isExecutableFile(atPath: $0) }
    }

    /// `tool arguments… FILE` with `input` in FILE; its standard output.
    static func run(_ tool: String, _ arguments: [String], input: [UInt8]) throws -> [UInt8] {
        let dir = NSTemporaryDirectory() + "/colonnade-codec-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = dir + "/input", out = dir + "/output"
        try Data(input).write(to: URL(fileURLWithPath: file))
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try #require(path(tool)))
        process.arguments = arguments + [file]
        process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        process.standardError = FileHandle.nullDevice
        try process.run()
        process.waitUntilExit()
        #expect(process.terminationStatus == 0, "\(tool) \(arguments)")
        return [UInt8](try Data(contentsOf: URL(fileURLWithPath: out)))
    }

    /// Inputs that exercise a codec: empty, tiny, random, repetitive, quote-like text, sizes
    /// around 64 KiB block edges.
    static func inputs(seed: UInt64 = 7) -> [(String, [UInt8])] {
        var rng = SplitMix64(seed: seed)
        let random = { (n: Int) in (0 ..< n).map { _ in UInt8(truncatingIfNeeded: rng.next()) } }
        var csv = "ticker,date,open,high,low,close,volume\n"
        for i in 0 ..< 30_000 {
            csv +=
                "T\(i % 37),2014-\(i % 12 + 1)-\(i % 28 + 1),\(100 + i % 97).25,\(101 + i % 89).5,99.75,\(100 + i % 91).5,\(i * 13 % 100_000)\n"
        }
        return [
            ("empty", []), ("one byte", [42]), ("random 1000", random(1_000)), ("random 65536", random(65_536)),
            ("random 65537", random(65_537)), ("zeros 1 MiB", [UInt8](repeating: 0, count: 1 << 20)),
            ("abc repeated", Array(String(repeating: "abcabcab", count: 40_000).utf8)), ("quotes CSV", Array(csv.utf8)),
            ("random 300000", random(300_000)),
        ]
    }
}

@Suite struct XXHash32Tests {
    @Test func knownDigests() {
        // From the xxHash reference (XXH32, seed 0 unless given).
        let known: [(String, UInt32, UInt32)] = [
            ("", 0, 0x02CC_5D05), ("a", 0, 0x550D_7456), ("abc", 0, 0x32D1_53FF),
            ("Nobody inspects the spammish repetition", 0, 0xE229_3B2F),
        ]
        for (text, seed, digest) in known {
            #expect(Array(text.utf8).withUnsafeBytes { XXHash32.hash($0, seed: seed) } == digest, "\(text)")
        }
    }

    @Test func piecesGiveTheSameDigestAsOneShot() {
        var rng = SplitMix64(seed: 3)
        for n in [0, 1, 3, 4, 15, 16, 17, 31, 32, 33, 100, 1_000] {
            let bytes = (0 ..< n).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            let whole = bytes.withUnsafeBytes { XXHash32.hash($0, seed: 9) }
            var h = XXHash32(seed: 9)
            var i = 0
            while i < n {
                // Pieces of 0 to 19 bytes (empty pieces too), so stripes straddle every cut.
                let k = min(n - i, Int(rng.next() % 20))
                bytes[i ..< i + k].withUnsafeBytes { h.update($0) }
                i += k
            }
            #expect(h.finalize() == whole, "n \(n)")
        }
    }
}

@Suite struct LZ4Tests {
    static let hasTool = SystemTool.path("lz4") != nil

    static func frame(_ input: [UInt8], maximum: Int = 64 << 20, expected: Int? = nil) throws(CodecError) -> [UInt8] {
        let result = input.withUnsafeBytes { b in
            Result { () throws(CodecError) in try LZ4.decompressFrame(b, maximumOutputSize: maximum, expectedSize: expected) }
        }
        return try result.get()
    }

    @Test(.enabled(if: hasTool, "lz4 is not installed"))
    func framesWrittenByTheLZ4ToolDecodeExactly() throws {
        let options: [[String]] = [
            [], ["-BD"], ["-B4"], ["-B5", "-BD"], ["-B7"], ["--content-size"], ["-BX"], ["--no-frame-crc"],
            ["-9", "-BD", "-BX", "--content-size"], ["-1"],
        ]
        for (name, input) in SystemTool.inputs() {
            for o in options {
                let compressed = try SystemTool.run("lz4", ["-c", "-q"] + o, input: input)
                #expect(try Self.frame(compressed) == input, "\(name) \(o)")
                #expect(try Self.frame(compressed, expected: input.count) == input, "\(name) \(o) with its size")
            }
        }
    }

    @Test(.enabled(if: hasTool, "lz4 is not installed"))
    func concatenatedAndSkippableFramesAreOneStream() throws {
        let a = Array("first frame, ".utf8), b = Array(String(repeating: "second ", count: 5_000).utf8)
        let fa = try SystemTool.run("lz4", ["-c", "-q"], input: a), fb = try SystemTool.run("lz4", ["-c", "-q", "-BD"], input: b)
        let skippable: [UInt8] = [0x5A, 0x2A, 0x4D, 0x18, 3, 0, 0, 0, 1, 2, 3]
        #expect(try Self.frame(skippable + fa + skippable + fb + skippable) == a + b)
    }

    @Test(.enabled(if: hasTool, "lz4 is not installed"))
    func rawBlocksAndHadoopFramingDecode() throws {
        let input = Array(SystemTool.inputs()[7].1.prefix(60_000))  // CSV text, one 64 KB block
        let f = try SystemTool.run("lz4", ["-c", "-q", "-B4", "--no-frame-crc"], input: input)
        // Magic (4), FLG, BD, HC; then the block size word.
        let word = UInt32(f[7]) | UInt32(f[8]) << 8 | UInt32(f[9]) << 16 | UInt32(f[10]) << 24
        #expect(word & 0x8000_0000 == 0, "the block is compressed")
        let block = Array(f[11 ..< 11 + Int(word)])
        #expect(try block.withUnsafeBytes { try LZ4.decompressBlock($0, expectedSize: input.count) } == input)
        // The wrong expected size is an error either way.
        #expect(throws: CodecError.self) { try block.withUnsafeBytes { try LZ4.decompressBlock($0, expectedSize: input.count - 1) } }
        #expect(throws: CodecError.self) { try block.withUnsafeBytes { try LZ4.decompressBlock($0, expectedSize: input.count + 1) } }
        // Hadoop framing: big-endian lengths, then the block, twice; and the plain block fallback.
        let be = { (v: Int) -> [UInt8] in [UInt8(v >> 24 & 0xFF), UInt8(v >> 16 & 0xFF), UInt8(v >> 8 & 0xFF), UInt8(v & 0xFF)] }
        let hadoop = be(input.count) + be(block.count) + block + be(input.count) + be(block.count) + block
        #expect(try hadoop.withUnsafeBytes { try LZ4.decompressHadoop($0, expectedSize: 2 * input.count) } == input + input)
        #expect(try block.withUnsafeBytes { try LZ4.decompressHadoop($0, expectedSize: input.count) } == input)
    }

    @Test(.enabled(if: hasTool, "lz4 is not installed"))
    func everyTruncationAndEveryChecksumChangeIsAnErrorNeverACrash() throws {
        let input = Array(String(repeating: "2014-01-02,101.5,102.25\n", count: 200).utf8)
        let f = try SystemTool.run("lz4", ["-c", "-q", "-BX", "--content-size"], input: input)
        for n in 0 ..< f.count {
            #expect(throws: CodecError.self, "cut at \(n)") { try Self.frame(Array(f[0 ..< n])) }
        }
        // The header checksum (byte 4 + 2 + 8), the block checksum and the content checksum.
        for position in [14, f.count - 9, f.count - 1] {
            var bad = f
            bad[position] ^= 0x40
            do {
                _ = try Self.frame(bad)
                Issue.record("byte \(position) changed: decoded")
            } catch {
                guard case .checksumMismatch = error else {
                    Issue.record("byte \(position): \(error)")
                    continue
                }
            }
        }
        // Every single-byte change decodes to something or fails cleanly.
        for position in 0 ..< f.count {
            var bad = f
            bad[position] ^= 0xFF
            _ = try? Self.frame(bad)
        }
    }

    @Test func handMadeFramesAndLimits() throws {
        // FLG 0x60 (version 1, independent blocks), BD 0x40 (64 KB), then its checksum.
        func header(_ flg: UInt8, _ bd: UInt8, extra: [UInt8] = []) -> [UInt8] {
            let descriptor = [flg, bd] + extra
            let hc = UInt8(truncatingIfNeeded: descriptor.withUnsafeBytes { XXHash32.hash($0) } >> 8)
            return [0x04, 0x22, 0x4D, 0x18] + descriptor + [hc]
        }
        let stored: [UInt8] = [5, 0, 0, 0x80] + Array("hello".utf8)
        #expect(try Self.frame(header(0x60, 0x40) + stored + [0, 0, 0, 0]) == Array("hello".utf8))
        // An empty frame.
        #expect(try Self.frame(header(0x60, 0x40) + [0, 0, 0, 0]) == [])
        // A frame naming a dictionary is refused.
        do {
            _ = try Self.frame(header(0x61, 0x40, extra: [1, 2, 3, 4]) + [0, 0, 0, 0])
            Issue.record("decoded a frame with a dictionary")
        } catch {
            #expect(error.description.contains("needs a dictionary"), "\(error)")
        }
        // Reserved bits, a bad version, a block bigger than the maximum.
        for bad in [header(0x62, 0x40), header(0xA0, 0x40), header(0x60, 0x41), header(0x60, 0x30)] {
            #expect(throws: CodecError.self) { try Self.frame(bad + [0, 0, 0, 0]) }
        }
        #expect(throws: CodecError.self) {
            try Self.frame(header(0x60, 0x40) + [1, 0, 1, 0x80] + [UInt8](repeating: 0, count: 65_537) + [0, 0, 0, 0])
        }
        // The caller's bound: "hello" does not fit in 4 bytes.
        #expect(throws: CodecError.tooLarge(codec: "LZ4", limit: 4)) {
            try Self.frame(header(0x60, 0x40) + stored + [0, 0, 0, 0], maximum: 4)
        }
        // A block whose match reaches before the data, and an offset of 0.
        let early: [UInt8] = [0x14, 0x61, 5, 0, 0x00]  // one literal 'a', then a match 5 back
        #expect(throws: CodecError.self) { try early.withUnsafeBytes { try LZ4.decompressBlock($0, expectedSize: 10) } }
        let zero: [UInt8] = [0x14, 0x61, 0, 0, 0x00]
        #expect(throws: CodecError.self) { try zero.withUnsafeBytes { try LZ4.decompressBlock($0, expectedSize: 10) } }
        // LZ4Gzip fuzz finding 13: a block that ends right after a match (no final literals) read
        // its next token past the input; it is an error naming the end.
        let endsInMatch: [UInt8] = [0x10, 0x61, 1, 0]  // 'a', then 4 more from 1 back, then nothing
        #expect(throws: CodecError.truncated(codec: "LZ4", offset: 4, needed: 1)) {
            try endsInMatch.withUnsafeBytes { try LZ4.decompressBlock($0, expectedSize: 5) }
        }
        let finding = try [UInt8](
            Data(contentsOf: Fixtures.directory.appendingPathComponent("fuzz/lz4gzip-finding-13-block-ends-in-a-match")))
        #expect(throws: CodecError.self) {
            try finding.dropFirst(3).withUnsafeBytes {
                try LZ4.decompressBlock($0, expectedSize: (Int(finding[1]) | Int(finding[2]) << 8) * 16)
            }
        }
        // An overlapping match repeats its pattern: 'a' then 9 more from 1 back, then 'b'.
        let run: [UInt8] = [0x15, 0x61, 1, 0, 0x10, 0x62]
        #expect(try run.withUnsafeBytes { try LZ4.decompressBlock($0, expectedSize: 11) } == Array("aaaaaaaaaab".utf8))
    }

    /// Random well-formed blocks (every literal length 0…300, match length 4…300 and distance
    /// 1…40 or far back, with 15/255 length extensions) decode exactly as a byte-at-a-time
    /// reference decodes them: the word-wide fast loop, its hand-over to the exact loop near the
    /// end, and every overlapping-pattern period agree with the obvious reading of the format,
    /// into an exact-size array and into a larger caller's buffer.
    @Test func blocksDecodeAsTheByteAtATimeReferenceDoes() throws {
        var rng = SplitMix64(seed: 35)
        func length(_ limit: Int) -> Int {
            let r = Int(rng.next() % 100)
            return r < 70 ? Int(rng.next() % 19) : r < 95 ? Int(rng.next() % 40) : Int(rng.next() % UInt64(limit))
        }
        func lengthBytes(_ extra: Int) -> [UInt8] {  // the bytes after a code of 15
            var rest = extra, bytes: [UInt8] = []
            while rest >= 255 {
                bytes.append(255)
                rest -= 255
            }
            return bytes + [UInt8(rest)]
        }
        for round in 0 ..< 300 {
            var block: [UInt8] = [], expected: [UInt8] = []
            let sequences = Int(rng.next() % 40)
            for _ in 0 ..< sequences {
                let literals = (0 ..< length(300)).map { _ in UInt8(truncatingIfNeeded: rng.next() % 7 &+ 97) }
                let matchLength = 4 + length(300)
                let total = expected.count + literals.count
                guard total > 0 else { continue }
                let distance =
                    rng.next() % 3 == 0 ? 1 + Int(rng.next() % UInt64(min(total, 65_535))) : 1 + Int(rng.next() % UInt64(min(total, 40)))
                let literalCode = min(literals.count, 15), matchCode = min(matchLength - 4, 15)
                block.append(UInt8(literalCode << 4 | matchCode))
                if literalCode == 15 { block += lengthBytes(literals.count - 15) }
                block += literals
                block += [UInt8(distance & 0xFF), UInt8(distance >> 8)]
                if matchCode == 15 { block += lengthBytes(matchLength - 19) }
                expected += literals
                for _ in 0 ..< matchLength { expected.append(expected[expected.count - distance]) }
            }
            // The last sequence: literals only (at least one unless the block is that alone).
            let last = (0 ..< 1 + length(40)).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
            block.append(UInt8(min(last.count, 15) << 4))
            if last.count >= 15 { block += lengthBytes(last.count - 15) }
            block += last
            expected += last
            #expect(try block.withUnsafeBytes { try LZ4.decompressBlock($0, expectedSize: expected.count) } == expected, "round \(round)")
            // As a frame (one stored-size block, no checksums) into a caller's buffer with room to spare.
            if block.count <= 4 << 20 && expected.count <= 4 << 20 {
                let descriptor: [UInt8] = [0x60, 0x70]
                let hc = UInt8(truncatingIfNeeded: descriptor.withUnsafeBytes { XXHash32.hash($0) } >> 8)
                let size = UInt32(block.count)
                let frame =
                    [0x04, 0x22, 0x4D, 0x18] + descriptor + [hc]
                    + [UInt8(size & 0xFF), UInt8(size >> 8 & 0xFF), UInt8(size >> 16 & 0xFF), UInt8(size >> 24)] + block + [0, 0, 0, 0]
                var buffer = [UInt8](repeating: 0xEE, count: expected.count + 100)
                let written = try frame.withUnsafeBytes { input in
                    try buffer.withUnsafeMutableBytes { try LZ4.decompressFrame(input, into: $0) }
                }
                #expect(written == expected.count && Array(buffer[0 ..< written]) == expected, "round \(round) into a buffer")
                // One byte short is an error, never a write past it.
                if expected.count > 0 {
                    var short = [UInt8](repeating: 0, count: expected.count - 1)
                    #expect(throws: CodecError.self, "round \(round) one short") {
                        try frame.withUnsafeBytes { input in try short.withUnsafeMutableBytes { try LZ4.decompressFrame(input, into: $0) } }
                    }
                }
            }
        }
    }
}

@Suite struct GzipTests {
    static func gunzip(_ input: [UInt8], expected: Int? = nil, maximum: Int = 256 << 20) throws(CodecError) -> [UInt8] {
        let result = input.withUnsafeBytes { b in
            Result { () throws(CodecError) in try Gzip.decompress(b, maximumOutputSize: maximum, expectedSize: expected) }
        }
        return try result.get()
    }

    @Test(.enabled(if: SystemTool.path("gzip") != nil, "gzip is not installed"))
    func membersWrittenByGzipDecodeExactlyAndConcatenatedMembersAreOneStream() throws {
        var all: [UInt8] = [], joined: [UInt8] = []
        for (name, input) in SystemTool.inputs() {
            for o in [["-1"], ["-9"], ["-n"], ["-6", "-N"]] {
                let compressed = try SystemTool.run("gzip", ["-c"] + o, input: input)
                #expect(try Self.gunzip(compressed) == input, "\(name) \(o)")
                #expect(try Self.gunzip(compressed, expected: input.count) == input, "\(name) \(o)")
                if o == ["-1"] {
                    all += input
                    joined += compressed
                }
            }
        }
        #expect(try Self.gunzip(joined) == all)
    }

    @Test(.enabled(if: SystemTool.path("gzip") != nil, "gzip is not installed"))
    func truncationsAndDamageAreErrorsNeverCrashes() throws {
        let input = Array(String(repeating: "AAPL,2014-01-02,553.1,554.0\n", count: 300).utf8)
        let z = try SystemTool.run("gzip", ["-c", "-9"], input: input)
        for n in 0 ..< z.count { #expect(throws: CodecError.self, "cut at \(n)") { try Self.gunzip(Array(z[0 ..< n])) } }
        var crc = z
        crc[z.count - 8] ^= 1
        #expect { try Self.gunzip(crc) } throws: { e in if case .checksumMismatch = e as? CodecError { true } else { false } }
        var size = z
        size[z.count - 4] ^= 1
        #expect(throws: CodecError.self) { try Self.gunzip(size) }
        for position in 0 ..< z.count {
            var bad = z
            bad[position] ^= 0xA5
            _ = try? Self.gunzip(bad)
        }
        #expect(throws: CodecError.tooLarge(codec: "gzip", limit: 100)) { try Self.gunzip(z, maximum: 100) }
        #expect(throws: CodecError.self) { try Self.gunzip(z, expected: input.count + 1) }
    }

    /// A header with every optional field: FEXTRA, FNAME, FCOMMENT and a correct FHCRC; a wrong
    /// FHCRC is refused.
    @Test func everyOptionalHeaderField() throws {
        let deflate: [UInt8] = [0x01, 0x05, 0x00, 0xFA, 0xFF] + Array("hello".utf8)  // one stored block
        var header: [UInt8] = [0x1F, 0x8B, 8, 0x1E, 0, 0, 0, 0, 0, 3]
        header += [2, 0, 0xAB, 0xCD] + Array("name\u{0}".utf8) + Array("comment\u{0}".utf8)
        let hcrc = header.withUnsafeBytes { CRC32.checksum($0) } & 0xFFFF
        let trailer = { (crc: UInt32, n: UInt32) -> [UInt8] in
            [UInt8(crc & 0xFF), UInt8(crc >> 8 & 0xFF), UInt8(crc >> 16 & 0xFF), UInt8(crc >> 24), UInt8(n), 0, 0, 0]
        }
        let crc = Array("hello".utf8).withUnsafeBytes { CRC32.checksum($0) }
        let good = header + [UInt8(hcrc & 0xFF), UInt8(hcrc >> 8)] + deflate + trailer(crc, 5)
        #expect(try Self.gunzip(good) == Array("hello".utf8))
        let bad = header + [UInt8(hcrc & 0xFF) ^ 1, UInt8(hcrc >> 8)] + deflate + trailer(crc, 5)
        #expect(throws: CodecError.self) { try Self.gunzip(bad) }
    }
}
