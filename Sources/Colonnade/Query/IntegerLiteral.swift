/// An integer written in a query (digits only: no fraction, no exponent) that a Double cannot hold
/// exactly, such as `9007199254740993` (2⁵³ + 1) or `9223372036854775807` (Int64.max).
///
/// Such a literal is kept exactly so that a comparison with it is exact: `volume > 9007199254740993`
/// compares the Int64 column with that integer, not with the nearest Double (9007199254740992);
/// on Float64, Float32 and Int32 columns the values are compared with the integer as real numbers.
/// Arithmetic on the literal (`9007199254740993 + 1`) is floating-point, on `rounded`, like all
/// arithmetic in expressions. A literal with a fraction or an exponent (`9007199254740993.0`,
/// `9.007199254740993e15`) is a floating-point number, rounded to the nearest Double.
struct IntegerLiteral: Sendable, Equatable {
    /// The nearest Double (infinite past the largest finite Double).
    var rounded: Double
    /// The exact value when it lies within Int64's range.
    var exact: Int64?
    /// The sign of `literal − rounded`: -1, 0 (the Double is exact) or 1.
    var direction: Int

    /// The literal of an Int64 value.
    init(_ value: Int64) {
        rounded = Double(value)
        exact = value
        // 2⁶³ (Double(Int64.max)) is one past every Int64; below it the Double converts back exactly.
        if rounded >= 9_223_372_036_854_775_808 {
            direction = -1
        } else {
            // Safe: -2⁶³ <= rounded < 2⁶³ and rounded is integral (every Double of this size is).
            let back = Int64(rounded)
            direction = value > back ? 1 : (value < back ? -1 : 0)
        }
    }

    /// The literal written as `digits` (ASCII digits only), or nil when its nearest Double is
    /// exact (the literal is then a plain number) or the text is not digits.
    init?(digits: some Collection<UInt8>) {
        guard digits.allSatisfy({ $0 >= 48 && $0 <= 57 }) else { return nil }
        let significant = Array(digits.drop { $0 == UInt8(ascii: "0") })
        // Up to 15 digits, every integer is below 2⁵³ and so exactly a Double.
        if significant.count <= 15 { return nil }
        guard let d = Double(String(decoding: significant, as: UTF8.self)) else { return nil }
        let c: Int
        if d.isInfinite {
            c = -1  // a finite integer below +∞
        } else {
            c = IntegerLiteral.compareDecimal(significant, IntegerLiteral.decimalDigits(of: d))
        }
        if c == 0 { return nil }
        rounded = d
        direction = c
        exact = Int64(String(decoding: significant, as: UTF8.self))
    }

    private init(rounded: Double, exact: Int64?, direction: Int) {
        self.rounded = rounded
        self.exact = exact
        self.direction = direction
    }

    /// `-literal`.
    var negated: IntegerLiteral {
        // Int64.min has no negation in Int64 (it cannot occur: 2⁶³ is a Double, so that literal is
        // a plain number); it is dropped, not trapped on.
        let e = exact.flatMap { $0 == .min ? nil : -$0 }
        return IntegerLiteral(rounded: -rounded, exact: e, direction: -direction)
    }

    /// The Double bound that admits exactly the Doubles the literal admits as a bound: no Double
    /// lies strictly between the literal and `rounded`, so `x >= L` is `x > rounded` when the
    /// literal is above its Double, and `x >= rounded` when below.
    func doubleBound(lower: Bool, inclusive: Bool) -> (value: Double, inclusive: Bool) {
        if direction == 0 { return (rounded, inclusive) }
        if lower { return (rounded, direction < 0) }
        return (rounded, direction > 0)
    }

    /// Double bounds admitting exactly the Doubles that lie within the integer bounds.
    static func doubleBounds(_ b: RangeBounds<Int64>) -> RangeBounds<Double> {
        var r = RangeBounds<Double>()
        if let lo = b.lower {
            let (v, i) = IntegerLiteral(lo).doubleBound(lower: true, inclusive: b.lowerInclusive)
            r.lower = v
            r.lowerInclusive = i
        }
        if let hi = b.upper {
            let (v, i) = IntegerLiteral(hi).doubleBound(lower: false, inclusive: b.upperInclusive)
            r.upper = v
            r.upperInclusive = i
        }
        return r
    }

    /// The decimal digits (most significant first, ASCII) of a finite Double of magnitude 2⁵³ or
    /// more, which is an integer: its significand doubled exponent times, in decimal.
    static func decimalDigits(of d: Double) -> [UInt8] {
        var m = d.magnitude.significandBitPattern | (1 << 52)
        var shift = Int(d.magnitude.exponent) - 52
        if shift < 0 {  // not reached for the literals above (they have 16 or more digits); kept exact anyway
            m >>= UInt64(-shift)
            shift = 0
        }
        var little = [UInt8]()  // decimal digits, least significant first (values 0-9)
        while m > 0 {
            little.append(UInt8(m % 10))
            m /= 10
        }
        for _ in 0 ..< shift {
            var carry: UInt8 = 0
            for k in little.indices {
                let v = little[k] &* 2 &+ carry
                little[k] = v % 10
                carry = v / 10
            }
            if carry > 0 { little.append(carry) }
        }
        return little.reversed().map { $0 + 48 }
    }

    /// -1, 0 or 1 as the decimal `a` is below, equal to or above `b` (both without leading zeros).
    static func compareDecimal(_ a: [UInt8], _ b: [UInt8]) -> Int {
        if a.count != b.count { return a.count < b.count ? -1 : 1 }
        for (x, y) in zip(a, b) where x != y { return x < y ? -1 : 1 }
        return 0
    }
}
