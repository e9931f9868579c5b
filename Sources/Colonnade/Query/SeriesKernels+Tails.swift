/// The recursive series of several tickers at once, keeping only each one's last values: what an
/// as-of screen needs (`MaterializedSeries.read`). `cumsum`, `cummax` and `cummin` run a ticker at
/// a time (an add or a compare a row). The recursion of one
/// ticker is a chain of dependent operations (RSI's is a multiply, an add and a division per row,
/// bound by the division's latency); four tickers run in lockstep (`SIMD4`), so four chains are in
/// flight and the divider is kept busy. Every lane performs, row by row, exactly the operations of
/// `runRecursive` (`SeriesKernels+Recursive.swift`) in the same order, so each value is the one
/// the whole-table pass gives, to the bit; only which rows are written differs.
extension SeriesKernels {
    /// One ticker's run: its argument's values from its first row, and where its last values go.
    struct SmoothingLane {
        /// The argument's values, rows 0 ..< count of the ticker (NaN is null).
        var src: UnsafePointer<Double>
        var count: Int
        /// The values of rows `outFrom ..< count` (a row before 0 stays NaN).
        var out: UnsafeMutablePointer<Double>
        var outFrom: Int
        /// The next row to run.
        var i = 0
        /// Non-null values (`ema`, `rma`) or changes (`rsi`) seen, up to the window.
        var seen = 0
        var sum = 0.0
        var exact: Int64 = 0
        /// The average (`ema`, `rma`) or the average gain (`rsi`).
        var a = 0.0
        /// The average loss (`rsi`).
        var b = 0.0
        var previous = Double.nan

        init(src: UnsafePointer<Double>, count: Int, out: UnsafeMutablePointer<Double>, keep: Int) {
            self.src = src
            self.count = count
            self.out = out
            self.outFrom = count - keep
            out.update(repeating: .nan, count: keep)
        }

        @inline(__always) func put(_ row: Int, _ value: Double) {
            if row >= outFrom { out[row - outFrom] = value }
        }
    }

    /// Runs `f(x, n)` (`ema`, `rma` or `rsi`) over every lane, writing each lane's last values.
    static func smoothingTails(
        _ f: ValueExpression.SeriesFunction, window n: Int, seedScale: DecimalScale?, lanes: inout [SmoothingLane]
    ) {
        if f == .cumsum || f == .cummax || f == .cummin {
            // One add or compare a row: nothing to interleave.
            for k in lanes.indices { running(f, &lanes[k]) }
            return
        }
        for k in lanes.indices { seed(f, n, seedScale, &lanes[k]) }
        // Lanes with about as many rows left go together, four at a time.
        let order = lanes.indices.sorted { lanes[$0].count - lanes[$0].i < lanes[$1].count - lanes[$1].i }
        var q = 0
        while q + 4 <= order.count {
            let (w, x, y, z) = (order[q], order[q + 1], order[q + 2], order[q + 3])
            // Rows every one of the four can run without writing a value.
            let steps = [w, x, y, z].map { Swift.max(0, Swift.min(lanes[$0].count, lanes[$0].outFrom) - lanes[$0].i) }.min() ?? 0
            if steps > 0 {
                var (l0, l1, l2, l3) = (lanes[w], lanes[x], lanes[y], lanes[z])
                lockstep(f, n, steps, &l0, &l1, &l2, &l3)
                (lanes[w], lanes[x], lanes[y], lanes[z]) = (l0, l1, l2, l3)
            }
            q += 4
        }
        for k in lanes.indices { steady(f, n, &lanes[k]) }
    }

    /// `cumsum`, `cummax`, `cummin` over the lane, as `runRecursive` runs them.
    private static func running(_ f: ValueExpression.SeriesFunction, _ l: inout SmoothingLane) {
        if f == .cumsum {
            // `started`, not a NaN sentinel: ∞ + (−∞) makes the sum NaN, and it must stay NaN.
            var sum = 0.0, started = false
            for i in 0 ..< l.count {
                let x = l.src[i]
                if !x.isNaN {
                    sum = started ? sum + x : x
                    started = true
                }
                if i >= l.outFrom { l.out[i - l.outFrom] = started ? sum : .nan }
            }
        } else {
            var best = Double.nan
            let isMax = f == .cummax
            for i in 0 ..< l.count {
                let x = l.src[i]
                if !x.isNaN && (best.isNaN || (isMax ? x > best : x < best)) { best = x }
                if i >= l.outFrom { l.out[i - l.outFrom] = best }
            }
        }
        l.i = l.count
    }

    /// The rows up to and including the one that completes the seed (or the lane's end).
    private static func seed(_ f: ValueExpression.SeriesFunction, _ n: Int, _ scale: DecimalScale?, _ l: inout SmoothingLane) {
        let divisor = Double(n)
        if f == .rsi {
            while l.i < l.count && l.seen < n {
                let x = l.src[l.i]
                let change = x - l.previous
                l.previous = x
                defer { l.i += 1 }
                if change.isNaN {
                    l.put(l.i, .nan)
                    continue
                }
                l.seen += 1
                l.a += change > 0 ? change : 0
                l.b += change < 0 ? -change : 0
                if l.seen < n {
                    l.put(l.i, .nan)
                    continue
                }
                l.a /= divisor
                l.b /= divisor
                let total = l.a + l.b
                l.put(l.i, total == 0 ? 0 : 100 * (l.a / total))
            }
            return
        }
        let p = scale.map { DecimalScale.powers[$0.digits] } ?? 1
        let exactSeed = scale.map { $0.maxScaled * Double(n) < 9.0e18 } ?? false
        while l.i < l.count && l.seen < n {
            let x = l.src[l.i]
            defer { l.i += 1 }
            if x.isNaN {
                l.put(l.i, x)  // null stays null, as it is in place
                continue
            }
            l.seen += 1
            l.sum += x
            if exactSeed { l.exact += Int64((x * p).rounded()) }
            if l.seen == n {
                l.a = exactSeed ? quotient(Int128(l.exact), Int128(n) * Int128(p)) : l.sum / divisor
                l.put(l.i, l.a)
            } else {
                l.put(l.i, .nan)
            }
        }
    }

    /// The seeded rows from `l.i` to the lane's end, one at a time.
    private static func steady(_ f: ValueExpression.SeriesFunction, _ n: Int, _ l: inout SmoothingLane) {
        guard l.seen >= n else { return }  // the lane ended before its seed
        let keep = Double(n - 1), divisor = Double(n)
        switch f {
        case .rsi:
            while l.i < l.count {
                let x = l.src[l.i]
                let change = x - l.previous
                l.previous = x
                if change.isNaN {
                    l.put(l.i, .nan)
                } else {
                    l.a = (l.a * keep + (change > 0 ? change : 0)) / divisor
                    l.b = (l.b * keep + (change < 0 ? -change : 0)) / divisor
                    let total = l.a + l.b
                    l.put(l.i, total == 0 ? 0 : 100 * (l.a / total))
                }
                l.i += 1
            }
        case .rma:
            while l.i < l.count {
                let x = l.src[l.i]
                if x.isNaN {
                    l.put(l.i, x)
                } else {
                    l.a = (l.a * keep + x) / divisor
                    l.put(l.i, l.a)
                }
                l.i += 1
            }
        default:
            let alpha = 2 / Double(n + 1)
            while l.i < l.count {
                let x = l.src[l.i]
                if x.isNaN {
                    l.put(l.i, x)
                } else {
                    l.a = (x - l.a) * alpha + l.a
                    l.put(l.i, l.a)
                }
                l.i += 1
            }
        }
    }

    /// `steps` seeded rows of four lanes together, none of them written (all before `outFrom`).
    private static func lockstep(
        _ f: ValueExpression.SeriesFunction, _ n: Int, _ steps: Int,
        _ l0: inout SmoothingLane, _ l1: inout SmoothingLane, _ l2: inout SmoothingLane, _ l3: inout SmoothingLane
    ) {
        // Safe: each lane has at least `steps` rows left from its `i` (the caller's minimum).
        let s0 = l0.src + l0.i, s1 = l1.src + l1.i, s2 = l2.src + l2.i, s3 = l3.src + l3.i
        let keep = SIMD4<Double>(repeating: Double(n - 1)), divisor = SIMD4<Double>(repeating: Double(n))
        let zero = SIMD4<Double>.zero
        var a = SIMD4(l0.a, l1.a, l2.a, l3.a)
        switch f {
        case .rsi:
            var b = SIMD4(l0.b, l1.b, l2.b, l3.b)
            var previous = SIMD4(l0.previous, l1.previous, l2.previous, l3.previous)
            for k in 0 ..< steps {
                let x = SIMD4(s0[k], s1[k], s2[k], s3[k])
                let change = x - previous
                previous = x
                let valid = change .== change
                let up = zero.replacing(with: change, where: change .> zero)
                let down = zero.replacing(with: -change, where: change .< zero)
                a.replace(with: (a * keep + up) / divisor, where: valid)
                b.replace(with: (b * keep + down) / divisor, where: valid)
            }
            (l0.b, l1.b, l2.b, l3.b) = (b[0], b[1], b[2], b[3])
            (l0.previous, l1.previous, l2.previous, l3.previous) = (previous[0], previous[1], previous[2], previous[3])
        case .rma:
            for k in 0 ..< steps {
                let x = SIMD4(s0[k], s1[k], s2[k], s3[k])
                a.replace(with: (a * keep + x) / divisor, where: x .== x)
            }
        default:
            let alpha = SIMD4<Double>(repeating: 2 / Double(n + 1))
            for k in 0 ..< steps {
                let x = SIMD4(s0[k], s1[k], s2[k], s3[k])
                a.replace(with: (x - a) * alpha + a, where: x .== x)
            }
        }
        (l0.a, l1.a, l2.a, l3.a) = (a[0], a[1], a[2], a[3])
        l0.i += steps
        l1.i += steps
        l2.i += steps
        l3.i += steps
    }
}
