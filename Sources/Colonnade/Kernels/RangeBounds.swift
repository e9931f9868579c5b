/// A conjunction of at most one lower and one upper bound on a value: `lo < x < hi`,
/// `lo <= x <= hi`, half-open, one-sided, or equality (`x == v` is `v <= x <= v`).
///
/// `matches(_:)` is the scalar definition every kernel must agree with. NaN never matches (every
/// comparison with NaN is false); with no bound at all, every non-NaN value matches. Nulls are
/// handled by the caller (a null never matches).
public struct RangeBounds<Value: Comparable & Sendable>: Sendable, Equatable {
    /// The lower bound, if any.
    public var lower: Value?
    /// Whether the lower bound is included (`>=`) rather than excluded (`>`).
    public var lowerInclusive: Bool
    /// The upper bound, if any.
    public var upper: Value?
    /// Whether the upper bound is included (`<=`) rather than excluded (`<`).
    public var upperInclusive: Bool

    /// Bounds from their parts.
    public init(lower: Value? = nil, lowerInclusive: Bool = false, upper: Value? = nil, upperInclusive: Bool = false) {
        self.lower = lower
        self.lowerInclusive = lowerInclusive
        self.upper = upper
        self.upperInclusive = upperInclusive
    }

    /// `lo < x < hi`.
    public static func open(_ lo: Value, _ hi: Value) -> Self { .init(lower: lo, upper: hi) }
    /// `lo <= x <= hi` (SQL's `between`).
    public static func closed(_ lo: Value, _ hi: Value) -> Self {
        .init(lower: lo, lowerInclusive: true, upper: hi, upperInclusive: true)
    }
    /// `lo <= x < hi`.
    public static func halfOpen(_ lo: Value, _ hi: Value) -> Self { .init(lower: lo, lowerInclusive: true, upper: hi) }
    /// `x > v`.
    public static func greater(than v: Value) -> Self { .init(lower: v) }
    /// `x >= v`.
    public static func atLeast(_ v: Value) -> Self { .init(lower: v, lowerInclusive: true) }
    /// `x < v`.
    public static func less(than v: Value) -> Self { .init(upper: v) }
    /// `x <= v`.
    public static func atMost(_ v: Value) -> Self { .init(upper: v, upperInclusive: true) }
    /// `x == v`.
    public static func equal(to v: Value) -> Self { closed(v, v) }
    /// Every value that is not NaN (and not null).
    public static var any: Self { .init() }

    /// The scalar definition of a match.
    @inlinable public func matches(_ x: Value) -> Bool {
        if x != x { return false }  // NaN
        if let lower {
            if lowerInclusive ? !(x >= lower) : !(x > lower) { return false }
        }
        if let upper {
            if upperInclusive ? !(x <= upper) : !(x < upper) { return false }
        }
        return true
    }

    /// The same bounds with both values converted by `transform`.
    public func map<T>(_ transform: (Value) -> T) -> RangeBounds<T> {
        RangeBounds<T>(
            lower: lower.map(transform), lowerInclusive: lowerInclusive,
            upper: upper.map(transform), upperInclusive: upperInclusive)
    }

    /// Whether no value can match (for example `5 < x < 5`).
    public var isEmpty: Bool {
        guard let lower, let upper else { return false }
        if lower > upper { return true }
        if lower == upper { return !(lowerInclusive && upperInclusive) }
        return false
    }

    /// The intersection of two bounds.
    public func intersection(_ other: Self) -> Self {
        var r = self
        if let ol = other.lower {
            if let l = r.lower {
                if ol > l {
                    r.lower = ol
                    r.lowerInclusive = other.lowerInclusive
                } else if ol == l {
                    r.lowerInclusive = r.lowerInclusive && other.lowerInclusive
                }
            } else {
                r.lower = ol
                r.lowerInclusive = other.lowerInclusive
            }
        }
        if let ou = other.upper {
            if let u = r.upper {
                if ou < u {
                    r.upper = ou
                    r.upperInclusive = other.upperInclusive
                } else if ou == u {
                    r.upperInclusive = r.upperInclusive && other.upperInclusive
                }
            } else {
                r.upper = ou
                r.upperInclusive = other.upperInclusive
            }
        }
        return r
    }
}

extension RangeBounds: Hashable where Value: Hashable {}

extension RangeBounds: CustomStringConvertible {
    /// For example `80.0 < x < 83.0` or `x >= 5`.
    public var description: String {
        var s = ""
        if let lower { s += "\(lower) \(lowerInclusive ? "<=" : "<") " }
        s += "x"
        if let upper { s += " \(upperInclusive ? "<=" : "<") \(upper)" }
        return s
    }
}

/// How a kernel combines its results with the words already in a mask.
public enum MaskWriteMode: Sendable {
    /// Overwrite the words.
    case store
    /// AND into the words (words that are already zero are skipped without reading values).
    case intersect
    /// OR into the words.
    case union
}
