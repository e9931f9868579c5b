/// Decimal text → `Double`, straight from bytes, correctly rounded.
///
/// The result equals `Double(String(decoding: bytes, as: UTF8.self))!` bit for bit for every
/// accepted input (nearest, ties to even; `-0.0` kept; overflow to ±infinity; underflow to ±0),
/// without building a `String` and without allocating on any common path.
///
///     let price = "158.61642206543".utf8.withContiguousStorageIfAvailable {
///         DecimalParser.parseDouble($0.baseAddress!, count: $0.count)
///     }
///
/// How a number is converted (see docs/ARCHITECTURE.md, "Decoding"):
/// 1. One pass reads sign, digits, the decimal point and the exponent; up to 19 significant
///    digits go into a `UInt64`.
/// 2. Clinger's fast path: a significand ≤ 2^53 times an exact power of ten 10^±0…22 is one
///    correctly rounded IEEE multiply or divide.
/// 3. Otherwise Eisel–Lemire (`EiselLemire.swift`) with a 128-bit table of powers of five.
/// 4. When that cannot decide — more than 19 significant digits where the truncated
///    significand w and w + 1 round differently, or a product too close to a halfway point —
///    a rare slow path defers to the standard library's own conversion.
public enum DecimalParser {
    /// Parses exactly the bytes `[start, start + count)` as a decimal number.
    ///
    /// Accepted grammar, nothing else (no whitespace, `inf`, `nan`, hex or trailing bytes):
    ///
    ///     [+-]? ( digits ( '.' digits? )? | '.' digits ) ( [eE] [+-]? digits )?
    ///
    /// - Parameters:
    ///   - start: The first byte.
    ///   - count: The number of bytes to parse; `0` gives `nil`.
    /// - Returns: The correctly rounded `Double` (identical to `Double(String)`), or `nil` if the
    ///   bytes are not a decimal number in the grammar above.
    /// - Complexity: O(`count`); no allocation unless more than 19 significant digits leave the
    ///   rounding ambiguous.
    @inlinable
    public static func parseDouble(_ start: UnsafePointer<UInt8>, count: Int) -> Double? {
        guard count > 0 else { return nil }
        let end = start + count
        var p = start
        let negative = p.pointee == UInt8(ascii: "-")
        if negative || p.pointee == UInt8(ascii: "+") { p += 1 }

        // Digits before the point. The significand wraps if there are more than 19 digits;
        // that case is redone carefully below.
        var significand: UInt64 = 0
        let integerStart = p
        while p < end {
            let digit = p.pointee &- UInt8(ascii: "0")
            if digit >= 10 { break }
            significand = significand &* 10 &+ UInt64(digit)
            p += 1
        }
        let integerEnd = p

        // Digits after the point.
        var fractionStart = p
        if p < end && p.pointee == UInt8(ascii: ".") {
            p += 1
            fractionStart = p
            while p < end {
                let digit = p.pointee &- UInt8(ascii: "0")
                if digit >= 10 { break }
                significand = significand &* 10 &+ UInt64(digit)
                p += 1
            }
        }
        let fractionEnd = p
        let fractionDigits = fractionEnd - fractionStart
        let digitCount = (integerEnd - integerStart) + fractionDigits
        if digitCount == 0 { return nil }

        // The value is significand × 10^exponent.
        var exponent = -fractionDigits
        if p < end {
            guard p.pointee | 0x20 == UInt8(ascii: "e") else { return nil }
            p += 1
            var exponentIsNegative = false
            if p < end && (p.pointee == UInt8(ascii: "-") || p.pointee == UInt8(ascii: "+")) {
                exponentIsNegative = p.pointee == UInt8(ascii: "-")
                p += 1
            }
            let exponentStart = p
            var explicit = 0
            while p < end {
                let digit = p.pointee &- UInt8(ascii: "0")
                if digit >= 10 { break }
                // Saturate: anything past 2^48 already means ±infinity or ±0 for any input
                // shorter than 2^47 bytes, and the sums below cannot overflow.
                if explicit < 1 << 48 { explicit = explicit &* 10 &+ Int(digit) }
                p += 1
            }
            guard p != exponentStart else { return nil }
            exponent &+= exponentIsNegative ? -explicit : explicit
        }
        guard p == end else { return nil }

        if digitCount > 19 {
            return _parseLongSignificand(
                start, count: count, negative: negative, integerStart: integerStart,
                integerEnd: integerEnd, fractionStart: fractionStart, fractionEnd: fractionEnd,
                exponentAfterDigits: exponent + fractionDigits)
        }

        // Clinger: both operands exact, so one IEEE operation rounds correctly.
        if exponent >= -22 && exponent <= 22 && significand <= 1 << 53 {
            // Safe: significand ≤ 2^53, so the signed conversion is exact.
            var value = Double(Int64(bitPattern: significand))
            if exponent < 0 {
                value /= _exactPowerOfTen(-exponent)
            } else {
                value *= _exactPowerOfTen(exponent)
            }
            return negative ? -value : value
        }

        if let magnitude = _eiselLemire(significand, exponent) {
            return Double(bitPattern: magnitude | (negative ? 1 << 63 : 0))
        }
        return _parseSlowly(start, count: count)
    }

    /// 10^`power` as a `Double`, exact for 0...22.
    ///
    /// A `switch` rather than a global array: LLVM turns it into a constant lookup table, with
    /// no lazy-initialisation check at the call site in client modules.
    @inlinable @inline(__always)
    internal static func _exactPowerOfTen(_ power: Int) -> Double {
        switch power {
        case 0: return 1e0
        case 1: return 1e1
        case 2: return 1e2
        case 3: return 1e3
        case 4: return 1e4
        case 5: return 1e5
        case 6: return 1e6
        case 7: return 1e7
        case 8: return 1e8
        case 9: return 1e9
        case 10: return 1e10
        case 11: return 1e11
        case 12: return 1e12
        case 13: return 1e13
        case 14: return 1e14
        case 15: return 1e15
        case 16: return 1e16
        case 17: return 1e17
        case 18: return 1e18
        case 19: return 1e19
        case 20: return 1e20
        case 21: return 1e21
        default: return 1e22
        }
    }

    /// More than 19 digits: keeps the first 19 significant ones (leading zeros do not count) and
    /// notes whether any dropped digit is non-zero. If so, the true value lies strictly between
    /// w × 10^q and (w + 1) × 10^q; when both round to the same `Double`, so does the value.
    ///
    /// - Parameter exponentAfterDigits: the explicit exponent (after `e`), saturated.
    @usableFromInline @inline(never)
    internal static func _parseLongSignificand(
        _ start: UnsafePointer<UInt8>, count: Int, negative: Bool,
        integerStart: UnsafePointer<UInt8>, integerEnd: UnsafePointer<UInt8>,
        fractionStart: UnsafePointer<UInt8>, fractionEnd: UnsafePointer<UInt8>,
        exponentAfterDigits: Int
    ) -> Double {
        var significand: UInt64 = 0
        var taken = 0  // significant digits in `significand`
        var exponent = exponentAfterDigits
        var dropsNonZero = false

        var p = integerStart
        while p < integerEnd {
            let digit = p.pointee &- UInt8(ascii: "0")
            if taken < 19 {
                if taken != 0 || digit != 0 {
                    significand = significand &* 10 &+ UInt64(digit)
                    taken += 1
                }
            } else {
                exponent += 1
                if digit != 0 { dropsNonZero = true }
            }
            p += 1
        }
        p = fractionStart
        while p < fractionEnd && taken < 19 {
            let digit = p.pointee &- UInt8(ascii: "0")
            exponent -= 1
            if taken != 0 || digit != 0 {
                significand = significand &* 10 &+ UInt64(digit)
                taken += 1
            }
            p += 1
        }
        while p < fractionEnd && !dropsNonZero {
            if p.pointee != UInt8(ascii: "0") { dropsNonZero = true }
            p += 1
        }

        let sign: UInt64 = negative ? 1 << 63 : 0
        if !dropsNonZero {
            if exponent >= -22 && exponent <= 22 && significand <= 1 << 53 {
                var value = Double(Int64(bitPattern: significand))
                if exponent < 0 {
                    value /= _exactPowerOfTen(-exponent)
                } else {
                    value *= _exactPowerOfTen(exponent)
                }
                return negative ? -value : value
            }
            if let magnitude = _eiselLemire(significand, exponent) {
                return Double(bitPattern: magnitude | sign)
            }
        } else if let low = _eiselLemire(significand, exponent),
            let high = _eiselLemire(significand + 1, exponent), low == high
        {
            return Double(bitPattern: low | sign)
        }
        return _parseSlowly(start, count: count)!
    }

    /// The rare undecided case: the standard library's own correctly rounded conversion.
    ///
    /// Deliberately `Double(String)` rather than `strtod` on a stack copy: it is the reference
    /// this parser must match, and unlike `strtod` it ignores the process's C locale.
    ///
    /// A token of more than `_slowTokenLimit` bytes (only a hostile input has one: a field of a
    /// gigabyte of digits would otherwise be copied whole into a `String`) is first rewritten by
    /// `_boundedDecimal` to at most about 830 bytes that round alike.
    @usableFromInline @inline(never)
    internal static func _parseSlowly(_ start: UnsafePointer<UInt8>, count: Int) -> Double? {
        if count > _slowTokenLimit {
            return _boundedDecimal(start, count: count).flatMap { Double($0) }
        }
        return Double(String(decoding: UnsafeBufferPointer(start: start, count: count), as: UTF8.self))
    }

    /// Tokens longer than this are rewritten before the slow conversion.
    @usableFromInline static let _slowTokenLimit = 1024

    /// The significant digits `_boundedDecimal` keeps.
    static let _keptDigits = 800

    /// The token (in `parseDouble`'s grammar) as `[-]0.DIGITSe±E` with at most `_keptDigits`
    /// significant digits, and a `1` after them when a dropped digit is not zero; nil for bytes
    /// outside the grammar.
    ///
    /// Why it rounds alike: every `Double` and every midpoint between two neighbours has at most
    /// 767 significant digits. Keeping the first 800 gives T, a multiple of 10^(E − 800) for the
    /// leading digit's place E; no number of at most 767 significant digits lies strictly
    /// between T and T + 10^(E − 800). When digits were dropped, the value and T with a `1`
    /// appended both lie strictly inside that interval (else the value is T), so no rounding
    /// boundary (a midpoint, the overflow threshold, half the smallest subnormal) separates them.
    /// The exponent is clamped to ±100,000, where every value is already 0 or infinite.
    static func _boundedDecimal(_ start: UnsafePointer<UInt8>, count: Int) -> String? {
        var p = 0
        let negative = count > 0 && start[0] == UInt8(ascii: "-")
        if count > 0 && (start[0] == UInt8(ascii: "-") || start[0] == UInt8(ascii: "+")) { p = 1 }
        var digits: [UInt8] = []
        digits.reserveCapacity(_keptDigits + 1)
        var dropsNonZero = false, sawDigit = false, sawPoint = false
        var exponent = 0  // the value is 0.DIGITS × 10^exponent
        while p < count {
            let b = start[p]
            if b == UInt8(ascii: ".") && !sawPoint {
                sawPoint = true
            } else if b &- UInt8(ascii: "0") < 10 {
                sawDigit = true
                if digits.isEmpty && b == UInt8(ascii: "0") {
                    if sawPoint { exponent -= 1 }  // a leading zero after the point
                } else {
                    if digits.count < _keptDigits { digits.append(b) } else if b != UInt8(ascii: "0") { dropsNonZero = true }
                    if !sawPoint { exponent += 1 }
                }
            } else {
                break
            }
            p += 1
        }
        guard sawDigit else { return nil }
        if p < count {
            guard start[p] | 0x20 == UInt8(ascii: "e") else { return nil }
            p += 1
            var exponentIsNegative = false
            if p < count && (start[p] == UInt8(ascii: "-") || start[p] == UInt8(ascii: "+")) {
                exponentIsNegative = start[p] == UInt8(ascii: "-")
                p += 1
            }
            let exponentStart = p
            var explicit = 0
            while p < count, start[p] &- UInt8(ascii: "0") < 10 {
                // Saturate, as parseDouble does.
                if explicit < 1 << 48 { explicit = explicit &* 10 &+ Int(start[p] &- UInt8(ascii: "0")) }
                p += 1
            }
            guard p > exponentStart else { return nil }
            exponent += exponentIsNegative ? -explicit : explicit
        }
        guard p == count else { return nil }
        guard !digits.isEmpty else { return negative ? "-0" : "0" }
        if dropsNonZero { digits.append(UInt8(ascii: "1")) }
        let clamped = Swift.min(Swift.max(exponent, -100_000), 100_000)
        return (negative ? "-0." : "0.") + String(decoding: digits, as: UTF8.self) + "e\(clamped)"
    }
}
