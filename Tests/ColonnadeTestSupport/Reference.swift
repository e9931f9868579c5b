import Colonnade

/// Obviously-correct, row-at-a-time evaluation of predicates with SQL's three-valued logic.
public enum Reference {
    /// true, false, or nil for unknown.
    public static func evaluate(_ p: RowPredicate, table: QuoteTable, row: Int) -> Bool? {
        switch p {
        case .constant(let b): return b
        case let .range(name, bounds):
            guard let column = table.column(named: name) else { return nil }
            if case .int64(let c) = column {
                // Exactly: Double(x) rounds above 2^53 (Double(Int64.max) is 2^63, past every Int64).
                guard let x = c.value(at: row) else { return nil }
                return sides(bounds) { compare(x, $0) }
            }
            guard let x = column.doubleValue(at: row) else { return nil }
            return within(x, bounds)
        case let .integerRange(name, bounds):
            guard let column = table.column(named: name) else { return nil }
            if case .int64(let c) = column {
                guard let x = c.value(at: row) else { return nil }
                return bounds.matches(x)
            }
            // Every other column's values are Doubles: compared with the integers exactly.
            guard let x = column.doubleValue(at: row), !x.isNaN else { return nil }
            if let lo = bounds.lower {
                let c = compare(lo, x)  // the bound against the value
                if c > 0 || (c == 0 && !bounds.lowerInclusive) { return false }
            }
            if let hi = bounds.upper {
                let c = compare(hi, x)
                if c < 0 || (c == 0 && !bounds.upperInclusive) { return false }
            }
            return true
        case .compare, .compareExpressions:
            var oracle = ExpressionOracle(table: table)
            return oracle.evaluate(p, row: row)
        case .dates(let bounds):
            return bounds.matches(table.dates[row])
        case .tickers(let symbols):
            return symbols.contains(table.tickers[Int(table.tickerNumber(ofRow: row))].symbol)
        case .not(let q):
            return evaluate(q, table: table, row: row).map { !$0 }
        case .and(let qs):
            var unknown = false
            for q in qs {
                switch evaluate(q, table: table, row: row) {
                case false?: return false
                case nil: unknown = true
                case true?: continue
                }
            }
            return unknown ? nil : true
        case .or(let qs):
            var unknown = false
            for q in qs {
                switch evaluate(q, table: table, row: row) {
                case true?: return true
                case nil: unknown = true
                case false?: continue
                }
            }
            return unknown ? nil : false
        }
    }

    /// Whether `x` lies within `bounds`, with SQL's three-valued logic: a two-sided range is its
    /// two comparisons joined by `and` (`lo <= x and x <= hi`, as SQL defines `between`), and a
    /// NaN value or a NaN bound (a folded `x / 0`, which is null) makes its comparison unknown. So
    /// `x between 6/0 and 100` is unknown where `x <= 100` and false where `x > 100`, which its
    /// `not` then selects (Query fuzz finding 9); `x <> 6/0` is unknown everywhere (finding 8).
    public static func within(_ x: Double, _ bounds: RangeBounds<Double>) -> Bool? {
        if x.isNaN { return nil }
        return sides(bounds) { x < $0 ? -1 : x > $0 ? 1 : 0 }
    }

    /// The Kleene `and` of a range's two comparisons, given `order(bound)`: -1, 0 or 1 as the
    /// value is below, equal to or above a (non-NaN) bound.
    static func sides(_ bounds: RangeBounds<Double>, order: (Double) -> Int) -> Bool? {
        var unknown = false
        if let lo = bounds.lower {
            if lo.isNaN {
                unknown = true
            } else {
                let c = order(lo)
                if c < 0 || (c == 0 && !bounds.lowerInclusive) { return false }
            }
        }
        if let hi = bounds.upper {
            if hi.isNaN {
                unknown = true
            } else {
                let c = order(hi)
                if c > 0 || (c == 0 && !bounds.upperInclusive) { return false }
            }
        }
        return unknown ? nil : true
    }

    /// Whether the integer `x` lies within `bounds`, compared exactly (not through `Double(x)`).
    public static func matches(_ x: Int64, _ bounds: RangeBounds<Double>) -> Bool {
        if let lo = bounds.lower {
            if lo.isNaN { return false }
            let c = compare(x, lo)
            if c < 0 || (c == 0 && !bounds.lowerInclusive) { return false }
        }
        if let hi = bounds.upper {
            if hi.isNaN { return false }
            let c = compare(x, hi)
            if c > 0 || (c == 0 && !bounds.upperInclusive) { return false }
        }
        return true
    }

    /// -1, 0 or 1 as the integer `x` is below, equal to or above the Double `d` (not NaN), exactly.
    static func compare(_ x: Int64, _ d: Double) -> Int {
        // Rounding to Double is monotonic: a strict order of Double(x) and d is the order of x and d.
        let r = Double(x)
        if r < d { return -1 }
        if r > d { return 1 }
        // Double(x) == d: d is an integer in [-2^63, 2^63]; 2^63 is past every Int64.
        if d >= 0x1p63 { return -1 }
        let i = Int64(d)
        return x < i ? -1 : x > i ? 1 : 0
    }

    /// The rows where `p` is true.
    /// Expressions are computed once for all rows (through `ExpressionOracle.rows`, which hands
    /// every other predicate back to `evaluate`): `evaluate` alone builds an oracle per row, which
    /// made `open == close` over 8,400 rows take longer than the Query fuzz target's 10 s timeout.
    public static func rows(_ p: RowPredicate, table: QuoteTable) -> [Int] {
        var oracle = ExpressionOracle(table: table)
        return oracle.rows(p)
    }

    /// A random predicate tree over `table`'s columns, with bounds drawn from its own values so
    /// that equality and inclusive bounds hit real data.
    public static func randomPredicate(_ table: QuoteTable, rng: inout SplitMix64, depth: Int = 3) -> RowPredicate {
        let pick = rng.next() % 10
        if depth > 0 && pick < 4 {
            let n = 2 + Int(rng.next() % 2)
            let children = (0 ..< n).map { _ in randomPredicate(table, rng: &rng, depth: depth - 1) }
            switch pick {
            case 0, 1: return .and(children)
            case 2: return .or(children)
            default: return .not(children[0])
            }
        }
        switch rng.next() % 8 {
        case 0:
            let k = 1 + Int(rng.next() % 3)
            var symbols = (0 ..< k).map { _ in
                table.tickers.isEmpty ? "T0" : table.tickers[Int(rng.next() % UInt64(table.tickers.count))].symbol
            }
            if rng.next() % 4 == 0 { symbols.append("NOPE") }
            return .tickers(symbols)
        case 1:
            let a = table.rowCount > 0 ? table.dates[Int(rng.next() % UInt64(table.rowCount))] : 0
            let b = a + Int32(rng.next() % 200)
            return .dates(randomBounds(a, b, rng: &rng))
        default:
            let c = Int(rng.next() % UInt64(table.schema.count))
            let name = rng.next() % 2 == 0 ? table.schema[c].identifier : table.schema[c].name
            func sample() -> Double {
                if table.rowCount > 0 && rng.next() % 3 != 0,
                    let v = table.columns[c].doubleValue(at: Int(rng.next() % UInt64(table.rowCount))), v.isFinite
                {
                    return v
                }
                return 60 + 40 * rng.nextUnit()
            }
            var a = sample(), b = sample()
            if a > b { swap(&a, &b) }
            if rng.next() % 8 == 0 { b = a + 0.5 }
            return .range(column: name, bounds: randomBounds(a, b, rng: &rng))
        }
    }

    static func randomBounds<V: Comparable & Sendable>(_ a: V, _ b: V, rng: inout SplitMix64) -> RangeBounds<V> {
        switch rng.next() % 9 {
        case 0: return .open(a, b)
        case 1: return .closed(a, b)
        case 2: return .halfOpen(a, b)
        case 3: return .greater(than: a)
        case 4: return .atLeast(a)
        case 5: return .less(than: b)
        case 6: return .atMost(b)
        case 7: return .equal(to: a)
        default: return RangeBounds(lower: a, lowerInclusive: false, upper: b, upperInclusive: true)
        }
    }
}
