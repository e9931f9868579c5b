/// Bounds typed for one column's element type.
enum TypedBounds: Sendable {
    case int32(RangeBounds<Int32>)
    case int64(RangeBounds<Int64>)
    case float32(RangeBounds<Float>)
    case float64(RangeBounds<Double>)
}

/// A predicate resolved against one table, in negation normal form: `not` has been pushed down to
/// the leaves and turned into complementary comparisons, which keeps SQL's three-valued logic
/// exact (`not x > 5` becomes `x <= 5`, which a null or NaN does not match either).
indirect enum PlanNode: Sendable {
    /// Column `column` within bounds (a kernel, pruned by block summaries).
    case range(column: Int, bounds: TypedBounds)
    /// Rows in sorted, disjoint row intervals (from ticker sets and date ranges: no scan).
    case rows([Range<Int>])
    /// A computed value within bounds (evaluated into a Float64 buffer per chunk, then the kernel).
    case expression(ExpressionProgram, RangeBounds<Double>)
    case and([PlanNode])
    case or([PlanNode])
    case all
    case none
}

extension QuoteTable {
    /// Resolves names and pushes negation down; throws for unknown columns, and for a predicate
    /// nested deeper than `QueryParser.maximumTreeDepth` (only one built in Swift can be). The
    /// recursion goes as deep as the tree (`and` and `or` lists are loops); a deep tree is planned
    /// on a deep stack (`DeepRecursion`).
    /// Recursive series named more than once are computed once (`SeriesCache`; `counters` counts them).
    func plan(_ predicate: RowPredicate, options: QueryOptions = QueryOptions()) throws(QueryError) -> PlanNode {
        try plan(
            predicate,
            cache: SeriesCache(
                counters: options.counters, shareWindows: options.shareWindows, threads: options.effectiveThreads,
                exactWindows: options.exactWindows))
    }

    /// `plan(_:options:)` with the recursive series of `cache` (per ticker, for an as-of screen).
    func plan(_ predicate: RowPredicate, cache: SeriesCache) throws(QueryError) -> PlanNode {
        cache.countWindows(in: predicate)
        return try DeepRecursion.run(depth: predicate.treeDepth) { () throws(QueryError) -> PlanNode in
            try plan(predicate, negated: false, depth: 0, cache: cache)
        }
    }

    private func plan(_ predicate: RowPredicate, negated: Bool, depth: Int, cache: SeriesCache) throws(QueryError) -> PlanNode {
        if depth > QueryParser.maximumTreeDepth { throw QueryParser.nestingError() }
        switch predicate {
        case .constant(let b):
            return b != negated ? .all : .none
        case .not(let p):
            return try plan(p, negated: !negated, depth: depth + 1, cache: cache)
        case .and(let ps):
            let children = try ps.map { (p) throws(QueryError) in try plan(p, negated: negated, depth: depth + 1, cache: cache) }
            return negated ? QuoteTable.simplifyOr(children) : QuoteTable.simplifyAnd(children)
        case .or(let ps):
            let children = try ps.map { (p) throws(QueryError) in try plan(p, negated: negated, depth: depth + 1, cache: cache) }
            return negated ? QuoteTable.simplifyAnd(children) : QuoteTable.simplifyOr(children)
        case .tickers(let symbols):
            let wanted = Set(symbols.compactMap { tickerNumber(of: $0) })
            let intervals = tickers.indices.filter { wanted.contains(Int32($0)) != negated }
                .map { tickers[$0].rows }.filter { !$0.isEmpty }
            return .rows(QuoteTable.coalesce(intervals))
        case .dates(let bounds):
            let parts = negated ? QuoteTable.complement(bounds) : [bounds]
            return .rows(QuoteTable.unionIntervals(parts.map(dateIntervals)))
        case let .compare(expression, bounds):
            if case .column(let name) = expression {
                return try plan(.range(column: name, bounds: bounds), negated: negated, depth: depth, cache: cache)
            }
            return try planExpression(ExpressionProgram(expression, table: self, cache: cache), bounds, negated: negated)
        case let .compareExpressions(l, r, bounds):
            guard (bounds.lower ?? 0) == 0 && (bounds.upper ?? 0) == 0 else {
                throw QueryError("a comparison of two expressions takes bounds against 0 (the order of the two), not \(bounds)")
            }
            return try planExpression(ExpressionProgram(ordering: l, against: r, table: self, cache: cache), bounds, negated: negated)
        case let .range(name, bounds):
            let index = try valueColumnIndex(name)
            let parts = negated ? QuoteTable.complement(bounds) : [bounds]
            let leaves = parts.map { PlanNode.range(column: index, bounds: QuoteTable.typed($0, for: columns[index].elementType)) }
            if parts.isEmpty { return .none }
            return leaves.count == 1 ? leaves[0] : .or(leaves)
        case let .integerRange(name, bounds):
            let index = try valueColumnIndex(name)
            let parts = negated ? QuoteTable.complement(bounds) : [bounds]
            let type = columns[index].elementType
            // Int64 values compare with the integers exactly; every other column's values are
            // Doubles (or convert to them exactly), compared with bounds that admit the same Doubles.
            let leaves = parts.map {
                PlanNode.range(
                    column: index, bounds: type == .int64 ? .int64($0) : QuoteTable.typed(IntegerLiteral.doubleBounds($0), for: type))
            }
            if parts.isEmpty { return .none }
            return leaves.count == 1 ? leaves[0] : .or(leaves)
        }
    }

    /// The index of the value column `name`, or the error a query gets for it.
    private func valueColumnIndex(_ name: String) throws(QueryError) -> Int {
        if name == "date" || name == dateColumnName {
            throw QueryError("column 'date' compares with dates (YYYY-MM-DD), not numbers", kind: .typeMismatch)
        }
        guard let index = columnIndex(named: name) else {
            let candidates = schema.map(\.identifier) + ["date", "ticker"]
            throw QueryError(
                "unknown column '\(name)'", kind: .unknownColumn, suggestions: Suggestions.closest(to: name, among: candidates))
        }
        return index
    }

    /// A computed value within bounds (or, negated, within the complement of the bounds).
    private func planExpression(_ program: ExpressionProgram, _ bounds: RangeBounds<Double>, negated: Bool) -> PlanNode {
        let parts = negated ? QuoteTable.complement(bounds) : [bounds]
        if let c = program.constant {
            // No column: the same answer for every row (a null or NaN matches nothing).
            return !c.isNaN && parts.contains { $0.matches(c) } ? .all : .none
        }
        let leaves = parts.filter { !$0.isEmpty }.map { PlanNode.expression(program, $0) }
        if leaves.isEmpty { return .none }
        return leaves.count == 1 ? leaves[0] : .or(leaves)
    }

    /// The complement of bounds as one-sided bounds (an empty list: nothing, since "any" negated
    /// matches no known value either).
    static func complement<V>(_ b: RangeBounds<V>) -> [RangeBounds<V>] {
        var parts = [RangeBounds<V>]()
        if let lo = b.lower { parts.append(RangeBounds(upper: lo, upperInclusive: !b.lowerInclusive)) }
        if let hi = b.upper { parts.append(RangeBounds(lower: hi, lowerInclusive: !b.upperInclusive)) }
        return parts
    }

    /// Converts Double bounds to a column's type so that the typed comparison selects exactly the
    /// values the Double comparison would (`x > 80.5` on integers is `x >= 81`).
    static func typed(_ b: RangeBounds<Double>, for type: ElementType) -> TypedBounds {
        switch type {
        case .float64: return .float64(b)
        case .float32: return .float32(floatBounds(b))
        case .int32: return .int32(integerBounds(b))
        case .int64: return .int64(integerBounds(b))
        }
    }

    /// Integer bounds selecting exactly the integers the Double bounds admit. Computed in the
    /// integer domain once the bound is known to be in range: `Double(Int64.max)` is 2⁶³, one
    /// past the largest Int64, and above 2⁵³ a Double `+ 1` is lost to rounding.
    static func integerBounds<I: FixedWidthInteger & ColumnElement>(_ b: RangeBounds<Double>) -> RangeBounds<I> {
        var r = RangeBounds<I>()
        let empty = RangeBounds<I>(lower: I.max, upper: I.max)  // matches nothing (both bounds exclusive)
        // 2^(bits-1) as a Double: exact. Every Double at or above it is beyond I.max.
        let limit = Double(sign: .plus, exponent: I.bitWidth - 1, significand: 1)
        if let lo = b.lower {
            if lo.isNaN { return empty }
            // Smallest integer satisfying x > lo (or x >= lo).
            let v = lo.rounded(.up)
            if v >= limit { return empty }
            if v >= -limit {
                // Safe: -2^(bits-1) <= v < 2^(bits-1), and v is integral.
                var i = I(v)
                if v == lo && !b.lowerInclusive {
                    if i == I.max { return empty }
                    i += 1
                }
                r.lower = i
                r.lowerInclusive = true
            }
        }
        if let hi = b.upper {
            if hi.isNaN { return empty }
            let v = hi.rounded(.down)
            if v < -limit { return empty }
            if v < limit {
                // Safe: as above.
                var i = I(v)
                if v == hi && !b.upperInclusive {
                    if i == I.min { return empty }
                    i -= 1
                }
                r.upper = i
                r.upperInclusive = true
            }
        }
        return r
    }

    private static func floatBounds(_ b: RangeBounds<Double>) -> RangeBounds<Float> {
        var r = RangeBounds<Float>()
        if let lo = b.lower {
            let f = Float(lo)
            if lo.isNaN || Double(f) == lo {
                r.lower = f
                r.lowerInclusive = b.lowerInclusive
            } else if Double(f) < lo {
                r.lower = f
                r.lowerInclusive = false
            }  // no Float lies in (f, lo]
            else {
                r.lower = f
                r.lowerInclusive = true
            }  // no Float lies in [lo, f)
        }
        if let hi = b.upper {
            let f = Float(hi)
            if hi.isNaN || Double(f) == hi {
                r.upper = f
                r.upperInclusive = b.upperInclusive
            } else if Double(f) > hi {
                r.upper = f
                r.upperInclusive = false
            } else {
                r.upper = f
                r.upperInclusive = true
            }
        }
        return r
    }

    /// Row intervals of every ticker whose dates fall within `bounds`: two binary searches per ticker.
    func dateIntervals(_ bounds: RangeBounds<Int32>) -> [Range<Int>] {
        if bounds.isEmpty { return [] }
        // A store's version with segments searches its files' dates where they lie, unmerged.
        if let stitch = dates.unmergedStitch { return dateIntervals(bounds) { rows, isBefore in stitch.partition(rows, isBefore) } }
        return dates.withUnsafeBufferPointer { d in
            dateIntervals(bounds) { rows, isBefore in
                var lo = rows.lowerBound, hi = rows.upperBound
                while lo < hi {
                    let mid = (lo + hi) >> 1
                    if isBefore(d[mid]) { lo = mid + 1 } else { hi = mid }
                }
                return lo
            }
        }
    }

    /// `dateIntervals(_:)` with `partition(rows, isBefore)`: the first of a ticker's rows `rows`
    /// whose date is not `isBefore` (dates ascend within a ticker).
    private func dateIntervals(
        _ bounds: RangeBounds<Int32>, _ partition: (Range<Int>, (Int32) -> Bool) -> Int
    ) -> [Range<Int>] {
        var out = [Range<Int>]()
        for t in tickers where t.rowCount > 0 {
            var lo = t.firstRow, hi = t.firstRow + t.rowCount
            if let l = bounds.lower {
                lo = partition(lo ..< hi) { bounds.lowerInclusive ? $0 < l : $0 <= l }
            }
            if let u = bounds.upper {
                hi = partition(lo ..< hi) { bounds.upperInclusive ? $0 <= u : $0 < u }
            }
            if lo < hi { out.append(lo ..< hi) }
        }
        return out
    }

    static func coalesce(_ sorted: [Range<Int>]) -> [Range<Int>] {
        var out = [Range<Int>]()
        for r in sorted where !r.isEmpty {
            if let last = out.last, last.upperBound >= r.lowerBound {
                out[out.count - 1] = last.lowerBound ..< max(last.upperBound, r.upperBound)
            } else {
                out.append(r)
            }
        }
        return out
    }

    static func unionIntervals(_ lists: [[Range<Int>]]) -> [Range<Int>] {
        coalesce(lists.flatMap { $0 }.sorted { $0.lowerBound < $1.lowerBound })
    }

    static func intersectIntervals(_ a: [Range<Int>], _ b: [Range<Int>]) -> [Range<Int>] {
        var out = [Range<Int>]()
        var i = 0, j = 0
        while i < a.count && j < b.count {
            let lo = max(a[i].lowerBound, b[j].lowerBound), hi = min(a[i].upperBound, b[j].upperBound)
            if lo < hi { out.append(lo ..< hi) }
            if a[i].upperBound < b[j].upperBound { i += 1 } else { j += 1 }
        }
        return out
    }

    /// Flattens nested ands, folds constants, intersects row-interval leaves into one and puts it
    /// first (it is free and usually selective), then ranges, then everything else.
    static func simplifyAnd(_ children: [PlanNode]) -> PlanNode {
        var rows: [Range<Int>]? = nil
        var ranges = [PlanNode](), others = [PlanNode]()
        var stack = children
        while let c = stack.popLast() {
            switch c {
            case .all: continue
            case .none: return .none
            case .and(let cs): stack.append(contentsOf: cs)
            case .rows(let r): rows = rows.map { intersectIntervals($0, r) } ?? r
            case .range: ranges.append(c)
            case .or, .expression: others.append(c)
            }
        }
        if let rows, rows.isEmpty { return .none }
        var out = [PlanNode]()
        if let rows { out.append(.rows(rows)) }
        out += ranges.reversed() + others.reversed()
        if out.isEmpty { return .all }
        return out.count == 1 ? out[0] : .and(out)
    }

    /// Flattens nested ors, folds constants and unions row-interval leaves.
    static func simplifyOr(_ children: [PlanNode]) -> PlanNode {
        var rows: [[Range<Int>]] = []
        var out = [PlanNode]()
        var stack = children
        while let c = stack.popLast() {
            switch c {
            case .none: continue
            case .all: return .all
            case .or(let cs): stack.append(contentsOf: cs)
            case .rows(let r): rows.append(r)
            default: out.append(c)
            }
        }
        out.reverse()
        if !rows.isEmpty { out.insert(.rows(unionIntervals(rows)), at: 0) }
        if out.isEmpty { return .none }
        return out.count == 1 ? out[0] : .or(out)
    }
}
