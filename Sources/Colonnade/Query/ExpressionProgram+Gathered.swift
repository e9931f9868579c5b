/// Values at scattered rows evaluated together: an as-of screen's row per ticker, each with the
/// rows before it that its windows read, copied into one gathered buffer per column and evaluated
/// in one pass of the program over them (docs/ARCHITECTURE.md, *One query*, as of a day).
///
/// Evaluating a run of rows `[s, e)` evaluates `[s - lookback, e)` and keeps the tail. A screen as
/// of a day asks for one row per ticker, so evaluated run by run it walks the program, acquires
/// its buffers and calls each kernel once per ticker, for a few values each time: that walk, not
/// the arithmetic, was most of `--on latest`'s time (S1L 0.9 ms for 1,000 rows). Here the runs'
/// extended ranges are laid end to end in a gathered space and cut at the tickers' boundaries
/// into segments, and the program runs once over the space, each kernel once per node. Every
/// kernel sees each segment as it would see it in the table: the same values at the same offsets
/// within it, and its ticker's first row (its *origin*, from which moving sums count their
/// restart points) at the same distance before it, even though that row was not gathered. So
/// each value is the one evaluating its run alone gives, to the bit (`GatheredValuesTests`).
///
/// A program that reads rows by their number in the table — cross-ticker values and recursive
/// series (materialized over whole tickers), conditions on dates or tickers — is evaluated run by
/// run, as are runs longer than `gatheredRunLimit` (read in place, no copy).
extension ExpressionProgram {
    /// Runs whose extended range is longer than this are evaluated in place: their own walk of
    /// the program costs less than copying their rows.
    static let gatheredRunLimit = 4096

    /// Runs to evaluate together: each run's extended range of table rows and the indices of the
    /// requested rows it answers; `rowCount` rows in all.
    struct GatheredRuns {
        var ranges: [Range<Int>] = []
        var members: [Range<Int>] = []
        var rowCount = 0

        init(capacity: Int = 0) {
            ranges.reserveCapacity(capacity)
            members.reserveCapacity(capacity)
        }

        mutating func removeAll() {
            ranges.removeAll(keepingCapacity: true)
            members.removeAll(keepingCapacity: true)
            rowCount = 0
        }

        mutating func append(_ extended: Range<Int>, members m: Range<Int>) {
            ranges.append(extended)
            members.append(m)
            rowCount += extended.count
        }
    }

    /// The columns the program reads (ascending) when it can be evaluated over gathered rows, else
    /// nil: every node reads its rows through `evaluate`'s range and `forEachTickerSegment` only.
    var gatheredColumns: [Int]? {
        var read = Set<Int>()
        func walk(_ node: Node) -> Bool {
            switch node {
            case .column(let i):
                read.insert(i)
                return true
            case .constant: return true
            case .negate(let x), .math(_, let x), .isNull(let x), .series(_, let x, _), .exactSeries(_, let x, _, _), .shared(_, let x):
                return walk(x)
            case let .chain(first, steps): return walk(first) && steps.allSatisfy { walk($0.1) }
            case let .ordering(a, b): return walk(a) && walk(b)
            case .function(_, let xs): return xs.allSatisfy(walk)
            case let .conditional(branches, otherwise):
                return branches.allSatisfy { walkCondition($0.0) && walk($0.1) } && (otherwise.map(walk) ?? true)
            case .crossTicker, .materialized: return false
            }
        }
        func walkCondition(_ c: Condition) -> Bool {
            switch c {
            case .value(let x, _): return walk(x)
            case .constant: return true
            case .not(let d): return walkCondition(d)
            case .and(let ds), .or(let ds): return ds.allSatisfy(walkCondition)
            case .dates, .rows: return false
            }
        }
        // A deep program is evaluated run by run (the walk recurses; see `DeepRecursion`).
        guard materialized.isEmpty, depth <= DeepRecursion.inlineDepth, walk(root) else { return nil }
        return read.sorted()
    }

    /// The index of the last of `starts` (ascending) at or before `row`, or 0 when there is none,
    /// searched from index `from` on when that start is at or before `row` (else from 0): doubling
    /// the step, then halving it, so a walk over ascending rows costs about one step per ticker.
    static func lastStart(atOrBefore row: Int, in starts: [Int], from: Int) -> Int {
        var lo = from < starts.count && starts[from] <= row ? from : 0  // starts[lo] <= row, or lo is 0
        var step = 1
        while lo + step < starts.count && starts[lo + step] <= row {
            lo += step
            step *= 2
        }
        var hi = Swift.min(lo + step, starts.count)  // starts[hi] > row, or hi is the end
        while hi - lo > 1 {
            let mid = (lo + hi) >> 1
            if starts[mid] <= row { lo = mid } else { hi = mid }
        }
        return lo
    }

    /// Evaluates `batch`'s runs together and writes the value of each requested row, `rows[k]`
    /// for `k` in a run's members, to `out[k]`.
    /// - Precondition: `columns` is `gatheredColumns`; the runs' ranges lie within the table.
    func evaluateGathered(
        _ batch: GatheredRuns, columns read: [Int], rows: [Int], into out: UnsafeMutableBufferPointer<Double>,
        scratch: ExpressionScratch
    ) {
        let total = batch.rowCount
        // The segments: each run's range cut at the tickers' first rows, as `forEachTickerSegment`
        // cuts it in the table, with each piece's origin as far before it as its ticker's first row.
        var starts = [Int](), origins = [Int]()
        starts.reserveCapacity(batch.ranges.count)
        origins.reserveCapacity(batch.ranges.count)
        var offset = 0
        var t = 0  // the ticker of the previous range's start: ranges ascend
        for range in batch.ranges {
            t = ExpressionProgram.lastStart(atOrBefore: range.lowerBound, in: tickerStarts, from: t)
            var row = range.lowerBound
            while row < range.upperBound {
                let tickerStart = tickerStarts[t]
                let end = t + 1 < tickerStarts.count ? min(tickerStarts[t + 1], range.upperBound) : range.upperBound
                let at = offset + (row - range.lowerBound)
                starts.append(at)
                origins.append(at - (row - tickerStart))
                row = end
                t += 1
            }
            t -= 1  // the ticker the range ends in
            offset += range.count
        }
        // The columns, gathered: NaN for null, so every one is read in place.
        let values = scratch.acquire(total)
        var direct = [UnsafePointer<Double>?](repeating: nil, count: columns.count)
        for c in read {
            let buffer = scratch.acquire(total)
            var at = 0
            for range in batch.ranges {
                if let source = directValues(ofColumn: c) {
                    // Safe: the range lies within the table, so within the column.
                    (buffer + at).update(from: source + range.lowerBound, count: range.count)
                } else if let stitch = stitch(ofColumn: c) {
                    stitch.copy(range, into: buffer + at)
                } else {
                    ExpressionProgram.load(columns[c], range, into: buffer + at)
                }
                at += range.count
            }
            direct[c] = UnsafePointer(buffer)
        }
        let program = ExpressionProgram(self, readingGathered: direct, tickerStarts: starts, segmentOrigins: origins, rowCount: total)
        let own = scratch.scratchForGatheredRows()
        let before = (own.rowsEvaluated, own.windowRows, own.scaledPrefixRows)
        program.evaluate(rows: 0 ..< total, into: values, scratch: own)
        // The work counted as the caller's, as run by run (the same rows).
        scratch.rowsEvaluated += own.rowsEvaluated - before.0
        scratch.windowRows += own.windowRows - before.1
        scratch.scaledPrefixRows += own.scaledPrefixRows - before.2
        for _ in read { scratch.release() }
        offset = 0
        for (range, members) in Swift.zip(batch.ranges, batch.members) {
            // Safe: each member's row lies within its run's range.
            for k in members { out[k] = values[offset + rows[k] - range.lowerBound] }
            offset += range.count
        }
        scratch.release()
    }
}
