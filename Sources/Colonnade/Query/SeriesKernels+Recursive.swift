/// Recursive series over one ticker's values, in place, in date order (NaN is null):
///
/// - `ema(x, n)` (α = 2/(n+1)) and `rma(x, n)` (α = 1/n): null until `n` non-null values have
///   been seen; the row of the n-th holds their mean (exact, rounded once, when `x` is a column
///   with a decimal scale); each later non-null row holds `(x − prev)·α + prev` (`ema`, TA-Lib's
///   EMA form) or `(prev·(n−1) + x)/n` (`rma`, TA-Lib's ATR form). A null row after the seed is
///   null and leaves the state unchanged.
/// - `rsi(x, n)`: the changes `x − x(previous row)` (null when either is null), their gains and
///   losses each smoothed as `rma` (TA-Lib's RSI form), `100·gain/(gain + loss)`, and 0 when
///   `gain + loss` is exactly 0 (TA-Lib also answers 0 when it is below its tiny epsilon, TA_IS_ZERO).
/// - `cumsum`, `cummax`, `cummin`: over the non-null values so far; null before the first one; a
///   null row carries the running value (SQL's `ROWS UNBOUNDED PRECEDING`).
extension SeriesKernels {
    static func runRecursive(
        _ f: ValueExpression.SeriesFunction, window n: Int, values v: UnsafeMutablePointer<Double>,
        count: Int, seedScale: DecimalScale?
    ) {
        // Safe throughout: indices within 0 ..< count, the ticker's rows in the buffer.
        switch f {
        case .ema: smooth(n, alpha: 2 / Double(n + 1), wilder: false, v, count, seedScale)
        case .rma: smooth(n, alpha: 1 / Double(n), wilder: true, v, count, seedScale)
        case .rsi: relativeStrength(n, v, count)
        case .cumsum:
            // `started`, not a NaN sentinel: ∞ + (−∞) makes the sum NaN, and it must stay NaN.
            var sum = 0.0, started = false
            for i in 0 ..< count {
                let x = v[i]
                if !x.isNaN {
                    sum = started ? sum + x : x
                    started = true
                }
                v[i] = started ? sum : .nan
            }
        case .cummax, .cummin:
            var best = Double.nan
            let isMax = f == .cummax
            for i in 0 ..< count {
                let x = v[i]
                if !x.isNaN && (best.isNaN || (isMax ? x > best : x < best)) { best = x }
                v[i] = best
            }
        default:
            assertionFailure("\(f) is not recursive")
        }
    }

    private static func smooth(
        _ n: Int, alpha: Double, wilder: Bool, _ v: UnsafeMutablePointer<Double>, _ count: Int,
        _ scale: DecimalScale?
    ) {
        var seen = 0
        var sum = 0.0
        var exact: Int64 = 0  // the seed's exact scaled sum, when the column has a scale
        let p = scale.map { DecimalScale.powers[$0.digits] } ?? 1
        let exactSeed = scale.map { $0.maxScaled * Double(n) < 9.0e18 } ?? false
        var state = 0.0
        let keep = Double(n - 1), divisor = Double(n)
        for i in 0 ..< count {
            let x = v[i]
            if x.isNaN { continue }  // null stays null; the state is unchanged
            if seen < n {
                seen += 1
                sum += x
                if exactSeed { exact += Int64((x * p).rounded()) }
                if seen == n {
                    state = exactSeed ? quotient(Int128(exact), Int128(n) * Int128(p)) : sum / divisor
                    v[i] = state
                } else {
                    v[i] = .nan
                }
            } else {
                state = wilder ? (state * keep + x) / divisor : (x - state) * alpha + state
                v[i] = state
            }
        }
    }

    private static func relativeStrength(_ n: Int, _ v: UnsafeMutablePointer<Double>, _ count: Int) {
        var previous = Double.nan
        var seen = 0
        var gain = 0.0, loss = 0.0
        let keep = Double(n - 1), divisor = Double(n)
        for i in 0 ..< count {
            let x = v[i]
            let change = x - previous  // NaN when either is null
            previous = x
            if change.isNaN {
                v[i] = .nan
                continue
            }
            let up = change > 0 ? change : 0, down = change < 0 ? -change : 0
            if seen < n {
                seen += 1
                gain += up
                loss += down
                if seen < n {
                    v[i] = .nan
                    continue
                }
                gain /= divisor
                loss /= divisor
            } else {
                gain = (gain * keep + up) / divisor
                loss = (loss * keep + down) / divisor
            }
            let total = gain + loss
            v[i] = total == 0 ? 0 : 100 * (gain / total)
        }
    }
}
