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
        case .cumsum, .cummax, .cummin:
            var state = RunningState(f)
            running(f, src: UnsafePointer(v), dst: v, count: count, state: &state)
        default:
            assertionFailure("\(f) is not recursive")
        }
    }

    /// The state of a running series (`cumsum`, `cummax`, `cummin`) after some of a ticker's
    /// rows: the fold so far, and whether a non-null value has been seen.
    struct RunningState: Equatable {
        var value: Double
        var started = false

        /// The state before a ticker's first row.
        init(_ f: ValueExpression.SeriesFunction) {
            value = f == .cummax ? -.infinity : f == .cummin ? .infinity : 0
        }

        init(value: Double, started: Bool) {
            self.value = value
            self.started = started
        }
    }

    /// `f` over `count` values of `src` from `state`, into `dst` (which may be `src`; nil: only
    /// the state is advanced). The values are those of one pass from the ticker's first row
    /// whatever rows the state was carried over: the same operations in the same order.
    ///
    /// `cummax` starts from −∞ and takes a value when it is greater, which a NaN never is: the
    /// value of `best.isNaN || x > best` from a NaN start (a first value of −∞ leaves −∞ either
    /// way; of equal values, ±0, the first stays), with one comparison in the serial chain.
    static func running(
        _ f: ValueExpression.SeriesFunction, src: UnsafePointer<Double>, dst: UnsafeMutablePointer<Double>?, count: Int,
        state: inout RunningState
    ) {
        // Safe throughout: indices within 0 ..< count of both buffers.
        var value = state.value, started = state.started
        defer { state = RunningState(value: value, started: started) }
        switch f {
        case .cumsum:
            // `started`, not a NaN sentinel: ∞ + (−∞) makes the sum NaN, and it must stay NaN.
            for i in 0 ..< count {
                let x = src[i]
                if !x.isNaN {
                    value = started ? value + x : x
                    started = true
                }
                dst?[i] = started ? value : .nan
            }
        case .cummax:
            if let dst {
                for i in 0 ..< count {
                    let x = src[i]
                    value = x > value ? x : value
                    started = started || !x.isNaN
                    dst[i] = started ? value : .nan
                }
            } else {
                for i in 0 ..< count {
                    let x = src[i]
                    value = x > value ? x : value
                    started = started || !x.isNaN
                }
            }
        default:
            if let dst {
                for i in 0 ..< count {
                    let x = src[i]
                    value = x < value ? x : value
                    started = started || !x.isNaN
                    dst[i] = started ? value : .nan
                }
            } else {
                for i in 0 ..< count {
                    let x = src[i]
                    value = x < value ? x : value
                    started = started || !x.isNaN
                }
            }
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
