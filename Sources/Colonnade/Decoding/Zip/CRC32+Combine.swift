/// Joining the checksums of adjacent pieces, so pieces can be checksummed on several threads.
extension CRC32 {
    /// The checksum of `a` followed by `b`, from `checksum(a)`, `checksum(b)` and `b`'s length.
    ///
    ///     CRC32.combine(CRC32.checksum(a), CRC32.checksum(b), length: b.count) == CRC32.checksum(a + b)
    ///
    /// The method is zlib's `crc32_combine`: append `length` zero bytes to `a`'s checksum by
    /// multiplying it by x^(8 × length) modulo the CRC polynomial (square-and-multiply over the
    /// table of x^(2^k)), then add `b`'s checksum.
    /// - Complexity: O(log length) multiplications of 32 steps each.
    package static func combine(_ first: UInt32, _ second: UInt32, length: Int) -> UInt32 {
        guard length > 0 else { return first }
        return multiplyModP(powerOfX(eightTimes: length), first) ^ second
    }

    private static let polynomial: UInt32 = 0xEDB8_8320

    /// a × b modulo the polynomial, in the reflected bit order of the CRC (bit 31 is x^0).
    private static func multiplyModP(_ a: UInt32, _ b: UInt32) -> UInt32 {
        var m: UInt32 = 1 << 31
        var p: UInt32 = 0
        var b = b
        while true {
            if a & m != 0 {
                p ^= b
                if a & (m &- 1) == 0 { break }
            }
            m >>= 1
            b = b & 1 != 0 ? (b >> 1) ^ polynomial : b >> 1
        }
        return p
    }

    /// x^(8 × n) modulo the polynomial.
    private static func powerOfX(eightTimes n: Int) -> UInt32 {
        var p: UInt32 = 1 << 31  // x^0
        var n = n
        var k = 3  // 8 = 2^3
        while n != 0 {
            if n & 1 != 0 { p = multiplyModP(powersOfTwo[k & 31], p) }
            n >>= 1
            k += 1
        }
        return p
    }

    /// x^(2^k) modulo the polynomial, k = 0…31.
    private static let powersOfTwo: [UInt32] = {
        var table = [UInt32](repeating: 0, count: 32)
        var p: UInt32 = 1 << 30  // x^1
        table[0] = p
        for k in 1 ..< 32 {
            p = multiplyModP(p, p)
            table[k] = p
        }
        return table
    }()
}
