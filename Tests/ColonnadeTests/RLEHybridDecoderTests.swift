@testable import Colonnade
import Foundation
import Testing

/// Parquet's RLE/bit-packed hybrid decoder (dictionary indices, levels) against values packed
/// bit by bit from the specification (Encodings.md: groups of eight values, least significant
/// bit first), at every bit width 0–32, for value counts around group and word edges, with the
/// data ending exactly at the last packed byte (the decoder's tail, where no 8-byte word can be
/// loaded) and with bytes after it; every truncation is an error, never a trap.
@Suite struct RLEHybridDecoderTests {
    /// `values` bit-packed at `bitWidth` after a run header, the last group padded with zeros.
    static func bitPacked(_ values: [UInt32], bitWidth: Int) -> [UInt8] {
        let groups = (values.count + 7) / 8
        var encoder = RLEHybridEncoder(bitWidth: bitWidth)
        encoder.varint(groups << 1 | 1)
        var packed = [UInt8](repeating: 0, count: groups * bitWidth)
        var bit = 0
        for value in values {
            for k in 0 ..< bitWidth {
                if (value >> UInt32(k)) & 1 == 1 { packed[bit >> 3] |= UInt8(1 << (bit & 7)) }
                bit += 1
            }
        }
        return encoder.bytes + packed
    }

    static func decode(_ bytes: [UInt8], bitWidth: Int, count: Int) throws -> [UInt32] {
        var out = [UInt32](repeating: 0xDEAD_BEEF, count: count)
        try bytes.withUnsafeBytes { b in
            var decoder = RLEHybridDecoder(b, bitWidth: bitWidth, file: "t", fileOffset: 0)
            try out.withUnsafeMutableBufferPointer { p in
                if let base = p.baseAddress { try decoder.decode(count: count, into: base) }
            }
        }
        return out
    }

    @Test func bitPackedRunsDecodeAtEveryWidthAndCount() throws {
        var state: UInt64 = 0x2545_F491_4F6C_DD1D
        func next() -> UInt32 {
            state ^= state << 13
            state ^= state >> 7
            state ^= state << 17
            return UInt32(truncatingIfNeeded: state >> 11)
        }
        for width in 0 ... 32 {
            let mask: UInt32 = width == 32 ? .max : (1 << UInt32(width)) - 1
            for count in [1, 2, 7, 8, 9, 15, 16, 17, 63, 64, 65, 1000] {
                let values = (0 ..< count).map { _ in next() & mask }
                let packed = Self.bitPacked(values, bitWidth: width)
                // Exactly the packed bytes (the tail decoded byte by byte), and with more after.
                let exact = try Self.decode(packed, bitWidth: width, count: count)
                #expect(exact == values, "width \(width), \(count) values")
                let padded = try Self.decode(
                    packed + [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF], bitWidth: width, count: count)
                #expect(padded == values, "width \(width), \(count) values, bytes after")
                // Fewer values asked than packed: the first ones.
                if count > 1 {
                    let fewer = try Self.decode(packed, bitWidth: width, count: count - 1)
                    #expect(fewer == Array(values.dropLast()), "width \(width), \(count - 1) of \(count) values")
                }
                if count == 65 {
                    for cut in 0 ..< packed.count {
                        #expect(throws: InteropError.self, "width \(width), cut at \(cut)") {
                            _ = try Self.decode(Array(packed[0 ..< cut]), bitWidth: width, count: count)
                        }
                    }
                }
            }
        }
    }

    @Test func runsAndBitPackedGroupsMix() throws {
        for width in [1, 3, 8, 11, 17, 32] {
            let mask: UInt32 = width == 32 ? .max : (1 << UInt32(width)) - 1
            var encoder = RLEHybridEncoder(bitWidth: width)
            encoder.appendRun(5 & mask, count: 13)
            let packedValues = (0 ..< 24).map { UInt32($0 &* 2_654_435_761 & Int(mask)) }
            var bytes = encoder.bytes + Self.bitPacked(packedValues, bitWidth: width)
            var tail = RLEHybridEncoder(bitWidth: width)
            tail.appendRun(mask, count: 7)
            bytes += tail.bytes
            let expected = [UInt32](repeating: 5 & mask, count: 13) + packedValues + [UInt32](repeating: mask, count: 7)
            #expect(try Self.decode(bytes, bitWidth: width, count: expected.count) == expected, "width \(width)")
        }
    }
}
