/// Branch-free range kernels: 64 comparisons packed into one mask word.
///
/// The loop shape the optimizer vectorizes (docs/ARCHITECTURE.md, "Kernels"): bounds in locals, a plain
/// loop over an unsafe pointer, each result turned into 0 or 1 with `?:` and combined with `&`
/// (never `&&`), shifted into place, 64 per word. The generic body below is *scalar* and always
/// inlined into a concrete entry point per element type (`Double._evaluateRange`, …, internal), so every
/// comparison is the concrete type's own; no generic SIMD code is involved.
public enum RangeKernels {
    /// Evaluates `bounds` over `values` and writes, intersects or unions the results into `words`.
    ///
    /// Scalar equivalent: `for i in 0..<count { bit(i) = bounds.matches(values[i]) }`. NaN never
    /// matches; nulls are not seen here (callers AND with validity). Row `i` goes to bit `i & 63`
    /// of `words[i >> 6]`; in the last, partial word only the first `count & 63` bits are written
    /// (others are cleared in `.store` mode and left alone otherwise).
    ///
    /// - Precondition: `values` and `words` hold `count` values and `(count + 63) / 64` words.
    /// - Complexity: O(count); in `.intersect` mode words that are already zero cost no reads.
    @inlinable
    public static func evaluate<T: ColumnElement>(
        _ bounds: RangeBounds<T>, values: UnsafeBufferPointer<T>,
        into words: UnsafeMutableBufferPointer<UInt64>, mode: MaskWriteMode
    ) {
        precondition(words.count >= (values.count + 63) >> 6, "mask too short for values")
        guard let base = values.baseAddress, let out = words.baseAddress else { return }
        _evaluate(bounds, base, count: values.count, out, mode)
    }

    /// Calls the concrete kernel of `T` (`Double._evaluateRange`, …). `T.elementType` is a
    /// constant once specialised, so the switch folds away and the call is direct.
    /// - Precondition: `values` and `words` hold `count` values and `(count + 63) / 64` words.
    @inline(__always) @usableFromInline
    static func _evaluate<T: ColumnElement>(
        _ bounds: RangeBounds<T>, _ values: UnsafePointer<T>, count: Int,
        _ words: UnsafeMutablePointer<UInt64>, _ mode: MaskWriteMode
    ) {
        let raw = UnsafeRawPointer(values)
        // Safe: each case runs only when T is that very type (one conforming type per ElementType),
        // so the casts change nothing but the static type.
        switch T.elementType {
        case .int32:
            Int32._evaluateRange(
                unsafeBitCast(bounds, to: RangeBounds<Int32>.self), raw.assumingMemoryBound(to: Int32.self),
                count: count, words, mode)
        case .int64:
            Int64._evaluateRange(
                unsafeBitCast(bounds, to: RangeBounds<Int64>.self), raw.assumingMemoryBound(to: Int64.self),
                count: count, words, mode)
        case .float32:
            Float._evaluateRange(
                unsafeBitCast(bounds, to: RangeBounds<Float>.self), raw.assumingMemoryBound(to: Float.self),
                count: count, words, mode)
        case .float64:
            Double._evaluateRange(
                unsafeBitCast(bounds, to: RangeBounds<Double>.self), raw.assumingMemoryBound(to: Double.self),
                count: count, words, mode)
        }
    }

    /// The body every concrete `_evaluateRange` inlines: picks the comparison shape once, outside
    /// the loop. Each shape is a tiny struct passed as a generic parameter (not a closure), so the
    /// specialised loop inlines the comparison — a closure here was left as an indirect call per
    /// row for most shapes and ran 5× slower.
    @inline(__always) @usableFromInline
    static func _run<T: ColumnElement>(
        _ b: RangeBounds<T>, _ v: UnsafePointer<T>, _ n: Int,
        _ out: UnsafeMutablePointer<UInt64>, _ mode: MaskWriteMode
    ) {
        switch (b.lower, b.upper) {
        case let (lo?, hi?):
            switch (b.lowerInclusive, b.upperInclusive) {
            case (false, false): _loop(v, n, out, mode, _Between<T, _Greater, _Less>(lo: lo, hi: hi))
            case (true, true): _loop(v, n, out, mode, _Between<T, _GreaterOrEqual, _LessOrEqual>(lo: lo, hi: hi))
            case (true, false): _loop(v, n, out, mode, _Between<T, _GreaterOrEqual, _Less>(lo: lo, hi: hi))
            case (false, true): _loop(v, n, out, mode, _Between<T, _Greater, _LessOrEqual>(lo: lo, hi: hi))
            }
        case let (lo?, nil):
            if b.lowerInclusive {
                _loop(v, n, out, mode, _OneSided<T, _GreaterOrEqual>(bound: lo))
            } else {
                _loop(v, n, out, mode, _OneSided<T, _Greater>(bound: lo))
            }
        case let (nil, hi?):
            if b.upperInclusive {
                _loop(v, n, out, mode, _OneSided<T, _LessOrEqual>(bound: hi))
            } else {
                _loop(v, n, out, mode, _OneSided<T, _Less>(bound: hi))
            }
        case (nil, nil):
            _loop(v, n, out, mode, _NotNaN<T>())
        }
    }

    @inline(__always) @usableFromInline
    static func _loop<P: _BitTest>(
        _ v: UnsafePointer<P.Value>, _ n: Int, _ out: UnsafeMutablePointer<UInt64>,
        _ mode: MaskWriteMode, _ test: P
    ) {
        let fullWords = n >> 6
        switch mode {
        case .store:
            for w in 0 ..< fullWords {
                // Safe: w < fullWords, so rows w*64 ..< w*64+64 are < n.
                let p = v + (w << 6)
                var word: UInt64 = 0
                for j in 0 ..< 64 { word |= test.bit(p[j]) << UInt64(j) }
                out[w] = word
            }
        case .intersect:
            for w in 0 ..< fullWords {
                let current = out[w]
                if current == 0 { continue }
                let p = v + (w << 6)
                if current.nonzeroBitCount <= _sparseWordBits {
                    // Few rows left in this word: test only those (docs/ARCHITECTURE.md, "Bitmasks").
                    var rest = current, word: UInt64 = 0
                    while rest != 0 {
                        let j = rest.trailingZeroBitCount
                        word |= test.bit(p[j]) << UInt64(j)
                        rest &= rest &- 1
                    }
                    out[w] = word
                    continue
                }
                var word: UInt64 = 0
                for j in 0 ..< 64 { word |= test.bit(p[j]) << UInt64(j) }
                out[w] = current & word
            }
        case .union:
            for w in 0 ..< fullWords {
                let p = v + (w << 6)
                var word: UInt64 = 0
                for j in 0 ..< 64 { word |= test.bit(p[j]) << UInt64(j) }
                out[w] |= word
            }
        }
        let tail = n & 63
        guard tail != 0 else { return }
        let p = v + (fullWords << 6)
        var word: UInt64 = 0
        for j in 0 ..< tail { word |= test.bit(p[j]) << UInt64(j) }
        switch mode {
        case .store: out[fullWords] = word
        case .intersect: out[fullWords] &= word | (~UInt64(0) << UInt64(tail))
        case .union: out[fullWords] |= word
        }
    }
}

/// In intersect mode, a word with at most this many rows still set has only those rows tested
/// (one scalar comparison each) instead of all 64 in the vectorized loop.
@usableFromInline let _sparseWordBits = 8

// MARK: Comparison shapes (generic scalar code; always inlined into the concrete loops)

/// One comparison turned into 0 or 1, branch-free.
@usableFromInline protocol _BitTest {
    associatedtype Value
    func bit(_ x: Value) -> UInt64
}

/// A comparison operator against a bound.
@usableFromInline protocol _Compare {
    static func holds<T: Comparable>(_ x: T, _ bound: T) -> Bool
}

@usableFromInline enum _Greater: _Compare {
    @inline(__always) @usableFromInline static func holds<T: Comparable>(_ x: T, _ b: T) -> Bool { x > b }
}
@usableFromInline enum _GreaterOrEqual: _Compare {
    @inline(__always) @usableFromInline static func holds<T: Comparable>(_ x: T, _ b: T) -> Bool { x >= b }
}
@usableFromInline enum _Less: _Compare {
    @inline(__always) @usableFromInline static func holds<T: Comparable>(_ x: T, _ b: T) -> Bool { x < b }
}
@usableFromInline enum _LessOrEqual: _Compare {
    @inline(__always) @usableFromInline static func holds<T: Comparable>(_ x: T, _ b: T) -> Bool { x <= b }
}

@usableFromInline struct _Between<T: Comparable, L: _Compare, U: _Compare>: _BitTest {
    @usableFromInline let lo: T, hi: T
    @inline(__always) @usableFromInline init(lo: T, hi: T) {
        self.lo = lo
        self.hi = hi
    }
    @inline(__always) @usableFromInline func bit(_ x: T) -> UInt64 {
        (L.holds(x, lo) ? 1 : 0) & (U.holds(x, hi) ? 1 : 0)
    }
}

@usableFromInline struct _OneSided<T: Comparable, C: _Compare>: _BitTest {
    @usableFromInline let bound: T
    @inline(__always) @usableFromInline init(bound: T) { self.bound = bound }
    @inline(__always) @usableFromInline func bit(_ x: T) -> UInt64 { C.holds(x, bound) ? 1 : 0 }
}

@usableFromInline struct _NotNaN<T: Comparable>: _BitTest {
    @inline(__always) @usableFromInline init() {}
    @inline(__always) @usableFromInline func bit(_ x: T) -> UInt64 { x == x ? 1 : 0 }
}

// Concrete entry points: one specialised loop per element type.

extension Int32 {
    /// Concrete range kernel for Int32; see `RangeKernels.evaluate`.
    @usableFromInline
    static func _evaluateRange(
        _ bounds: RangeBounds<Int32>, _ values: UnsafePointer<Int32>, count: Int,
        _ words: UnsafeMutablePointer<UInt64>, _ mode: MaskWriteMode
    ) {
        RangeKernels._run(bounds, values, count, words, mode)
    }
}

extension Int64 {
    /// Concrete range kernel for Int64; see `RangeKernels.evaluate`.
    @usableFromInline
    static func _evaluateRange(
        _ bounds: RangeBounds<Int64>, _ values: UnsafePointer<Int64>, count: Int,
        _ words: UnsafeMutablePointer<UInt64>, _ mode: MaskWriteMode
    ) {
        RangeKernels._run(bounds, values, count, words, mode)
    }
}

extension Float {
    /// Concrete range kernel for Float32; see `RangeKernels.evaluate`.
    @usableFromInline
    static func _evaluateRange(
        _ bounds: RangeBounds<Float>, _ values: UnsafePointer<Float>, count: Int,
        _ words: UnsafeMutablePointer<UInt64>, _ mode: MaskWriteMode
    ) {
        RangeKernels._run(bounds, values, count, words, mode)
    }
}

extension Double {
    /// Concrete range kernel for Float64; see `RangeKernels.evaluate`.
    @usableFromInline
    static func _evaluateRange(
        _ bounds: RangeBounds<Double>, _ values: UnsafePointer<Double>, count: Int,
        _ words: UnsafeMutablePointer<UInt64>, _ mode: MaskWriteMode
    ) {
        RangeKernels._run(bounds, values, count, words, mode)
    }
}
