/// Writes Parquet's RLE/bit-packed hybrid encoding (definition levels, dictionary indices).
///
/// A run of one repeated value is `varint(count << 1)` then the value in `ceil(bitWidth / 8)`
/// bytes; a bit-packed run is `varint(groups << 1 | 1)` then `groups` groups of eight values,
/// `bitWidth` bits each, least significant bit first.
struct RLEHybridEncoder {
    let bitWidth: Int
    var bytes: [UInt8] = []

    init(bitWidth: Int) { self.bitWidth = bitWidth }

    mutating func varint(_ value: Int) {
        var v = UInt64(value)
        while v >= 0x80 {
            bytes.append(UInt8(v & 0x7F) | 0x80)
            v >>= 7
        }
        bytes.append(UInt8(v))
    }

    /// `count` copies of `value`.
    mutating func appendRun(_ value: UInt32, count: Int) {
        guard count > 0 else { return }
        varint(count << 1)
        for k in 0 ..< (bitWidth + 7) / 8 { bytes.append(UInt8((value >> (8 * UInt32(k))) & 0xFF)) }
    }

    /// Bit width 1 only: the bits of `bits` (LSB first, `count` of them), bit-packed; the last
    /// group is padded with zeros (readers stop at the value count).
    mutating func appendBitPacked(_ bits: [UInt8], count: Int) {
        precondition(bitWidth == 1, "bit-packed runs are written for bit width 1 only")
        let groups = (count + 7) / 8
        guard groups > 0 else { return }
        varint(groups << 1 | 1)
        bytes.append(contentsOf: bits[0 ..< groups])
    }

    /// The bits needed for values up to `maxValue`.
    static func bitWidth(forMax maxValue: Int) -> Int {
        maxValue <= 0 ? 0 : (Int.bitWidth - maxValue.leadingZeroBitCount)
    }
}
