/// Exact windows: `msum`, `mavg` and `mdev` over a column with a decimal scale (`DecimalScale`).
///
/// Each value becomes its exact decimal in scaled integers (`x·10^d`, below 2^52); window sums are
/// integer sums (Int64, or Int128 where Int64 could overflow), slid without error, and each
/// result is rounded once to Float64 (`quotient`). So a close equal to its decimal mean, or two
/// means equal in decimal arithmetic, compare equal — the answer does not depend on summation
/// order, nor on where evaluation began. NaN (null) in a window makes the result NaN, as in
/// `SeriesKernels`. A window of row `i` lies in `[i - n + 1, i]` and must lie within the segment
/// (rows before it are the ticker's first `n - 1`, null, or lookback rows the caller discards).
///
/// `mdev` is `sqrt((n·Σm² − (Σm)²) / (n(n−1)·10^2d))`: the quotient exact then rounded once,
/// the square root of that rounded (two roundings, not one); a window of equal values is exactly 0.
extension SeriesKernels {
    /// Whether `f` over `n` rows of a column with `scale` has an exact kernel: `msum`, `mavg` and
    /// `mdev`, where the integers cannot overflow Int128 (the sums of squares of 12-decimal prices
    /// in the hundreds of thousands can: those keep the floating-point kernel).
    static func hasExactKernel(_ f: ValueExpression.SeriesFunction, window n: Int, scale: DecimalScale) -> Bool {
        let big = scale.maxScaled * Double(n)
        switch f {
        case .msum, .mavg: return big < 8.0e37
        case .mdev: return big * big < 8.0e37 && Double(n) * Double(n) * DecimalScale.powers[2 * scale.digits] < 8.0e37
        default: return false
        }
    }

    /// Runs the exact kernel for `f` over `[s, e)` of the buffers (`ints`: scratch for as many).
    /// - Precondition: `hasExactKernel(f, window: n, scale: scale)`.
    static func runExact(
        _ f: ValueExpression.SeriesFunction, window n: Int, scale: DecimalScale,
        src: UnsafePointer<Double>, dst: UnsafeMutablePointer<Double>, s: Int, e: Int,
        ints: UnsafeMutablePointer<Int64>
    ) {
        let big = scale.maxScaled * Double(n)
        if s + n - 1 >= e {
            for i in s ..< e { dst[i] = .nan }
            return
        }
        // Safe throughout: indices within [s, e), inside the buffers.
        let p = DecimalScale.powers[scale.digits]
        var nulls = 0
        if scale.maxScaled < twoTo51 {
            // x·10^d lies within a quarter of its whole number (the scale's promise), below 2^51:
            // adding 1.5·2^52 rounds it to that whole number in the low bits, without a branch or
            // a conversion, so the loop vectorizes. No value is halfway, so this is `.rounded()`.
            // The nulls are counted from the bits (a NaN's magnitude bits exceed infinity's): a
            // count by `isNaN ? 1 : 0` kept the loop from vectorizing.
            var nans: UInt64 = 0
            for i in s ..< e {
                let x = src[i]
                let v = (x.isNaN ? 0 : x) * p
                ints[i] = Int64(bitPattern: (v + magic).bitPattern) &- magicBits
                nans &+= (infinityBits &- (x.bitPattern & magnitudeMask)) >> 63
            }
            nulls = Int(nans)
        } else {
            nulls = 1  // not counted: the kernels below count nulls themselves
            for i in s ..< e {
                let x = src[i]
                ints[i] = Int64(((x.isNaN ? 0 : x) * p).rounded())
            }
        }
        switch f {
        case .msum, .mavg:
            // n·10^d, exact in Double below 2^53 (so compared with 2^53 as the integer would be);
            // the Int128 conversions only where the sums need them.
            let small = f == .mavg ? Double(n) * p : p
            if big < twoTo51 && small < twoTo53 {
                if nulls == 0 {
                    slideSmallSumsWithoutNulls(n, ints, dst, s, e, divisor: small)
                } else {
                    slideSmallSums(n, src, ints, dst, s, e, divisor: small)
                }
                return
            }
            let divisor = f == .mavg ? Int128(n) * Int128(p) : Int128(p)
            if big < 9.0e18 {
                slideSums(n, src, ints, dst, s, e, as: Int64.self, divisor: divisor)
            } else {
                slideSums(n, src, ints, dst, s, e, as: Int128.self, divisor: divisor)
            }
        default:
            slideDeviation(n, src, ints, dst, s, e, p: p)
        }
    }

    /// Whether `f` over `n` rows of a column with `scale` can be read from the scaled prefix sums
    /// of its values (`scaledPrefixSums`, `windowsFromPrefix`): `msum` and `mavg` whose window
    /// sums stay below 2^51 and whose divisor is below 2^53 — the cases `runExact` slides in Int64
    /// (`slideSmallSumsWithoutNulls` when a segment has no null), with the same values.
    static func hasPrefixKernel(_ f: ValueExpression.SeriesFunction, window n: Int, scale: DecimalScale) -> Bool {
        guard f == .msum || f == .mavg else { return false }
        let p = DecimalScale.powers[scale.digits]
        // Exact products below 2^53, so the same decision as `runExact`'s Int128 divisor.
        let divisor = f == .mavg ? Double(n) * p : p
        return scale.maxScaled * Double(n) < twoTo51 && divisor < twoTo53
    }

    /// Prefix sums of the scaled values of `src[0 ..< count]`: `q[0] = 0` and `q[k + 1] = q[k] +
    /// x_k·10^d` (`count + 1` values), wrapping — a window's sum is the difference of two
    /// prefixes, exact modulo 2^64, so exact where it is below 2^51 in magnitude
    /// (`hasPrefixKernel`). A NaN (null) counts as 0 there; returns how many there were.
    /// - Precondition: `scale.maxScaled < 2^51`.
    static func scaledPrefixSums(
        _ src: UnsafePointer<Double>, count: Int, scale: DecimalScale, into q: UnsafeMutablePointer<Int64>
    ) -> Int {
        let p = DecimalScale.powers[scale.digits]
        let out = q + 1
        var nans: UInt64 = 0
        // Safe throughout: indices below `count`; `q` holds `count + 1` values.
        // Scaled as `runExact` scales (a loop that vectorizes), then summed in place.
        for i in 0 ..< count {
            let x = src[i]
            let v = (x.isNaN ? 0 : x) * p
            out[i] = Int64(bitPattern: (v + magic).bitPattern) &- magicBits
            nans &+= (infinityBits &- (x.bitPattern & magnitudeMask)) >> 63
        }
        q[0] = 0
        var sum: Int64 = 0
        for i in 0 ..< count {
            sum &+= out[i]
            out[i] = sum
        }
        return Int(nans)
    }

    /// `msum` or `mavg` over rows `[s, e)` of a buffer (rows of one ticker, none of them null),
    /// from prefix sums of their scaled values: `q[k]` is the sum of the values before buffer row
    /// `k` (`scaledPrefixSums`, from any start at or before `s`). The values `runExact` writes.
    /// - Precondition: `hasPrefixKernel(f, window: n, scale: scale)`.
    static func windowsFromPrefix(
        _ f: ValueExpression.SeriesFunction, window n: Int, scale: DecimalScale, prefix q: UnsafePointer<Int64>,
        dst: UnsafeMutablePointer<Double>, s: Int, e: Int
    ) {
        let first = s + n - 1  // the first row whose window lies inside the segment
        if first >= e {
            for i in s ..< e { dst[i] = .nan }
            return
        }
        for i in s ..< first { dst[i] = .nan }
        let p = DecimalScale.powers[scale.digits]
        let divisor = f == .mavg ? Double(n) * p : p
        // Row `first + k`'s window is rows `s + k ... first + k`: q[first + 1 + k] - q[s + k].
        // From pointers, so the loop has no index arithmetic to check, and vectorizes.
        let lead = q + (first + 1), lag = q + s
        let out = dst + first
        for k in 0 ..< e - first {
            let w = lead[k] &- lag[k]  // exact: |window sum| < 2^51
            out[k] = (Double(bitPattern: UInt64(bitPattern: w &+ magicBits)) - magic) / divisor
        }
    }

    @inline(__always)
    private static func slideSums<I: FixedWidthInteger & SignedInteger>(
        _ n: Int, _ src: UnsafePointer<Double>, _ ints: UnsafePointer<Int64>, _ dst: UnsafeMutablePointer<Double>,
        _ s: Int, _ e: Int, as _: I.Type, divisor den: Int128
    ) {
        let divisor = Double(den)
        let exactDivisor = divisor < twoTo53
        var sum: I = 0
        var nulls = 0
        for j in s ..< s + n - 1 {
            sum += I(ints[j])
            nulls &+= src[j].isNaN ? 1 : 0
            dst[j] = .nan
        }
        for i in s + n - 1 ..< e {
            sum += I(ints[i])
            nulls &+= src[i].isNaN ? 1 : 0
            let a = Double(sum)
            if nulls > 0 {
                dst[i] = .nan
            } else if exactDivisor && Swift.abs(a) < twoTo53 {
                dst[i] = a / divisor  // both exact: the division rounds once
            } else {
                dst[i] = quotient(Int128(sum), den)
            }
            let out = i - n + 1
            sum -= I(ints[out])
            nulls &-= src[out].isNaN ? 1 : 0
        }
    }

    private static func slideDeviation(
        _ n: Int, _ src: UnsafePointer<Double>, _ ints: UnsafePointer<Int64>,
        _ dst: UnsafeMutablePointer<Double>, _ s: Int, _ e: Int, p: Double
    ) {
        if n == 1 {
            for i in s ..< e { dst[i] = .nan }
            return
        }
        let count = Int128(n)
        let den = count * Int128(n - 1) * Int128(p) * Int128(p)
        let denDouble = Double(den)
        var sum: Int128 = 0, squares: Int128 = 0
        var nulls = 0
        for j in s ..< s + n - 1 {
            let m = Int128(ints[j])
            sum += m
            squares += m * m
            nulls &+= src[j].isNaN ? 1 : 0
            dst[j] = .nan
        }
        for i in s + n - 1 ..< e {
            let m = Int128(ints[i])
            sum += m
            squares += m * m
            nulls &+= src[i].isNaN ? 1 : 0
            if nulls > 0 {
                dst[i] = .nan
            } else {
                let numerator = count * squares - sum * sum  // n²·variance·10^2d·(n−1)/n ≥ 0, exact
                let a = Double(numerator)
                let variance = a < twoTo53 && denDouble < twoTo53 ? a / denDouble : quotient(numerator, den)
                dst[i] = variance.squareRoot()
            }
            let out = Int128(ints[i - n + 1])
            sum -= out
            squares -= out * out
            nulls &-= src[i - n + 1].isNaN ? 1 : 0
        }
    }

    private static let twoTo53 = 9_007_199_254_740_992.0
    private static let twoTo51 = 2_251_799_813_685_248.0
    /// 1.5·2^52: a Double in (−2^51, 2^51) added to it is rounded to a whole number, which the low
    /// bits of the sum's representation then hold (`magicBits` is the representation of `magic`).
    private static let magic = 6_755_399_441_055_744.0
    private static let magicBits = Int64(bitPattern: magic.bitPattern)
    /// The bits of +∞, and of a Double's magnitude: `(infinityBits &- (x.bits & magnitudeMask)) >> 63`
    /// is 1 exactly when `x` is NaN (its magnitude bits are above infinity's).
    private static let infinityBits = Double.infinity.bitPattern
    private static let magnitudeMask: UInt64 = 0x7FFF_FFFF_FFFF_FFFF

    /// `slideSums` where every window sum is below 2^51 and the divisor below 2^53 (so each mean
    /// is one correctly rounded division of two exact Doubles): the sums slide in one loop
    /// (converted to Double by the `magic` bits, exactly), the divisions run in a second one, which
    /// vectorizes. The same values as `slideSums`.
    private static func slideSmallSums(
        _ n: Int, _ src: UnsafePointer<Double>, _ ints: UnsafePointer<Int64>, _ dst: UnsafeMutablePointer<Double>,
        _ s: Int, _ e: Int, divisor: Double
    ) {
        var sum: Int64 = 0
        var nulls = 0
        for j in s ..< s + n - 1 {
            sum &+= ints[j]
            nulls &+= src[j].isNaN ? 1 : 0
            dst[j] = .nan
        }
        for i in s + n - 1 ..< e {
            sum &+= ints[i]
            nulls &+= src[i].isNaN ? 1 : 0
            let a = Double(bitPattern: UInt64(bitPattern: sum &+ magicBits)) - magic  // exact: |sum| < 2^51
            dst[i] = nulls > 0 ? .nan : a
            let out = i - n + 1
            sum &-= ints[out]
            nulls &-= src[out].isNaN ? 1 : 0
        }
        for i in s + n - 1 ..< e { dst[i] = dst[i] / divisor }
    }

    /// `slideSmallSums` over a segment without nulls: the window sums are differences of prefix
    /// sums (wrapping: a prefix may pass Int64's range, a window's sum, below 2^51, is still exact
    /// modulo 2^64), so the only serial step is one integer addition a row and the differences,
    /// conversions and divisions vectorize. The same values as `slideSmallSums` (the same exact
    /// sums, the same one division), four times as fast on I3's `mavg(volume, 20)`.
    private static func slideSmallSumsWithoutNulls(
        _ n: Int, _ ints: UnsafeMutablePointer<Int64>, _ dst: UnsafeMutablePointer<Double>,
        _ s: Int, _ e: Int, divisor: Double
    ) {
        var sum: Int64 = 0
        for i in s ..< e {  // prefix sums, in place
            sum &+= ints[i]
            ints[i] = sum
        }
        for j in s ..< s + n - 1 { dst[j] = .nan }
        let first = s + n - 1  // the first full window's row: its sum is the prefix itself
        dst[first] = (Double(bitPattern: UInt64(bitPattern: ints[first] &+ magicBits)) - magic) / divisor
        // From pointers, so the loop has no index arithmetic to check, and vectorizes.
        let lead = UnsafePointer(ints) + (first + 1), lag = UnsafePointer(ints) + (first + 1 - n)
        let out = dst + (first + 1)
        for k in 0 ..< e - first - 1 {
            let w = lead[k] &- lag[k]  // exact: |window sum| < 2^51
            out[k] = (Double(bitPattern: UInt64(bitPattern: w &+ magicBits)) - magic) / divisor
        }
    }

    /// `num / den` correctly rounded to Float64 (to nearest, ties to even).
    /// - Precondition: `den > 0` and `den < 2^126`.
    static func quotient(_ num: Int128, _ den: Int128) -> Double {
        if num == 0 { return 0 }
        let negative = num < 0
        let b = UInt128(den)
        var q = num.magnitude / b
        var r = num.magnitude % b
        var exponent = 0
        var sticky: UInt128 = 0
        // Bring q to 55 or 56 bits: below the 53 kept, a rounding bit and a sticky bit.
        while q >= 1 << 56 {
            sticky |= q & 1
            q >>= 1
            exponent += 1
        }
        while q < 1 << 55 {
            r <<= 1  // r < b < 2^126: no overflow
            q <<= 1
            if r >= b {
                q |= 1
                r -= b
            }
            exponent -= 1
        }
        if r != 0 { sticky = 1 }
        // q < 2^56 with its lowest bit sticky: the conversion rounds exactly as the infinite quotient.
        let value = Double(UInt64(q | sticky)) * Double(sign: .plus, exponent: exponent, significand: 1)
        return negative ? -value : value
    }
}
