/// Exact moving statistics (docs/ARCHITECTURE.md, "Query: exact windows"): `mvar`, `mcov`,
/// `mcorr` and `mbeta` of columns with a decimal scale (`DecimalScale`), as `msum` and `mdev` are.
///
/// Each value becomes its scaled integer (`x·10^d`); the window's sums, sums of squares and of
/// products are Int128 sums, slid without error, and `n·Σxy − Σx·Σy` (n²·(n−1)/n times the
/// covariance, exact) is rounded once: `mvar` and `mcov` are correctly rounded, `mbeta` is the
/// correctly rounded quotient of the two exact numerators (times `10^(dy−dx)` when the scales
/// differ), `mcorr` rounds a few times. A window of equal values has numerator 0 exactly (then
/// `mcorr` and `mbeta` are null); a null (NaN) in the window makes the result NaN. A window of row
/// `i` lies in `[i − n + 1, i]` within the segment, as in `SeriesKernels.runExact`.
extension MovingStatistics {
    /// Whether the Int128 sums of a window of `n` rows of columns with these scales cannot
    /// overflow (and the denominators stay below 2^126, as `SeriesKernels.quotient` needs).
    static func hasExactKernel(window n: Int, _ x: DecimalScale, _ y: DecimalScale) -> Bool {
        let big = Swift.max(x.maxScaled, y.maxScaled) * Double(n)
        let denominator = Double(n) * Double(n) * DecimalScale.powers[x.digits] * DecimalScale.powers[y.digits]
        let squares = Double(n) * Double(n) * DecimalScale.powers[2 * Swift.max(x.digits, y.digits)]
        return n > 1 && big * big < 8.0e37 && denominator < 8.0e37 && squares < 8.0e37
    }

    /// Writes rows `[s, e)` of the buffers (one ticker's rows, or its lookback and rows).
    /// - Precondition: `hasExactKernel(window: n, scaleX, scaleY)`; `y` is `x` for `mvar`.
    static func runExact(
        _ f: CrossTickerExpression.MovingStatistic, window n: Int, x: UnsafePointer<Double>, y: UnsafePointer<Double>,
        scaleX: DecimalScale, scaleY: DecimalScale, dst: UnsafeMutablePointer<Double>, s: Int, e: Int
    ) {
        guard n > 1, s + n - 1 < e else {
            for i in s ..< e { dst[i] = .nan }
            return
        }
        let pair = f.isPair
        let px = DecimalScale.powers[scaleX.digits], py = DecimalScale.powers[scaleY.digits]
        let count = Int128(n)
        let pxi = Int128(px), pyi = Int128(py)
        let denXX = count * Int128(n - 1) * pxi * pxi
        let denXY = count * Int128(n - 1) * pxi * pyi
        let ratio = py / px  // mbeta: 10^(dy − dx), exact when the scales are equal
        var sumX: Int128 = 0, sumY: Int128 = 0, xx: Int128 = 0, yy: Int128 = 0, xy: Int128 = 0
        var nulls = 0
        // Safe throughout: indices within [s, e), inside the buffers.
        @inline(__always) func scaled(_ v: Double, _ p: Double) -> Int128 { v.isNaN ? 0 : Int128(Int64((v * p).rounded())) }
        for i in s ..< e {
            let mx = scaled(x[i], px)
            sumX += mx
            xx += mx * mx
            if pair {
                let my = scaled(y[i], py)
                sumY += my
                yy += my * my
                xy += mx * my
            }
            nulls &+= x[i].isNaN || y[i].isNaN ? 1 : 0
            guard i >= s + n - 1 else {
                dst[i] = .nan
                continue
            }
            if nulls > 0 {
                dst[i] = .nan
            } else {
                let nxx = count * xx - sumX * sumX
                switch f {
                case .mvar:
                    dst[i] = SeriesKernels.quotient(nxx, denXX)
                case .mcov:
                    dst[i] = SeriesKernels.quotient(count * xy - sumX * sumY, denXY)
                case .mcorr:
                    let nyy = count * yy - sumY * sumY, nxy = count * xy - sumX * sumY
                    dst[i] =
                        nxx == 0 || nyy == 0
                        ? .nan
                        : Swift.max(-1, Swift.min(1, Double(nxy) / (Double(nxx).squareRoot() * Double(nyy).squareRoot())))
                case .mbeta:
                    let nyy = count * yy - sumY * sumY, nxy = count * xy - sumX * sumY
                    dst[i] = nyy == 0 ? .nan : SeriesKernels.quotient(nxy, nyy) * ratio
                }
            }
            let o = i - n + 1
            let ox = scaled(x[o], px)
            sumX -= ox
            xx -= ox * ox
            if pair {
                let oy = scaled(y[o], py)
                sumY -= oy
                yy -= oy * oy
                xy -= ox * oy
            }
            nulls &-= x[o].isNaN || y[o].isNaN ? 1 : 0
        }
    }
}
