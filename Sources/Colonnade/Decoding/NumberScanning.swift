/// The decoders' inline number path: reads a plain decimal token (`-`, up to 19 digits, an
/// optional fraction, no exponent) and converts it in the same pass, so the common case reads
/// each byte once instead of scanning for the delimiter and then parsing.
///
/// Bytes are read eight at a time (SWAR: one unaligned little-endian load, a bit trick for the
/// first non-digit, three multiplies to combine up to eight digits; see `_scanDigits`): a short
/// token such as `36.44` or `1114527` is split and converted from a single load, and a longer
/// fraction (`118088.0`, `158.6164220654312`) from two or three loads without a loop
/// (`_scanUnsigned`); other digit runs a load per eight digits. Only within the last bytes
/// before `end` is a run read a byte at a time, so no load reads past `end`, and a token's
/// digit count costs no branch per digit. On the medium data set's 12 M JSON numbers (72 % of up
/// to seven bytes, 16 % of eight or nine, 11 % of 16 to 18) a scan took 7.0 ns a number on
/// average with the two- and three-word paths and 9.3 ns without them (one thread, tokens
/// scanned independently; 7.6 against 9.1–10.1 ns when each start depends on the previous stop,
/// as in a row).
///
/// The conversion is `DecimalParser.parseDouble`'s own for such tokens — Clinger's exact fast
/// path (a significand ≤ 2^53 divided by an exact power of ten 10^0…22), else its
/// Eisel–Lemire step — so the result is the same bit for bit. Anything else (an exponent, a `+`,
/// more than 19 digits, a case Eisel–Lemire cannot decide) returns nil and the caller falls back
/// to `DecimalParser.parseDouble` on the whole token.
enum NumberScanning {
    /// Scans the token at `p` and converts it.
    ///
    /// Reads only bytes in `[p, end)`.
    ///
    /// An unsigned token with its point in the first eight bytes is read from one to three
    /// eight-byte loads by `_scanUnsigned`, inlined into the decoders' loops; anything else (a
    /// sign, eight or more integer digits, a token near `end`) by `_scanAny`, out of line.
    ///
    /// Both this and `_scanUnsigned` are `@_transparent`: with `@inline(__always)` the optimizer
    /// still called them out of line from the decoders' long row loops (a call, six register
    /// saves and the constants reloaded per number). Inlined, a one-thread import of the medium
    /// CSV took 0.91–0.95 s instead of 1.01–1.05 s, and of the medium JSON 1.14–1.22 s instead
    /// of 1.22–1.45 s (five alternating runs each).
    ///
    /// - Returns: The value and the offset of the first byte after the digits, or nil when the
    ///   token is not in the fast grammar. The caller checks that a delimiter follows.
    @_transparent
    static func scanPlainDecimal(_ base: UnsafePointer<UInt8>, _ p: Int, _ end: Int) -> (value: Double, stop: Int)? {
        if end &- p >= 8 {
            // Safe: p + 8 ≤ end, and an unaligned load is allowed for any address.
            let word = UInt64(littleEndian: UnsafeRawPointer(base + p).loadUnaligned(as: UInt64.self))
            // The sign is tested on the loaded word, by a branch, not by a load the next one
            // depends on: in a decoder's row, each token's start depends on the previous one's
            // stop, and that chain of loads is what bounds a row's decoding.
            if word & 0xFF != UInt64(UInt8(ascii: "-")), let scanned = _scanUnsigned(base, p, end, word) {
                return scanned
            }
        }
        return _scanAny(base, p, end)
    }

    /// The unsigned token at `q`, whose first eight bytes are `word`, when its point (or its end)
    /// lies in those bytes and it has at most 19 digits; else nil.
    ///
    /// `36.44` or `1114527`: the digits split at the first non-digit of `word` and, after a
    /// point, at the next one. `118088.0` or `2.7182818284590`: the fraction runs into the
    /// next word (up to its first non-digit) or through it into a third (at most four digits
    /// there): the first word's seven digits around the point, then eight, then the rest, each
    /// group converted by `_eightDigits`. The conversion is `_scanAny`'s: Clinger's exact division
    /// for a significand ≤ 2^53, else Eisel–Lemire (nil when it cannot decide).
    @_transparent
    static func _scanUnsigned(_ base: UnsafePointer<UInt8>, _ q: Int, _ end: Int, _ word: UInt64) -> (value: Double, stop: Int)? {
        // XOR, not subtraction: no borrow out of the '.' into the fraction's first digit.
        let x = word ^ 0x3030_3030_3030_3030
        let flags = ((x &+ 0x7676_7676_7676_7676) | x) & 0x8080_8080_8080_8080
        guard flags != 0 else { return nil }  // eight or more integer digits
        let n = flags.trailingZeroBitCount &>> 3  // integer digits, 0…7
        let integer = x & ((1 &<< UInt64(8 &* n)) &- 1)
        if (word &>> UInt64(8 &* n)) & 0xFF != UInt64(UInt8(ascii: ".")) {
            // No fraction: the digits end at byte n.
            guard n > 0 else { return nil }
            return (Double(_eightDigits(integer &<< UInt64(64 &- 8 &* n))), q &+ n)
        }
        // '.' adds no carry to the byte after it, so the next flag is the next non-digit.
        let after = flags & (flags &- 1)
        if after != 0 {
            let m = after.trailingZeroBitCount &>> 3  // n + 1 … 7
            let fractionDigits = m &- n &- 1
            let count = n &+ fractionDigits
            guard count > 0 else { return nil }
            let fraction = (x &>> UInt64(8 &* n &+ 8)) & ((1 &<< UInt64(8 &* fractionDigits)) &- 1)
            // The integer digits, then the fraction's, as one run of `count` ≤ 6 digits.
            let digits = integer | (fraction &<< UInt64(8 &* n))
            // Safe: fewer than 10^6 < 2^53, so Clinger's path, exactly as for the long way. The
            // divisor is converted from `_powerOfTen`'s table (exact below 2^53): the `switch` of
            // `_exactPowerOfTen` became a jump table here, an indirect branch mispredicted as the
            // fraction's length varies (a one-thread CSV import: 1.07–1.12 s → 0.99–1.06 s).
            let value = Double(_eightDigits(digits &<< UInt64(64 &- 8 &* count))) / Double(_powerOfTen(fractionDigits))
            return (value, q &+ m)
        }
        // Every byte after the point is a digit: the word's seven digits with the point taken
        // out (two shifts, so that n == 7 gives no fraction digits), as the top of eight.
        guard end &- q >= 16 else { return nil }
        let first = _eightDigits((integer | (((x &>> 8) &>> UInt64(8 &* n)) &<< UInt64(8 &* n))) &<< 8)
        // Safe: q + 16 ≤ end.
        let x2 = UInt64(littleEndian: UnsafeRawPointer(base + (q &+ 8)).loadUnaligned(as: UInt64.self)) ^ 0x3030_3030_3030_3030
        let flags2 = ((x2 &+ 0x7676_7676_7676_7676) | x2) & 0x8080_8080_8080_8080
        if flags2 != 0 {
            let k = flags2.trailingZeroBitCount &>> 3  // fraction digits in the second word, 0…7
            let rest = _eightDigits(((x2 & ((1 &<< UInt64(8 &* k)) &- 1)) &<< 8) &<< UInt64(56 &- 8 &* k))
            // Safe: at most 14 digits < 2^53 and 14 fraction digits: Clinger's exact division.
            let significand = first &* _powerOfTen(k) &+ rest
            let value = Double(Int64(bitPattern: significand)) / DecimalParser._exactPowerOfTen(7 &- n &+ k)
            return (value, q &+ 8 &+ k)
        }
        guard end &- q >= 24 else { return nil }
        // Safe: q + 24 ≤ end.
        let x3 = UInt64(littleEndian: UnsafeRawPointer(base + (q &+ 16)).loadUnaligned(as: UInt64.self)) ^ 0x3030_3030_3030_3030
        let flags3 = ((x3 &+ 0x7676_7676_7676_7676) | x3) & 0x8080_8080_8080_8080
        let k = flags3.trailingZeroBitCount &>> 3  // 8 when the third word is all digits
        // At most 7 + 8 + 4 = 19 digits: the significand cannot wrap.
        guard k <= 4 else { return nil }
        let rest = _eightDigits(((x3 & ((1 &<< UInt64(8 &* k)) &- 1)) &<< 8) &<< UInt64(56 &- 8 &* k))
        let significand = (first &* 100_000_000 &+ _eightDigits(x2)) &* _powerOfTen(k) &+ rest
        let fractionDigits = 15 &- n &+ k  // ≤ 19 ≤ 22
        if significand <= 1 << 53 {
            // Safe: significand ≤ 2^53 converts exactly; one IEEE division rounds correctly.
            return (Double(Int64(bitPattern: significand)) / DecimalParser._exactPowerOfTen(fractionDigits), q &+ 16 &+ k)
        }
        guard let magnitude = DecimalParser._eiselLemire(significand, -fractionDigits) else { return nil }
        return (Double(bitPattern: magnitude), q &+ 16 &+ k)
    }

    /// Any token of the fast grammar (signed, long, or near `end`): a negative one read as
    /// `_scanUnsigned` reads the digits after its sign, else `_scanDigits` a word at a time. (An
    /// unsigned token with eight bytes before `end` is here because `_scanUnsigned` gave up.)
    @inline(never)
    static func _scanAny(_ base: UnsafePointer<UInt8>, _ p: Int, _ end: Int) -> (value: Double, stop: Int)? {
        var q = p
        let negative = q < end && base[q] == UInt8(ascii: "-")
        if negative { q += 1 }
        if negative && end &- q >= 8 {
            // Safe: q + 8 ≤ end, and an unaligned load is allowed for any address.
            let word = UInt64(littleEndian: UnsafeRawPointer(base + q).loadUnaligned(as: UInt64.self))
            if let (value, stop) = _scanUnsigned(base, q, end, word) { return (-value, stop) }
        }
        var significand: UInt64 = 0
        let integerStart = q
        q = _scanDigits(base, q, end, &significand)
        var digits = q - integerStart
        var fractionDigits = 0
        if q < end && base[q] == UInt8(ascii: ".") {
            q += 1
            let fractionStart = q
            q = _scanDigits(base, q, end, &significand)
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

    /// Reads the run of ASCII digits at `q` (possibly empty) into `significand` (×10 and add per
    /// digit, wrapping past 19 digits as the byte loop would) and returns the offset of the first
    /// byte that is not a digit, or `end`.
    ///
    /// Eight bytes at a time while at least eight remain: `d = word − 0x30…30` per byte (first
    /// byte in the low byte); a byte is a digit when `d < 10`, so `(d + 0x76) | d` has its high
    /// bit set exactly for the non-digits. A borrow or carry only crosses out of a non-digit, so
    /// the bytes before the first non-digit are exact and the lowest flagged byte is that
    /// non-digit. Shifting `d` left by 8 × (8 − n) keeps the n digits as the top bytes, zeros below
    /// (leading zeros), and `_eightDigits` turns that into their value.
    @inline(__always)
    static func _scanDigits(_ base: UnsafePointer<UInt8>, _ q: Int, _ end: Int, _ significand: inout UInt64) -> Int {
        var q = q
        var s = significand
        while end &- q >= 8 {
            // Safe: q + 8 ≤ end, and an unaligned load is allowed for any address.
            let word = UInt64(littleEndian: UnsafeRawPointer(base + q).loadUnaligned(as: UInt64.self))
            let d = word &- 0x3030_3030_3030_3030
            let nonDigits = ((d &+ 0x7676_7676_7676_7676) | d) & 0x8080_8080_8080_8080
            if nonDigits == 0 {
                s = s &* 100_000_000 &+ _eightDigits(d)
                q &+= 8
                continue
            }
            let n = nonDigits.trailingZeroBitCount &>> 3  // 0…7 digits
            // Two shifts so that n == 0 gives 0 (a single shift by 64 would be masked to 0).
            s = s &* _powerOfTen(n) &+ _eightDigits((d &<< 8) &<< UInt64(56 &- 8 &* n))
            significand = s
            return q &+ n
        }
        while q < end {
            let digit = base[q] &- UInt8(ascii: "0")
            if digit >= 10 { break }
            s = s &* 10 &+ UInt64(digit)
            q &+= 1
        }
        significand = s
        return q
    }

    /// The value of eight decimal digits, one per byte (0…9 each), the first digit in the low
    /// byte: pairs (×10), then quads (×100) and the two quads (×10^4) in one multiply-add each.
    @inline(__always)
    static func _eightDigits(_ digits: UInt64) -> UInt64 {
        // Byte 2i becomes the two-digit number of bytes 2i and 2i+1 (≤ 99: no carry).
        let pairs = digits &* 10 &+ (digits &>> 8)
        let mask: UInt64 = 0x0000_00FF_0000_00FF
        // pair0 × 10^6 + pair1 × 10^4 + pair2 × 10^2 + pair3, gathered in the top 32 bits.
        let high = (pairs & mask) &* (100 &+ (1_000_000 &<< 32))
        let low = ((pairs &>> 16) & mask) &* (1 &+ (10_000 &<< 32))
        return (high &+ low) &>> 32
    }

    /// 10^`n` for 0…7.
    @inline(__always)
    static func _powerOfTen(_ n: Int) -> UInt64 {
        switch n {
        case 0: return 1
        case 1: return 10
        case 2: return 100
        case 3: return 1_000
        case 4: return 10_000
        case 5: return 100_000
        case 6: return 1_000_000
        default: return 10_000_000
        }
    }
}
