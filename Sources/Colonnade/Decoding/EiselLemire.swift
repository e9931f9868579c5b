// Eisel–Lemire: w × 10^q → the nearest Double, from one (rarely two) 64×64→128-bit products
// with a truncated 128-bit power of five. After Daniel Lemire, "Number Parsing at a Gigabyte per
// Second" (Software: Practice and Experience, 2021), as in fast_float's `compute_float`, Go's
// strconv `eiselLemire64` and Rust core's dec2flt `lemire`.

extension DecimalParser {
    /// The bit pattern (sign bit clear) of the `Double` nearest to `w` × 10^`q`, or `nil` when
    /// the truncated product is too close to a rounding boundary to decide.
    ///
    /// - Complexity: O(1): one or two wide multiplications.
    @usableFromInline
    internal static func _eiselLemire(_ w: UInt64, _ q: Int) -> UInt64? {
        // w < 2^64 and 10^-343 × 2^64 < 2^-1075 (half the least subnormal): zero.
        if w == 0 || q < _smallestPowerOfFive { return 0 }
        // w ≥ 1 and 10^309 > Double.greatestFiniteMagnitude: infinity.
        if q > _largestPowerOfFive { return 0x7FF0_0000_0000_0000 }

        let leadingZeros = w.leadingZeroBitCount
        let normalized = w &<< UInt64(leadingZeros)
        let index = 2 &* (q &- _smallestPowerOfFive)
        let powers = _powersOfFive128

        // The top 64 bits of the product. Only 55 of them matter (52 mantissa bits, the
        // implicit bit, a rounding bit, and one for the leading-bit position); when the 9
        // below those are all ones, a carry from the second table word could still reach them.
        var (high, low) = normalized.multipliedFullWidth(by: powers[index])
        if high & 0x1FF == 0x1FF {
            let (secondHigh, _) = normalized.multipliedFullWidth(by: powers[index &+ 1])
            let (sum, carry) = low.addingReportingOverflow(secondHigh)
            low = sum
            if carry { high &+= 1 }
        }
        // Conservative guard kept from the original algorithm (Mushtak & Lemire have since
        // shown it never fires): outside q in -27...55 the 128-bit power is itself truncated.
        if low == .max && (q < -27 || q > 55) { return nil }

        let upperBit = Int(high &>> 63)
        let shift = UInt64(upperBit &+ 64 &- 52 &- 3)
        var mantissa = high &>> shift
        // floor(log2(10^q)) + 63, plus the bias 1023.
        var power2 = ((217_706 &* q) &>> 16) &+ 63 &+ upperBit &- leadingZeros &+ 1023

        if power2 <= 0 {
            // Subnormal (or zero): shift into place, round half up (ties cannot occur here).
            if -power2 &+ 1 >= 64 { return 0 }
            mantissa &>>= UInt64(-power2 &+ 1)
            mantissa &+= mantissa & 1
            mantissa &>>= 1
            // Rounding up may carry into the smallest normal exponent; OR keeps that right.
            power2 = mantissa < 1 << 52 ? 0 : 1
            return UInt64(power2) &<< 52 | mantissa
        }

        // Exactly halfway between two Doubles (possible only for q in -4...23, where the
        // product is exact): round to even rather than up.
        if low <= 1 && q >= -4 && q <= 23 && mantissa & 3 == 1
            && mantissa &<< shift == high
        {
            mantissa &= ~1
        }
        mantissa &+= mantissa & 1
        mantissa &>>= 1
        if mantissa >= 2 << 52 {
            mantissa = 1 << 52
            power2 &+= 1
        }
        mantissa &= ~(1 << 52)
        if power2 >= 0x7FF { return 0x7FF0_0000_0000_0000 }
        return UInt64(power2) &<< 52 | mantissa
    }
}
