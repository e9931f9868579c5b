/// Conditionals and row functions in a program (see `ValueExpression+Conditional.swift`).
///
/// A condition is evaluated into a Float64 buffer as SQL's three values: 1 (true), 0 (false) and
/// NaN (unknown: it compared a null). `and` is false if any part is false, else unknown if any is
/// unknown; `or` the other way round; `not` keeps unknown. A conditional starts from its `else`
/// values (NaN without one) and lets each branch, last to first, overwrite the rows where its
/// condition is true, so the first true branch wins.
extension ExpressionProgram {
    /// A condition inside an expression, resolved against the table.
    indirect enum Condition {
        /// The value within the bounds (NaN: unknown).
        case value(Node, RangeBounds<Double>)
        /// The row's date within the bounds.
        case dates(Column<Int32>, RangeBounds<Int32>)
        /// The row lies in one of these ranges (the rows of the tickers asked for), ascending.
        case rows([Range<Int>])
        case constant(Bool)
        case not(Condition)
        case and([Condition])
        case or([Condition])
    }

    func evaluateFunction(
        _ f: ValueExpression.RowFunction, _ xs: [Node], _ range: Range<Int>,
        into dst: UnsafeMutablePointer<Double>, _ scratch: ExpressionScratch
    ) {
        let n = range.count
        let first = evaluate(xs[0], range, into: dst, scratch)
        if first != UnsafePointer(dst) { dst.update(from: first, count: n) }
        guard xs.count > 1 else { return }
        let tmp = scratch.acquire(n)
        defer { scratch.release() }
        for x in xs.dropFirst() {
            let v = evaluate(x, range, into: tmp, scratch)
            switch f {
            case .greatest: for i in 0 ..< n { dst[i] = dst[i].isNaN || v[i].isNaN ? .nan : Swift.max(dst[i], v[i]) }
            case .least: for i in 0 ..< n { dst[i] = dst[i].isNaN || v[i].isNaN ? .nan : Swift.min(dst[i], v[i]) }
            case .coalesce: for i in 0 ..< n where dst[i].isNaN { dst[i] = v[i] }
            }
        }
    }

    func evaluateConditional(
        _ branches: [(Condition, Node)], _ otherwise: Node?, _ range: Range<Int>,
        into dst: UnsafeMutablePointer<Double>, _ scratch: ExpressionScratch
    ) {
        let n = range.count
        if let otherwise {
            let v = evaluate(otherwise, range, into: dst, scratch)
            if v != UnsafePointer(dst) { dst.update(from: v, count: n) }
        } else {
            dst.update(repeating: .nan, count: n)
        }
        let truth = scratch.acquire(n)
        let values = scratch.acquire(n)
        defer {
            scratch.release()
            scratch.release()
        }
        for (condition, node) in branches.reversed() {
            evaluateCondition(condition, range, into: truth, scratch)
            let v = evaluate(node, range, into: values, scratch)
            for i in 0 ..< n where truth[i] == 1 { dst[i] = v[i] }
        }
    }

    /// 1, 0 or NaN per row of `range` into `dst`.
    func evaluateCondition(_ c: Condition, _ range: Range<Int>, into dst: UnsafeMutablePointer<Double>, _ scratch: ExpressionScratch) {
        let n = range.count
        switch c {
        case let .value(node, bounds):
            let v = evaluate(node, range, into: dst, scratch)
            for i in 0 ..< n { dst[i] = v[i].isNaN ? .nan : bounds.matches(v[i]) ? 1 : 0 }
        case let .dates(dates, bounds):
            dates.withUnsafeBufferPointer { d in
                // Safe: `range` lies within the table, so within the date column.
                for i in 0 ..< n { dst[i] = bounds.matches(d[range.lowerBound + i]) ? 1 : 0 }
            }
        case .rows(let ranges):
            dst.update(repeating: 0, count: n)
            for r in ranges where r.overlaps(range) {
                for row in max(r.lowerBound, range.lowerBound) ..< min(r.upperBound, range.upperBound) { dst[row - range.lowerBound] = 1 }
            }
        case .constant(let v):
            dst.update(repeating: v ? 1 : 0, count: n)
        case .not(let x):
            evaluateCondition(x, range, into: dst, scratch)
            for i in 0 ..< n { dst[i] = 1 - dst[i] }  // NaN stays NaN
        case .and(let parts), .or(let parts):
            let isAnd: Bool
            if case .and = c { isAnd = true } else { isAnd = false }
            // Decisive: false for `and`, true for `or`.
            let decisive: Double = isAnd ? 0 : 1
            dst.update(repeating: isAnd ? 1 : 0, count: n)
            let tmp = scratch.acquire(n)
            defer { scratch.release() }
            for part in parts {
                evaluateCondition(part, range, into: tmp, scratch)
                for i in 0 ..< n where dst[i] != decisive {
                    let t = tmp[i]
                    if t == decisive { dst[i] = decisive } else if t.isNaN { dst[i] = .nan }
                }
            }
        }
    }
}
