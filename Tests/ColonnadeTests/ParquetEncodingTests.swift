@testable import Colonnade
import ColonnadeTestSupport
import Testing

/// Parquet's delta and split encodings against an encoder written here from Encodings.md, on
/// seeded values: every bit width 0–64, runs ending inside and at the edge of miniblocks and
/// blocks, wrapping Int32 and Int64 deltas; byte arrays with shared prefixes; and every
/// truncation of an encoded page an error, never a crash.
@Suite struct ParquetEncodingTests {
    // MARK: A reference encoder

    static func uleb(_ v: UInt64) -> [UInt8] {
        var v = v, out: [UInt8] = []
        repeat {
            var b = UInt8(v & 0x7F)
            v >>= 7
            if v != 0 { b |= 0x80 }
            out.append(b)
        } while v != 0
        return out
    }

    static func zigzag(_ v: Int64) -> [UInt8] { uleb(UInt64(bitPattern: (v << 1) ^ (v >> 63))) }

    /// DELTA_BINARY_PACKED of `values` (deltas in `bits`-bit wrapping arithmetic), with block size
    /// `block` and `miniblocks` per block; each miniblock's width is the smallest that fits.
    static func encode(_ values: [Int64], bits: Int, block: Int = 128, miniblocks: Int = 4) -> [UInt8] {
        var out = uleb(UInt64(block)) + uleb(UInt64(miniblocks)) + uleb(UInt64(values.count)) + zigzag(values.first ?? 0)
        let per = block / miniblocks
        let deltas: [Int64] = values.indices.dropFirst().map {
            bits == 32 ? Int64(Int32(truncatingIfNeeded: values[$0] &- values[$0 - 1])) : values[$0] &- values[$0 - 1]
        }
        var i = 0
        while i < deltas.count {
            let chunk = Array(deltas[i ..< min(i + block, deltas.count)])
            let minDelta = chunk.min()!
            out += zigzag(minDelta)
            var widths: [UInt8] = [], bodies: [UInt8] = []
            for m in 0 ..< miniblocks {
                let part = chunk.count > m * per ? Array(chunk[(m * per) ..< min((m + 1) * per, chunk.count)]) : []
                if part.isEmpty {
                    widths.append(0)
                    continue
                }
                let packed = part.map { UInt64(bitPattern: $0 &- minDelta) & (bits == 32 ? 0xFFFF_FFFF : .max) }
                let width = packed.map { 64 - $0.leadingZeroBitCount }.max()!
                widths.append(UInt8(width))
                var bitsOut = [Bool]()
                for k in 0 ..< per {
                    let v = k < packed.count ? packed[k] : 0
                    for b in 0 ..< width { bitsOut.append((v >> UInt64(b)) & 1 == 1) }
                }
                for byte in stride(from: 0, to: bitsOut.count, by: 8) {
                    var x: UInt8 = 0
                    for b in 0 ..< 8 where bitsOut[byte + b] { x |= 1 << UInt8(b) }
                    bodies.append(x)
                }
            }
            out += widths + bodies
            i += block
        }
        return out
    }

    static func decode(
        _ bytes: [UInt8], _ encoding: ParquetFormat.Encoding, _ physical: ParquetFormat.PhysicalType,
        width: Int, count: Int
    ) throws(InteropError) -> [UInt8] {
        let r = bytes.withUnsafeBytes { b in
            Result { () throws(InteropError) in
                try ParquetEncodings.plain(
                    b, encoding: encoding, physical: physical, width: width, count: count,
                    file: "f", fileOffset: 100, column: "c")
            }
        }
        return try r.get()
    }

    static func int64s(_ plain: [UInt8]) -> [Int64] {
        plain.withUnsafeBytes { b in
            (0 ..< b.count / 8).map { Int64(littleEndian: b.loadUnaligned(fromByteOffset: 8 * $0, as: Int64.self)) }
        }
    }

    static func int32s(_ plain: [UInt8]) -> [Int64] {
        plain.withUnsafeBytes { b in
            (0 ..< b.count / 4).map { Int64(Int32(littleEndian: b.loadUnaligned(fromByteOffset: 4 * $0, as: Int32.self))) }
        }
    }

    // MARK: DELTA_BINARY_PACKED

    @Test func everyBitWidthAndRunLengthDecodesToTheValues() throws {
        var rng = SplitMix64(seed: 5)
        for width in 0 ... 64 {
            for count in [1, 2, 31, 32, 33, 127, 128, 129, 200, 257] {
                // Deltas spread over `width` bits from a random minimum.
                var values: [Int64] = [Int64(bitPattern: rng.next())]
                let mask: UInt64 = width == 64 ? .max : (1 << UInt64(width)) - 1
                let base = Int64(bitPattern: rng.next() % 1000)
                for _ in 1 ..< count { values.append(values.last! &+ base &+ Int64(bitPattern: rng.next() & mask)) }
                let encoded = Self.encode(values, bits: 64)
                #expect(
                    Self.int64s(try Self.decode(encoded, .deltaBinaryPacked, .int64, width: 8, count: count)) == values,
                    "width \(width) count \(count)")
            }
        }
    }

    @Test func int32ValuesWrapAsTheWritersDo() throws {
        var rng = SplitMix64(seed: 6)
        for count in [1, 5, 129, 1000] {
            let values = (0 ..< count).map { _ in Int64(Int32(truncatingIfNeeded: rng.next())) }
            let encoded = Self.encode(values, bits: 32, block: 256, miniblocks: 8)
            #expect(Self.int32s(try Self.decode(encoded, .deltaBinaryPacked, .int32, width: 4, count: count)) == values, "count \(count)")
        }
        // Extremes: Int64.min and max alternating (deltas wrap around).
        let extremes: [Int64] = [.min, .max, .min, 0, .max, -1]
        #expect(Self.int64s(try Self.decode(Self.encode(extremes, bits: 64), .deltaBinaryPacked, .int64, width: 8, count: 6)) == extremes)
    }

    @Test func damagedRunsAreErrorsNamingTheirByte() throws {
        let values: [Int64] = (0 ..< 300).map { Int64($0 * $0) }
        let encoded = Self.encode(values, bits: 64)
        for n in 0 ..< encoded.count {
            #expect(throws: InteropError.self, "cut at \(n)") {
                try Self.decode(Array(encoded[0 ..< n]), .deltaBinaryPacked, .int64, width: 8, count: 300)
            }
        }
        // A count other than the page's, a width past 64, a block size not a multiple of 128.
        #expect(throws: InteropError.self) { try Self.decode(encoded, .deltaBinaryPacked, .int64, width: 8, count: 299) }
        var wide = Self.encode([1, 2, 3], bits: 32)
        wide[6] = 33  // the first miniblock's width: after the header (block size 128 takes 2 bytes, then 1, 1, 1) and the min delta
        #expect(throws: InteropError.self) { try Self.decode(wide, .deltaBinaryPacked, .int32, width: 4, count: 3) }
        #expect(throws: InteropError.self) {
            try Self.decode(Self.uleb(100) + Self.uleb(4) + Self.uleb(1) + [0], .deltaBinaryPacked, .int64, width: 8, count: 1)
        }
        // An over-long ULEB128.
        #expect(throws: InteropError.self) {
            try Self.decode([UInt8](repeating: 0xFF, count: 12) + [0], .deltaBinaryPacked, .int64, width: 8, count: 1)
        }
    }

    // MARK: Byte arrays and split streams

    /// PLAIN byte arrays: a 4-byte length before each.
    static func plainStrings(_ strings: [[UInt8]]) -> [UInt8] {
        strings.flatMap { s in withUnsafeBytes(of: UInt32(s.count).littleEndian) { Array($0) } + s }
    }

    @Test func deltaLengthAndFrontCodedByteArraysDecodeToTheStrings() throws {
        var rng = SplitMix64(seed: 8)
        let words = ["AAPL", "AAPL", "AAPLE", "AMZN", "", "BRK.A", "BRK.B", "BRK.B", "KO", "KOF", "ZZZZZZZZZZZZ"]
        for count in [1, 11, 200] {
            let strings: [[UInt8]] = (0 ..< count).map { i in Array(words[i < words.count ? i : Int(rng.next() % UInt64(words.count))].utf8)
            }
            let lengths = strings.map { Int64($0.count) }
            let dlba = Self.encode(lengths, bits: 32) + strings.flatMap { $0 }
            #expect(try Self.decode(dlba, .deltaLengthByteArray, .byteArray, width: 0, count: count) == Self.plainStrings(strings))
            var prefixes: [Int64] = [], suffixes: [[UInt8]] = []
            var previous: [UInt8] = []
            for s in strings {
                var p = 0
                while p < min(s.count, previous.count) && s[p] == previous[p] { p += 1 }
                prefixes.append(Int64(p))
                suffixes.append(Array(s[p...]))
                previous = s
            }
            let dba = Self.encode(prefixes, bits: 32) + Self.encode(suffixes.map { Int64($0.count) }, bits: 32) + suffixes.flatMap { $0 }
            #expect(try Self.decode(dba, .deltaByteArray, .byteArray, width: 0, count: count) == Self.plainStrings(strings))
            for n in stride(from: 0, to: dba.count, by: max(1, dba.count / 40)) {
                #expect(throws: InteropError.self) {
                    try Self.decode(Array(dba[0 ..< n]), .deltaByteArray, .byteArray, width: 0, count: count)
                }
            }
        }
        // A prefix longer than the previous value.
        let bad = Self.encode([0, 9], bits: 32) + Self.encode([2, 1], bits: 32) + Array("abc".utf8)
        #expect(throws: InteropError.self) { try Self.decode(bad, .deltaByteArray, .byteArray, width: 0, count: 2) }
    }

    @Test func byteStreamSplitInterleavesBack() throws {
        var rng = SplitMix64(seed: 9)
        for (physical, width) in [(ParquetFormat.PhysicalType.float, 4), (.double, 8), (.int32, 4), (.int64, 8)] {
            for count in [0, 1, 7, 100] {
                let plain = (0 ..< count * width).map { _ in UInt8(truncatingIfNeeded: rng.next()) }
                var split = [UInt8](repeating: 0, count: plain.count)
                for i in 0 ..< count { for j in 0 ..< width { split[j * count + i] = plain[i * width + j] } }
                #expect(try Self.decode(split, .byteStreamSplit, physical, width: width, count: count) == plain, "\(physical) \(count)")
                if count > 0 {
                    #expect(throws: InteropError.self) {
                        try Self.decode(Array(split.dropLast()), .byteStreamSplit, physical, width: width, count: count)
                    }
                }
            }
        }
    }

    // MARK: DECIMAL

    /// Unscaled INT64 and INT32 decimals at scales 0–30 become the Float64 `Double(String)` gives
    /// for their decimal text (correctly rounded), on both sides of 2^53.
    @Test func decimalsAreCorrectlyRounded() {
        var rng = SplitMix64(seed: 12)
        var values: [Int64] = [0, 1, -1, 1 << 53, (1 << 53) + 1, -(1 << 53) - 1, .max, .min + 1, 999_999_999_999_999_999]
        for _ in 0 ..< 300 { values.append(Int64(bitPattern: rng.next()) >> Int64(rng.next() % 60)) }
        for scale in 0 ... 30 {
            let storage = ColumnStorage(byteCount: values.count * 8)
            for (r, v) in values.enumerated() { storage.base.assumingMemoryBound(to: Int64.self)[r] = v }
            guard
                case .float64(let c) = ParquetDecoder.decimalColumn(
                    storage, physical: .int64, scale: scale, element: .float64,
                    rows: values.count, validity: nil)
            else {
                Issue.record("not float64")
                continue
            }
            for (r, v) in values.enumerated() {
                let expected = Double("\(v)e-\(scale)")!
                #expect(c[r] == expected, "\(v)e-\(scale): \(c[r]) vs \(expected)")
            }
        }
        let ints = ColumnStorage(byteCount: 12)
        for (r, v) in [Int32.min, -5, 123_456_789].enumerated() { ints.base.assumingMemoryBound(to: Int32.self)[r] = v }
        if case .float64(let c) = ParquetDecoder.decimalColumn(ints, physical: .int32, scale: 2, element: .float64, rows: 3, validity: nil)
        {
            #expect([c[0], c[1], c[2]] == [-21474836.48, -0.05, 1234567.89])
        }
    }
}
