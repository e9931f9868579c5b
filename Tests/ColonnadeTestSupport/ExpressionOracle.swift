import Colonnade
import Foundation

/// Row-by-row values of expressions, written from the language's rules alone (no engine code):
/// nil is null; a window is the `n` rows of the same ticker ending at the row, each summed or
/// compared in a plain loop. Whole columns of values are computed per sub-expression (memoised),
/// so nested windows stay affordable in debug builds.
public struct ExpressionOracle {
    public let table: QuoteTable
    /// Each row's ticker's first row.
    let tickerStart: [Int]
    private var memo: [ValueExpression: [Double?]] = [:]

    public init(table: QuoteTable) {
        self.table = table
        var starts = [Int](repeating: 0, count: table.rowCount)
        for t in table.tickers { for r in t.firstRow ..< t.firstRow + t.rowCount { starts[r] = t.firstRow } }
        tickerStart = starts
    }

    /// The value of `e` at every row.
    public mutating func values(_ e: ValueExpression) -> [Double?] {
        if let v = memo[e] { return v }
        let n = table.rowCount
        var out = [Double?](repeating: nil, count: n)
        switch e {
        case .column(let name):
            let column = table.column(named: name)!
            for r in 0 ..< n { out[r] = column.doubleValue(at: r) }
        case .number(let c):
            out = [Double?](repeating: c, count: n)
        case .negate(let x):
            out = values(x).map { $0.map { -$0 } }
        case let .math(f, x):
            out = values(x).map { v in
                guard let v else { return nil }
                switch f {
                case .abs: return Swift.abs(v)
                case .sqrt: return Foundation.sqrt(v)
                case .ln: return Foundation.log(v)
                case .exp: return Foundation.exp(v)
                }
            }
        case let .chain(first, steps):
            // Left to right: ((first op₁ x₁) op₂ x₂) …, null once any step is.
            out = values(first)
            for step in steps {
                let y = values(step.operand)
                for r in 0 ..< n {
                    guard let u = out[r], let v = y[r] else {
                        out[r] = nil
                        continue
                    }
                    switch step.op {
                    case .add: out[r] = u + v
                    case .subtract: out[r] = u - v
                    case .multiply: out[r] = u * v
                    case .divide: out[r] = v == 0 ? nil : u / v
                    }
                }
            }
        case let .function(f, xs):
            // greatest/least: null if any argument is null; coalesce: the first non-null.
            let columns = xs.map { values($0) }
            for r in 0 ..< n {
                let args = columns.map { $0[r].flatMap { $0.isNaN ? nil : $0 } }
                switch f {
                case .greatest: out[r] = args.contains(nil) ? nil : args.map { $0! }.max()
                case .least: out[r] = args.contains(nil) ? nil : args.map { $0! }.min()
                case .coalesce: out[r] = args.first { $0 != nil } ?? nil
                }
            }
        case .nullTest(let x):
            out = values(x).map { v -> Double? in (v == nil || v!.isNaN) ? 1.0 : 0.0 }
        case let .conditional(branches, otherwise):
            let conditions = branches.map { resolve($0.condition) }
            let branchValues = branches.map { values($0.value) }
            let other = otherwise.map { values($0) }
            for r in 0 ..< n {
                // SQL: the first branch whose condition is true; unknown is not true.
                if let k = conditions.indices.first(where: { evaluate(conditions[$0], row: r) == true }) {
                    out[r] = branchValues[k][r]
                } else {
                    out[r] = other?[r] ?? nil
                }
            }
        case let .series(f, x, w) where f.isRecursive:
            out = ExpressionOracle.recursive(f, w, values(x), tickerStart: tickerStart)
        case let .series(f, x, w):
            let xs = values(x)
            for r in 0 ..< n {
                let back = r - w  // the row `w` earlier, if in the same ticker
                let prev: Double?? = back >= tickerStart[r] ? .some(xs[back]) : .none
                switch f {
                case .ema, .rma, .rsi, .cumsum, .cummax, .cummin:
                    break  // recursive: above
                case .prev:
                    out[r] = prev ?? nil
                case .change:
                    if let p = prev ?? nil, let v = xs[r] { out[r] = v - p }
                case .pctChange:
                    if let p = prev ?? nil, let v = xs[r], p != 0 { out[r] = v / p - 1 }
                case .msum, .mavg, .mmin, .mmax, .mdev:
                    let first = r - w + 1
                    guard first >= tickerStart[r] else { continue }
                    var window = [Double]()
                    var hasNull = false
                    for k in first ... r { if let v = xs[k] { window.append(v) } else { hasNull = true } }
                    if hasNull { continue }
                    switch f {
                    case .msum, .mavg:
                        var s = 0.0
                        for v in window { s += v }
                        out[r] = f == .msum ? s : s / Double(w)
                    case .mmin:
                        out[r] = window.contains { $0.isNaN } ? .nan : window.min()!
                    case .mmax:
                        out[r] = window.contains { $0.isNaN } ? .nan : window.max()!
                    default:
                        guard w > 1 else { continue }
                        var s = 0.0
                        for v in window { s += v }
                        let mean = s / Double(w)
                        var ss = 0.0
                        for v in window { ss += (v - mean) * (v - mean) }
                        out[r] = Foundation.sqrt(ss / Double(w - 1))
                    }
                }
            }
        case .crossTicker(let c):
            out = crossTicker(c)
        }
        memo[e] = out
        return out
    }

    /// Cross-sectional functions, `ref` and moving statistics, row by row from their rules:
    /// the rows of a date are found by a dictionary, ranks by counting smaller values, windows
    /// by two-pass sums.
    mutating func crossTicker(_ c: CrossTickerExpression) -> [Double?] {
        let n = table.rowCount
        var out = [Double?](repeating: nil, count: n)
        // Inside an expression a NaN is null.
        func known(_ v: [Double?]) -> [Double?] { v.map { $0.flatMap { $0.isNaN ? nil : $0 } } }
        switch c {
        case let .crossSection(f, x):
            let xs = known(values(x))
            var byDate = [Int32: [Int]]()
            for r in 0 ..< n { byDate[table.dates[r], default: []].append(r) }
            for (_, rows) in byDate {
                let present = rows.compactMap { xs[$0] }
                let count = present.count
                var sum = 0.0
                for v in present { sum += v }
                let mean = sum / Double(count)
                var ss = 0.0
                for v in present { ss += (v - mean) * (v - mean) }
                let sd = count < 2 ? 0 : Foundation.sqrt(ss / Double(count - 1))
                for r in rows {
                    switch f {
                    case .xcount: out[r] = Double(count)
                    case .xmean: out[r] = count == 0 ? nil : mean
                    case .xz:
                        if let v = xs[r], count >= 2, sd != 0, !sd.isNaN { out[r] = (v - mean) / sd }
                    case .xrank, .xpct:
                        guard let v = xs[r] else { continue }
                        let rank = 1 + present.filter { $0 < v }.count
                        out[r] = f == .xrank ? Double(rank) : count == 1 ? 0 : Double(rank - 1) / Double(count - 1)
                    }
                }
            }
        case let .reference(x, symbol):
            let xs = values(x)
            guard let t = table.tickers.first(where: { $0.symbol == symbol }) else { return out }
            var rowOfDate = [Int32: Int]()
            for r in t.firstRow ..< t.firstRow + t.rowCount { rowOfDate[table.dates[r]] = r }
            for r in 0 ..< n {
                if let s = rowOfDate[table.dates[r]] { out[r] = xs[s].flatMap { $0.isNaN ? nil : $0 } }
            }
        case let .moving(f, x, y, w):
            let xs = known(values(x))
            let ys = y.map { known(values($0)) } ?? xs
            for r in 0 ..< n {
                let first = r - w + 1
                guard w > 1, first >= tickerStart[r] else { continue }
                var a = [Double](), b = [Double]()
                for k in first ... r {
                    if let u = xs[k], let v = ys[k] {
                        a.append(u)
                        b.append(v)
                    }
                }
                guard a.count == w else { continue }
                // An infinity in the window makes every statistic NaN.
                if !(a + b).allSatisfy({ $0.isFinite }) {
                    out[r] = .nan
                    continue
                }
                let ma = a.reduce(0, +) / Double(w), mb = b.reduce(0, +) / Double(w)
                var sxx = 0.0, syy = 0.0, sxy = 0.0
                for k in 0 ..< w {
                    sxx += (a[k] - ma) * (a[k] - ma)
                    syy += (b[k] - mb) * (b[k] - mb)
                    sxy += (a[k] - ma) * (b[k] - mb)
                }
                // A window of equal values has variance 0 exactly.
                if a.allSatisfy({ $0 == a[0] }) {
                    sxx = 0
                    sxy = 0
                }
                if b.allSatisfy({ $0 == b[0] }) {
                    syy = 0
                    sxy = 0
                }
                switch f {
                case .mvar: out[r] = sxx / Double(w - 1)
                case .mcov: out[r] = sxy / Double(w - 1)
                case .mcorr: out[r] = sxx == 0 || syy == 0 ? nil : sxy / Foundation.sqrt(sxx * syy)
                case .mbeta: out[r] = syy == 0 ? nil : sxy / syy
                }
            }
        }
        return out
    }

    /// `ema`, `rma`, `rsi`, `cumsum`, `cummax`, `cummin` by the rules, a plain loop per
    /// ticker: a null (nil or NaN) input row is null (ema, rma, rsi) or carries the running value
    /// (cum*), and leaves the state as it was.
    static func recursive(_ f: ValueExpression.SeriesFunction, _ n: Int, _ xs: [Double?], tickerStart: [Int]) -> [Double?] {
        var out = [Double?](repeating: nil, count: xs.count)
        var r = 0
        while r < xs.count {
            var end = r + 1
            while end < xs.count && tickerStart[end] == r { end += 1 }
            // One ticker: rows r ..< end.
            var seed = [Double]()
            var state: Double?
            var gains = [Double](), losses = [Double]()
            var gain = 0.0, loss = 0.0
            for i in r ..< end {
                let x = xs[i].flatMap { $0.isNaN ? nil : $0 }
                switch f {
                case .ema, .rma:
                    guard let x else { continue }
                    if let s = state {
                        state = f == .ema ? (x - s) * (2 / Double(n + 1)) + s : (s * Double(n - 1) + x) / Double(n)
                    } else {
                        seed.append(x)
                        if seed.count == n { state = seed.reduce(0, +) / Double(n) }
                    }
                    out[i] = state
                case .rsi:
                    guard i > r, let x, let p = xs[i - 1], !p.isNaN else { continue }
                    let d = x - p
                    if d.isNaN { continue }  // ∞ − ∞: a NaN change is null, as any NaN
                    if gains.count < n {
                        gains.append(max(d, 0))
                        losses.append(max(-d, 0))
                        guard gains.count == n else { continue }
                        gain = gains.reduce(0, +) / Double(n)
                        loss = losses.reduce(0, +) / Double(n)
                    } else {
                        gain = (gain * Double(n - 1) + max(d, 0)) / Double(n)
                        loss = (loss * Double(n - 1) + max(-d, 0)) / Double(n)
                    }
                    out[i] = gain + loss == 0 ? 0 : 100 * (gain / (gain + loss))
                case .cumsum:
                    if let x { state = (state ?? 0) + x }
                    out[i] = state
                case .cummax:
                    if let x { state = max(state ?? x, x) }
                    out[i] = state
                case .cummin:
                    if let x { state = min(state ?? x, x) }
                    out[i] = state
                default:
                    break
                }
            }
            r = end
        }
        return out
    }

    /// Per row: nil where either side is null or NaN, else -1, 0 or 1 as `l` is below, equal to or
    /// above `r` (Swift's `<` and `==`, which order infinities).
    public mutating func order(_ l: ValueExpression, _ r: ValueExpression) -> [Double?] {
        let a = values(l), b = values(r)
        return (0 ..< table.rowCount).map { row -> Double? in
            guard let x = a[row], let y = b[row], !x.isNaN, !y.isNaN else { return nil }
            return x < y ? -1 : x == y ? 0 : 1
        }
    }

    /// A predicate with every expression computed for all rows.
    indirect enum Node {
        case values([Double?], RangeBounds<Double>)
        case other(RowPredicate)
        case not(Node), and([Node]), or([Node])
    }

    mutating func resolve(_ p: RowPredicate) -> Node {
        switch p {
        case let .compare(e, bounds): return .values(values(e), bounds)
        case let .compareExpressions(l, r, bounds): return .values(order(l, r), bounds)
        case .not(let q): return .not(resolve(q))
        case .and(let qs): return .and(qs.map { resolve($0) })
        case .or(let qs): return .or(qs.map { resolve($0) })
        default: return .other(p)
        }
    }

    /// true, false or nil (unknown) for `p` at `row`, with SQL's three-valued logic; a comparison
    /// of a null or NaN value is unknown.
    public mutating func evaluate(_ p: RowPredicate, row: Int) -> Bool? {
        evaluate(resolve(p), row: row)
    }

    func evaluate(_ n: Node, row: Int) -> Bool? {
        switch n {
        case let .values(v, bounds):
            guard let x = v[row] else { return nil }
            return Reference.within(x, bounds)
        case .not(let q):
            return evaluate(q, row: row).map { !$0 }
        case .and(let qs):
            var unknown = false
            for q in qs {
                switch evaluate(q, row: row) {
                case false?: return false
                case nil: unknown = true
                case true?: continue
                }
            }
            return unknown ? nil : true
        case .or(let qs):
            var unknown = false
            for q in qs {
                switch evaluate(q, row: row) {
                case true?: return true
                case nil: unknown = true
                case false?: continue
                }
            }
            return unknown ? nil : false
        case .other(let p):
            return Reference.evaluate(p, table: table, row: row)
        }
    }

    /// The rows where `p` is true.
    public mutating func rows(_ p: RowPredicate) -> [Int] {
        let node = resolve(p)
        return (0 ..< table.rowCount).filter { evaluate(node, row: $0) == true }
    }
}
