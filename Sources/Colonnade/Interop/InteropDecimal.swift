/// DECIMAL values held as two's-complement integers of any width (Parquet's FIXED_LEN_BYTE_ARRAY
/// and BYTE_ARRAY decimals, big-endian; Arrow's decimal128 and decimal256, little-endian),
/// turned into the numbers a table stores.
///
/// A decimal is `unscaled × 10^−scale`. As Float64 it is correctly rounded: an exact division
/// when the unscaled integer and the power of ten are exact doubles (|unscaled| ≤ 2^53,
/// scale ≤ 22: IEEE division rounds the exact quotient once), else `Double(String)` of its
/// decimal text (glibc's `strtod`, correctly rounded). Whole decimals (scale 0, precision at most
/// 18) stay Int64.
enum InteropDecimal {
    /// The widest integer read: 64 bytes (a 512-bit unscaled value, beyond decimal256).
    static let maximumByteCount = 64

    /// The exact doubles 10^0 … 10^22.
    static let powersOfTen: [Double] = (0 ... 22).map { (k: Int) -> Double in
        var p = 1.0
        for _ in 0 ..< k { p *= 10 }
        return p
    }

    /// The integer's sign and magnitude as 32-bit limbs, least significant first.
    /// - Precondition: `bytes.count <= maximumByteCount`.
    static func magnitude(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool) -> (negative: Bool, limbs: [UInt32]) {
        let n = bytes.count
        guard n > 0 else { return (false, []) }
        // Byte i of the value, least significant first.
        func byte(_ i: Int) -> UInt8 { bigEndian ? bytes[n - 1 - i] : bytes[i] }
        let negative = byte(n - 1) & 0x80 != 0
        var limbs = [UInt32](repeating: 0, count: (n + 3) / 4)
        var carry: UInt32 = 1
        for i in 0 ..< n {
            var b = UInt32(byte(i))
            if negative {
                // Two's complement: invert, then add one.
                b = (~b & 0xFF) + carry
                carry = b >> 8
                b &= 0xFF
            }
            limbs[i / 4] |= b << UInt32(8 * (i % 4))
        }
        while let last = limbs.last, last == 0 { limbs.removeLast() }
        return (negative, limbs)
    }

    /// The integer as Int64, or nil when it does not fit.
    static func int64(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool) -> Int64? {
        let (negative, limbs) = magnitude(bytes, bigEndian: bigEndian)
        guard limbs.count <= 2 else { return nil }
        let m = limbs.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << UInt64(32 * $1.offset) }
        if negative { return m <= UInt64(Int64.max) + 1 ? Int64(truncatingIfNeeded: 0 &- m) : nil }
        return m <= UInt64(Int64.max) ? Int64(m) : nil
    }

    /// The decimal `integer × 10^−scale` as Float64, correctly rounded.
    static func double(_ bytes: UnsafeRawBufferPointer, bigEndian: Bool, scale: Int) -> Double {
        var (negative, limbs) = magnitude(bytes, bigEndian: bigEndian)
        if limbs.count <= 2 {
            let m = limbs.enumerated().reduce(UInt64(0)) { $0 | UInt64($1.element) << UInt64(32 * $1.offset) }
            if m <= 1 << 53 && scale >= 0 && scale <= 22 {
                let q = Double(m) / powersOfTen[scale]
                return negative ? -q : q
            }
        }
        // The decimal digits, by repeated division by 10^9 (at most 16 limbs).
        var groups: [UInt32] = []
        while !limbs.isEmpty {
            var remainder: UInt64 = 0
            for i in stride(from: limbs.count - 1, through: 0, by: -1) {
                let current = remainder << 32 | UInt64(limbs[i])
                limbs[i] = UInt32(current / 1_000_000_000)
                remainder = current % 1_000_000_000
            }
            groups.append(UInt32(remainder))
            while let last = limbs.last, last == 0 { limbs.removeLast() }
        }
        var text = negative ? "-" : ""
        if let top = groups.last { text += String(top) } else { text += "0" }
        for g in groups.dropLast().reversed() {
            let digits = String(g)
            text += String(repeating: "0", count: 9 - digits.count) + digits
        }
        text += "e\(-scale)"
        return Double(text) ?? .nan
    }

    /// The decimal `value × 10^−scale` of a whole Int64 as Float64, correctly rounded (as
    /// `double(_:bigEndian:scale:)`).
    static func double(_ value: Int64, scale: Int) -> Double {
        if value.magnitude <= 1 << 53 && scale >= 0 && scale <= 22 { return Double(value) / powersOfTen[scale] }
        return Double("\(value)e\(-scale)") ?? .nan
    }
}
