/// Per-ticker series functions over one ticker's segment of an evaluation buffer.
///
/// Buffers are indexed from `base` (row `base` is element 0). `segment` is the part of the buffer
/// inside one ticker; `tickerStart` is that ticker's first row (before the segment when the buffer
/// starts inside the ticker). A row whose window does not lie inside the segment gets NaN: either
/// the window is not full yet (the ticker starts later than the window would), or the row lies in
/// the lookback part of the buffer, which the caller discards.
///
/// - `prev`, `change`, `pct_change`: one read `n` rows back.
/// - `msum`, `mavg`: a sliding sum of the finite values, O(1) per row, restarted from a fresh sum
///   every `n` rows at positions fixed relative to the ticker (so values do not depend on where
///   evaluation began, and rounding cannot drift); NaN and ±inf are counted, not summed, and give
///   what a plain left-to-right sum of the window would (NaN, or the infinity). Independent restart
///   blocks run side by side (four sums at once), each with the same operations in the same order.
/// - `mmin`, `mmax`: the van Herk/Gil-Werman block algorithm, O(1) per row with no data-dependent
///   branch: the segment is cut into blocks of `n` rows; a window ending in a block is the block's
///   prefix up to that row joined with the previous block's suffix from the window's first row.
///   NaN in the window makes the result NaN; of equal extremes (+0 and -0) the latest row's value is
///   the result (as the monotonic deque this replaced gave, bit for bit; `ExtremeWindowTests`).
/// - `mdev`: Welford's update for a value entering and one leaving, restarted by a two-pass
///   computation every `n` rows (as for sums), whenever a non-finite value has left the window and
///   whenever m2 falls below 1e-4 of its peak since the last restart (an outlier left, so the
///   update's rounding would show); a window of `n` identical values is exactly 0.
enum SeriesKernels {
    static func run(
        _ f: ValueExpression.SeriesFunction, window n: Int, src: UnsafePointer<Double>,
        dst: UnsafeMutablePointer<Double>, base: Int, segment: Range<Int>, tickerStart: Int,
        scratch: ExpressionScratch
    ) {
        // Safe throughout: every index is within `segment`, which lies within the buffer.
        let s = segment.lowerBound - base, e = segment.upperBound - base
        switch f {
        case .prev:
            for i in s ..< e { dst[i] = i - n >= s ? src[i - n] : .nan }
        case .change:
            for i in s ..< e { dst[i] = i - n >= s ? src[i] - src[i - n] : .nan }
        case .pctChange:
            for i in s ..< e {
                let p = i - n >= s ? src[i - n] : .nan
                dst[i] = p == 0 ? .nan : src[i] / p - 1
            }
        case .msum, .mavg:
            slidingSum(n, src, dst, s, e, firstFull: tickerStart - base + n - 1, mean: f == .mavg)
        case .mdev:
            slidingDeviation(n, src, dst, s, e, firstFull: tickerStart - base + n - 1)
        case .mmin:
            slidingExtreme(n, src, dst, s, e, isMin: true, suffixes: scratch.suffixBuffer(n + 1))
        case .mmax:
            slidingExtreme(n, src, dst, s, e, isMin: false, suffixes: scratch.suffixBuffer(n + 1))
        case .ema, .rma, .rsi, .cumsum, .cummax, .cummin:
            // Recursive: materialized over whole tickers (ExpressionProgram+Recursive), never here.
            assertionFailure("\(f) is materialized, not windowed")
            for i in s ..< e { dst[i] = .nan }
        }
    }

    /// Window sums over `[s, e)`; restart points are `firstFull + k·n`.
    private static func slidingSum(
        _ n: Int, _ src: UnsafePointer<Double>, _ dst: UnsafeMutablePointer<Double>,
        _ s: Int, _ e: Int, firstFull: Int, mean: Bool
    ) {
        // Two copies, so the loops test no flag.
        if mean {
            windowSums(n, src, dst, s, e, firstFull: firstFull, mean: true)
        } else {
            windowSums(n, src, dst, s, e, firstFull: firstFull, mean: false)
        }
    }

    @inline(__always)
    private static func windowSums(
        _ n: Int, _ src: UnsafePointer<Double>, _ dst: UnsafeMutablePointer<Double>,
        _ s: Int, _ e: Int, firstFull: Int, mean: Bool
    ) {
        // Safe throughout: every index is within [s, e) or a window inside it.
        let first = max(s, firstFull)
        if first >= e {
            for i in s ..< e { dst[i] = .nan }
            return
        }
        for i in s ..< first { dst[i] = .nan }
        let divisor = Double(n)
        // The windows ending in [q, q + n): a fresh sum at q, then slid. NaN and ±∞ are counted, not
        // summed. A restart window not in the buffer: lookback rows, discarded by the caller.
        func block(_ q: Int) {
            let blockEnd = min(q + n, e)
            if q - n + 1 < s {
                for i in max(q, first) ..< blockEnd { dst[i] = .nan }
                return
            }
            var sum = 0.0, nan = 0, positive = 0, negative = 0
            for j in q - n + 1 ... q {
                let x = src[j]
                if x.isFinite { sum += x } else if x.isNaN { nan += 1 } else if x > 0 { positive += 1 } else { negative += 1 }
            }
            var i = q
            while true {
                if i >= first {
                    let v: Double
                    if nan > 0 || (positive > 0 && negative > 0) {
                        v = .nan
                    } else if positive > 0 {
                        v = .infinity
                    } else if negative > 0 {
                        v = -.infinity
                    } else {
                        v = mean ? sum / divisor : sum
                    }
                    dst[i] = v
                }
                i += 1
                if i >= blockEnd { break }
                let x = src[i], y = src[i - n]
                if x.isFinite { sum += x } else if x.isNaN { nan += 1 } else if x > 0 { positive += 1 } else { negative += 1 }
                if y.isFinite { sum -= y } else if y.isNaN { nan -= 1 } else if y > 0 { positive -= 1 } else { negative -= 1 }
            }
        }
        // Restart blocks side by side, four (then two) at a time: each has its own sum, so the
        // additions of one do not wait for another's, and each sum sees exactly the operations, in
        // the order, that `block` would apply (so the same bits). A block whose sum ends non-finite
        // met a NaN or ±∞ (which absorb every later addition), or overflowed: it is done again by
        // `block`, which counts non-finite values instead of adding them.
        var q = firstFull + ((first - firstFull) / n) * n
        while q < e {
            if q - n + 1 >= s && q >= first && q + 4 * n <= e {
                let b = q - n + 1
                var s0 = 0.0, s1 = 0.0, s2 = 0.0, s3 = 0.0
                for k in 0 ..< n {
                    s0 += src[b + k]
                    s1 += src[b + n + k]
                    s2 += src[b + 2 * n + k]
                    s3 += src[b + 3 * n + k]
                }
                var i = q
                while true {
                    dst[i] = s0
                    dst[i + n] = s1
                    dst[i + 2 * n] = s2
                    dst[i + 3 * n] = s3
                    i += 1
                    if i == q + n { break }
                    s0 += src[i]
                    s0 -= src[i - n]
                    s1 += src[i + n]
                    s1 -= src[i]
                    s2 += src[i + 2 * n]
                    s2 -= src[i + n]
                    s3 += src[i + 3 * n]
                    s3 -= src[i + 2 * n]
                }
                if s0.isFinite && s1.isFinite && s2.isFinite && s3.isFinite {
                    if mean { for i in q ..< q + 4 * n { dst[i] = dst[i] / divisor } }
                } else {
                    for j in 0 ..< 4 { block(q + j * n) }
                }
                q += 4 * n
                continue
            }
            if q - n + 1 >= s && q >= first && q + 2 * n <= e {
                let b = q - n + 1
                var s0 = 0.0, s1 = 0.0
                for k in 0 ..< n {
                    s0 += src[b + k]
                    s1 += src[b + n + k]
                }
                var i = q
                while true {
                    dst[i] = s0
                    dst[i + n] = s1
                    i += 1
                    if i == q + n { break }
                    s0 += src[i]
                    s0 -= src[i - n]
                    s1 += src[i + n]
                    s1 -= src[i]
                }
                if s0.isFinite && s1.isFinite {
                    if mean { for i in q ..< q + 2 * n { dst[i] = dst[i] / divisor } }
                } else {
                    for j in 0 ..< 2 { block(q + j * n) }
                }
                q += 2 * n
                continue
            }
            block(q)
            q += n
        }
    }

    /// Sample standard deviations over `[s, e)`; restart points as for sums.
    private static func slidingDeviation(
        _ n: Int, _ src: UnsafePointer<Double>, _ dst: UnsafeMutablePointer<Double>,
        _ s: Int, _ e: Int, firstFull: Int
    ) {
        let first = max(s, firstFull)
        if first >= e || n == 1 {
            for i in s ..< e { dst[i] = .nan }
            return
        }
        for i in s ..< first { dst[i] = .nan }
        let count = Double(n)
        // Two-pass mean and sum of squared deviations of the window ending at `end`.
        func fresh(_ end: Int) -> (mean: Double, m2: Double) {
            var sum = 0.0
            for j in end - n + 1 ... end { sum += src[j] }
            let mean = sum / count
            var m2 = 0.0
            for j in end - n + 1 ... end {
                let d = src[j] - mean
                m2 += d * d
            }
            return (mean, m2)
        }
        var q = firstFull + ((first - firstFull) / n) * n
        while q < e {
            let blockEnd = min(q + n, e)
            if q - n + 1 < s {
                for i in max(q, first) ..< blockEnd { dst[i] = .nan }
                q += n
                continue
            }
            var bad = 0  // non-finite values in the window
            for j in q - n + 1 ... q where !src[j].isFinite { bad += 1 }
            var state = bad == 0 ? fresh(q) : (mean: 0, m2: 0)
            var peak = state.m2  // the largest m2 since the last two-pass computation
            // Identical values ending at the current row: a window of n of them is exactly 0 (the
            // sliding update would leave rounding residue), as pandas does.
            var same = 1
            while same < n && src[q - same] == src[q] { same += 1 }
            var i = q
            while true {
                if i >= first {
                    dst[i] = bad > 0 ? .nan : same >= n ? 0 : (max(state.m2, 0) / (count - 1)).squareRoot()
                }
                i += 1
                if i >= blockEnd { break }
                let x = src[i], y = src[i - n]
                same = x == src[i - 1] ? same + 1 : 1
                let wasBad = bad > 0
                if !x.isFinite { bad += 1 }
                if !y.isFinite { bad -= 1 }
                if bad > 0 { continue }
                if wasBad {
                    state = fresh(i)
                    peak = state.m2
                } else {
                    let delta = x - y
                    let newMean = state.mean + delta / count
                    state.m2 += delta * (x - newMean + y - state.mean)
                    state.mean = newMean
                    if state.m2 < peak * 1e-4 {
                        // A large value left (an outlier): the update cancelled most of m2 and its
                        // rounding error, relative to the old m2, would now be visible.
                        state = fresh(i)
                        peak = state.m2
                    } else {
                        peak = max(peak, state.m2)
                    }
                }
            }
            q += n
        }
    }

    /// Window minima or maxima over `[s, e)` (van Herk/Gil-Werman); `suffixes` holds `n + 1` values.
    private static func slidingExtreme(
        _ n: Int, _ src: UnsafePointer<Double>, _ dst: UnsafeMutablePointer<Double>,
        _ s: Int, _ e: Int, isMin: Bool, suffixes: UnsafeMutablePointer<Double>
    ) {
        // Two copies, so each loop's comparison is a constant (no branch on isMin per row): two
        // specializations of a generic, not an inlined Bool, which the compiler stopped inlining
        // (S4 `high >= mmax(high, 252)` ran 1.9× slower, with the Bool tested per row).
        if isMin {
            blockExtreme(MinimumSide.self, n, src, dst, s, e, suffixes: suffixes)
        } else {
            blockExtreme(MaximumSide.self, n, src, dst, s, e, suffixes: suffixes)
        }
    }

    /// The side of a window's extreme, as the comparisons every loop of `blockExtreme` makes: each
    /// specialization compares one way, with no test of the side per row. NaN never wins either
    /// comparison (every comparison with it is false), so a NaN `x` leaves `g`.
    private protocol ExtremeSide {
        /// The extreme of nothing: a value that never wins.
        static var none: Double { get }
        /// `x` when it is strictly more extreme than `g`, else `g` (of equal values, `g`).
        static func better(_ x: Double, _ g: Double) -> Double
        /// `x` when it is at least as extreme as `g`, else `g` (of equal values, `x`).
        static func betterOrEqual(_ x: Double, _ g: Double) -> Double
    }
    private enum MinimumSide: ExtremeSide {
        static var none: Double { .infinity }
        @inline(__always) static func better(_ x: Double, _ g: Double) -> Double { x < g ? x : g }
        @inline(__always) static func betterOrEqual(_ x: Double, _ g: Double) -> Double { x <= g ? x : g }
    }
    private enum MaximumSide: ExtremeSide {
        static var none: Double { -.infinity }
        @inline(__always) static func better(_ x: Double, _ g: Double) -> Double { x > g ? x : g }
        @inline(__always) static func betterOrEqual(_ x: Double, _ g: Double) -> Double { x >= g ? x : g }
    }

    /// The extreme of rows `[b, e)` as the prefix loop of `blockExtreme` finds it (NaN skipped;
    /// of equal values the later row's; `none` when every row is NaN) and the last NaN row, if
    /// any: four partial extremes side by side, without that loop's dependency from each row to
    /// the next (the first block of a segment is the whole of an as-of screen's window, S4L's 252
    /// rows a ticker). Equal values other than ±0 are the same bits, so only a zero extreme
    /// depends on the order of equal rows: the plain loop then answers.
    @inline(__always)
    private static func firstBlockExtreme<Side: ExtremeSide>(
        _: Side.Type, _ src: UnsafePointer<Double>, _ b: Int, _ e: Int, none: Double
    ) -> (extreme: Double, lastNaN: Int?) {
        // Safe throughout: every index is within [b, e), inside the buffer.
        var g0 = none, g1 = none, g2 = none, g3 = none
        var nans = 0
        var i = b
        while i + 4 <= e {
            let x0 = src[i], x1 = src[i + 1], x2 = src[i + 2], x3 = src[i + 3]
            g0 = Side.better(x0, g0)
            g1 = Side.better(x1, g1)
            g2 = Side.better(x2, g2)
            g3 = Side.better(x3, g3)
            nans &+= (x0 != x0 ? 1 : 0) &+ (x1 != x1 ? 1 : 0) &+ (x2 != x2 ? 1 : 0) &+ (x3 != x3 ? 1 : 0)
            i += 4
        }
        while i < e {
            let x = src[i]
            g0 = Side.better(x, g0)
            nans &+= x != x ? 1 : 0
            i += 1
        }
        var g = Side.better(g3, Side.better(g2, Side.better(g1, g0)))
        if g == 0 {
            // +0 and -0 tie: the later row's wins.
            g = none
            for j in b ..< e {
                let x = src[j]
                g = Side.betterOrEqual(x, g)
            }
        }
        var lastNaN: Int?
        if nans > 0 {
            var j = e - 1
            while src[j] == src[j] { j -= 1 }
            lastNaN = j
        }
        return (g, lastNaN)
    }

    @inline(__always)
    private static func blockExtreme<Side: ExtremeSide>(
        _: Side.Type, _ n: Int, _ src: UnsafePointer<Double>, _ dst: UnsafeMutablePointer<Double>,
        _ s: Int, _ e: Int, suffixes h: UnsafeMutablePointer<Double>
    ) {
        // Safe throughout: rows are within [s, e), inside the buffer; `h` indices within 0 ... n.
        let firstFull = s + n - 1  // the first row whose window lies inside the segment
        if firstFull >= e {
            for i in s ..< e { dst[i] = .nan }
            return
        }
        if n == 1 {
            // The window is the row itself.
            for i in s ..< e { dst[i] = src[i] }
            return
        }
        let none = Side.none
        h[n] = none  // the window ending a block is that block alone: nothing from the previous one
        var lastNaN = s - n - 1  // the latest NaN row seen (none yet: any window starts after it)
        var b = s
        while b < e {
            let blockEnd = min(b + n, e)
            // Prefix extremes of this block, joined with the previous block's suffixes: the window
            // ending at row i (k = i - b + 1 rows into the block) is rows [i - n + 1, b) of the
            // previous block, whose extreme is h[k], and rows [b, i]. Ties keep the later value:
            // the prefix's, and within the prefix the newer row's. A NaN does not enter g (the
            // comparisons with it are false), and `lastNaN` makes the window's result NaN.
            var g = none
            if b == s {
                // Only the block's last row has a window in the segment: the block's extreme.
                for i in b ..< blockEnd { dst[i] = .nan }
                let (extreme, nanRow) = firstBlockExtreme(Side.self, src, b, blockEnd, none: none)
                if let nanRow { lastNaN = nanRow }
                if blockEnd == b + n { dst[blockEnd - 1] = lastNaN < s ? extreme : .nan }
            } else {
                var k = 1
                for i in b ..< blockEnd {
                    let x = src[i]
                    if x != x { lastNaN = i }
                    g = Side.betterOrEqual(x, g)
                    let r = Side.betterOrEqual(g, h[k])
                    dst[i] = lastNaN <= i - n ? r : .nan
                    k += 1
                }
            }
            // Suffix extremes of this block, for the next one (ties keep the later value; NaN is
            // skipped: `x < acc` is false for it).
            if blockEnd < e {
                var acc = none
                var j = blockEnd - 1
                while j >= b {
                    let x = src[j]
                    acc = Side.better(x, acc)
                    h[j - b] = acc
                    j -= 1
                }
            }
            b = blockEnd
        }
    }
}
