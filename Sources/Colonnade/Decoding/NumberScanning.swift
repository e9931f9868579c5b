/// The decoders' inline number path: reads a plain decimal token (`-`, up to 19 digits, an
/// optional fraction, no exponent) and converts it in the same pass, so the common case reads
/// each byte once instead of scanning for the delimiter and then parsing.
///
/// The conversion is `DecimalParser.parseDouble`'s own for such tokens — Clinger's exact fast
/// path (a significand ≤ 2^53 divided by an exact power of ten 10^0…22), else its
/// Eisel–Lemire step — so the result is the same bit for bit. Anything else (an exponent, a `+`,
/// more than 19 digits, a case Eisel–Lemire cannot decide) returns nil and the caller falls back
/// to `DecimalParser.parseDouble` on the whole token.
enum NumberScanning {
    /// Scans the token at `p` and converts it.
    ///
    /// - Returns: The value and the offset of the first byte after the digits, or nil when the
    ///   token is not in the fast grammar. The caller checks that a delimiter follows.
    @inline(__always)
    static func scanPlainDecimal(_ base: UnsafePointer<UInt8>, _ p: Int, _ end: Int) -> (value: Double, stop: Int)? {
        var q = p
        let negative = q < end && base[q] == UInt8(ascii: "-")
        if negative { q += 1 }
        var significand: UInt64 = 0
        let integerStart = q
        while q < end {
            let digit = base[q] &- UInt8(ascii: "0")
            if digit >= 10 { break }
            significand = significand &* 10 &+ UInt64(digit)
            q += 1
        }
        var digits = q - integerStart
        var fractionDigits = 0
        if q < end && base[q] == UInt8(ascii: ".") {
            q += 1
            let fractionStart = q
            while q < end {
                let digit = base[q] &- UInt8(ascii: "0")
                if digit >= 10 { break }
                significand = significand &* 10 &+ UInt64(digit)
                q += 1
            }
            fractionDigits = q - fractionStart
            digits += fractionDigits
        }
        // At most 19 digits: the significand did not wrap.
        guard digits > 0 && digits <= 19 else { return nil }
        if significand <= 1 << 53 && fractionDigits <= 22 {
            // Safe: significand ≤ 2^53 converts exactly; one IEEE division rounds correctly.
            var value = Double(Int64(bitPattern: significand))
            if fractionDigits > 0 { value /= DecimalParser._exactPowerOfTen(fractionDigits) }
            return (negative ? -value : value, q)
        }
        guard let magnitude = DecimalParser._eiselLemire(significand, -fractionDigits) else { return nil }
        return (Double(bitPattern: magnitude | (negative ? 1 << 63 : 0)), q)
    }
}
