import Foundation
import Synchronization

/// Facts derived from a column's values on first use and kept with them: a mutation of the
/// column replaces the whole object (`Column.derived`), so a fact never outlives the values it
/// was computed from. Copies of a column share one object, and so compute each fact once.
final class ColumnDerivedValues: Sendable {
    /// Outer nil: not computed yet; inner nil: the column has no decimal scale.
    let decimal = Mutex<DecimalScale??>(nil)
    init() {}
}

/// The decimal scale of a Float64 column: every non-null value, in its shortest representation,
/// is a decimal with at most `digits` fractional digits (and at most 15), so `x·10^digits` is a
/// whole number below 2^52 — the value's exact decimal in scaled-integer form (see
/// ARCHITECTURE.md, Query: exact windows).
///
///     0.1, 10.21, 3          → digits 2   (10, 1021, 300 in hundredths)
///     1/3 (0.333…3 in 16 digits), ±inf → no scale
///
/// Windows over such a column (`msum`, `mavg`, `mdev`, the seeds of `ema` and `rma`) are summed
/// exactly in integers and rounded once, so they answer ties as decimal arithmetic does.
struct DecimalScale: Sendable, Hashable {
    /// Fractional digits, 0 ... 15.
    var digits: Int
    /// The largest `|x|·10^digits` of the column (a whole number below 2^52).
    var maxScaled: Double

    /// `10^k` for k in 0 ... 30, each exact in Double up to 10^22.
    static let powers: [Double] = (0 ... 30).map { Foundation.pow(10, Double($0)) }

    /// Whole numbers below this are exact in Double with room to spare: a scaled value must be
    /// smaller, so that `x·10^k` rounds to the one decimal it stands for.
    static let scaledLimit = 4_503_599_627_370_496.0  // 2^52

    /// The fewest fractional digits, from `atLeast` up to 15, with which `x` is written exactly as a
    /// decimal (the decimal `round(x·10^k)/10^k` rounds back to `x`), or nil. NaN is not asked about.
    @inline(__always)
    static func fractionDigits(of x: Double, atLeast: Int) -> Int? {
        var k = atLeast
        while k <= 15 {
            let p = powers[k]
            let m = (x * p).rounded()
            // Safe to compare: m and p are exact, so m / p is the correctly rounded decimal m·10^-k.
            if Swift.abs(m) < scaledLimit && m / p == x { return k }
            k += 1
        }
        return nil
    }
}

extension DecimalScale {
    /// The fractional digits rows `[lo, hi)` of `v` need, starting from `k` digits and largest
    /// magnitude `big` (NaN skipped), and their largest magnitude; digits -1: some value is not a
    /// decimal of at most 15 digits below 2^52 scaled. Value by value, in order: a value that
    /// fails at the digits so far raises them to the fewest it needs from there.
    static func scan(_ v: UnsafePointer<Double>, _ lo: Int, _ hi: Int, digits k: Int, largest big: Double) -> (digits: Int, largest: Double)
    {
        var k = k, big = big
        // Safe: rows within [lo, hi), inside the caller's buffer.
        for i in lo ..< hi {
            let x = v[i]
            if x.isNaN { continue }
            let p = powers[k]
            let m = (x * p).rounded()
            if !(Swift.abs(m) < scaledLimit && m / p == x) {
                guard let d = fractionDigits(of: x, atLeast: k + 1) else { return (-1, big) }
                k = d
            }
            big = Swift.max(big, Swift.abs(x))
        }
        return (k, big)
    }

    /// `scan` from 0 digits, `blockRows` rows at a time: a block whose every value passes at the
    /// digits found so far — nearly every block — is checked by a loop without branches, which
    /// vectorizes (a count of failures, and the largest magnitude as bits, which order as the
    /// non-negative values do); a block with a failure is scanned value by value from the same
    /// state. So the same result as `scan` over the rows, several times faster.
    static func scanBlocks(_ v: UnsafePointer<Double>, _ lo: Int, _ hi: Int) -> (digits: Int, largest: Double) {
        var k = 0, big = 0.0
        var start = lo
        while start < hi {
            let end = Swift.min(start + blockRows, hi)
            let p = powers[k]
            var failures = 0
            var largest: Int64 = 0
            // Safe: rows within [lo, hi), inside the caller's buffer.
            for i in start ..< end {
                let x = v[i]
                let m = (x * p).rounded()
                let passes = x.isNaN || (Swift.abs(m) < scaledLimit && m / p == x)
                failures &+= passes ? 0 : 1
                largest = Swift.max(largest, Int64(bitPattern: (x.isNaN ? 0 : Swift.abs(x)).bitPattern))
            }
            if failures == 0 {
                big = Swift.max(big, Double(bitPattern: UInt64(bitPattern: largest)))
            } else {
                (k, big) = scan(v, start, end, digits: k, largest: big)
                if k < 0 { return (k, big) }
            }
            start = end
        }
        return (k, big)
    }

    /// Rows a block of `scanBlocks` checks at once.
    static let blockRows = 1024
}

extension Column where Element == Double {
    /// The column's decimal scale, or nil when some value is not a decimal of at most 15
    /// fractional digits (or is infinite). Nulls and NaN are skipped. Computed on first use over
    /// all cores and kept until the column is mutated.
    /// - Complexity: O(count) the first time, then O(1).
    var decimalScale: DecimalScale? {
        derived.decimal.withLock { cached in
            if let cached { return cached }
            // A deferred merge read in place takes the scale of its sources' values (the same
            // values), without merging.
            let computed =
                if let stitch {
                    stitch.decimalScale
                } else {
                    decimalParts().flatMap { DecimalScale(digits: $0.digits, largest: $0.largest) }
                }
            cached = .some(computed)
            return computed
        }
    }

    /// The most fractional digits of any value and the largest magnitude, or nil when some value
    /// is not a decimal of at most 15 fractional digits (or is infinite); not cached.
    func decimalParts() -> (digits: Int, largest: Double)? {
        let chunkRows = 1 << 16
        let chunks = (count + chunkRows - 1) / chunkRows
        let digits = UnsafeMutablePointer<Int>.allocate(capacity: max(chunks, 1))
        let largest = UnsafeMutablePointer<Double>.allocate(capacity: max(chunks, 1))
        defer {
            digits.deallocate()
            largest.deallocate()
        }
        let sharedDigits = SharedPointer(base: digits), sharedLargest = SharedPointer(base: largest)
        withUnsafeBufferPointer { values in
            // Safe: each chunk reads rows within the column and writes its own slot.
            guard let base = values.baseAddress else { return }
            let shared = SharedPointer(base: UnsafeMutablePointer(mutating: base))
            forEachChunk(chunks, threads: ProcessInfo.processInfo.activeProcessorCount) { chunk, _ in
                let lo = chunk * chunkRows, hi = Swift.min(lo + chunkRows, count)
                let (k, big) = DecimalScale.scanBlocks(shared.base, lo, hi)
                sharedDigits.base[chunk] = k
                sharedLargest.base[chunk] = big
            }
        }
        var k = 0, big = 0.0
        for c in 0 ..< chunks {
            if digits[c] < 0 { return nil }
            k = Swift.max(k, digits[c])
            big = Swift.max(big, largest[c])
        }
        return (k, big)
    }
}

extension DecimalScale {
    /// The scale of values of at most `digits` fractional digits and magnitude at most `largest`,
    /// or nil when the largest scaled value is not below `scaledLimit`.
    init?(digits: Int, largest: Double) {
        // A value with fewer digits is exact at more digits only while its scaled form stays small.
        let maxScaled = (largest * DecimalScale.powers[digits]).rounded()
        guard maxScaled < DecimalScale.scaledLimit else { return nil }
        self.init(digits: digits, maxScaled: maxScaled)
    }
}
