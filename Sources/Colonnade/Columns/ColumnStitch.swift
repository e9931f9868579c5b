/// Where every row of a deferred merge lies (a store's version with segments, read without
/// merging: ARCHITECTURE.md, *Versions and appends*, *Reading in place*): the merge's runs, each
/// `count` rows of one source table from row `start`, and where each begins in the merged table.
/// Shared by the table's stitched columns (`ColumnStitch`).
///
/// Only a merge that keeps every source row once is stitched (`init?`): an append of days after
/// each ticker's last, or of new tickers. Then anything computed from a column's values as a
/// set (its decimal scale) is the same from the sources as from the merged column.
final class StitchPlan: Sendable {
    /// The runs and where each begins in the merged table (`run(holding:)`, `forEachPiece`).
    let index: UpsertPlan.RunIndex
    /// Each source's row count.
    let sourceRowCounts: [Int]

    var runs: [UpsertPlan.Run] { index.runs }
    /// Each run's first row in the merged table, and the row count last.
    var starts: [Int] { index.starts }
    /// The merged table's row count.
    var rowCount: Int { index.rowCount }

    /// Nil unless the runs take every row of every source exactly once.
    init?(_ plan: UpsertPlan, sourceRowCounts: [Int]) {
        guard plan.rowCount == sourceRowCounts.reduce(0, +) else { return nil }
        index = UpsertPlan.RunIndex(plan.runs)
        self.sourceRowCounts = sourceRowCounts
    }

    /// The run holding merged row `row` (`0 <= row < rowCount`).
    func run(holding row: Int) -> Int { index.run(holding: row) }

    /// Calls `body(source, sourceRow, count, mergedRow)` for each piece of merged rows `rows`
    /// that lies in one run, in order.
    func forEachPiece(_ rows: Range<Int>, _ body: (Int, Int, Int, Int) -> Void) { index.forEachPiece(rows, body) }

    /// Merged row intervals (sorted, disjoint) as each source's row intervals (sorted, disjoint,
    /// adjacent ones joined).
    func sourceIntervals(_ intervals: [Range<Int>]) -> [[Range<Int>]] {
        var bySource = [[Range<Int>]](repeating: [], count: sourceRowCounts.count)
        for interval in intervals {
            forEachPiece(interval) { source, start, n, _ in bySource[source].append(start ..< start + n) }
        }
        return bySource.map { pieces in
            // A source's pieces come in the merged order of its tickers, which need not be its own.
            let ordered = zip(pieces, pieces.dropFirst()).allSatisfy { $0.lowerBound < $1.lowerBound }
            var joined: [Range<Int>] = []
            for piece in ordered ? pieces : pieces.sorted(by: { $0.lowerBound < $1.lowerBound }) {
                if let last = joined.last, last.upperBound == piece.lowerBound {
                    joined[joined.count - 1] = last.lowerBound ..< piece.upperBound
                } else {
                    joined.append(piece)
                }
            }
            return joined
        }
    }

    /// The merged table's bitmask of per-source bitmasks (`masks[s]` over source `s`'s rows):
    /// each run's bits copied to where the run lies.
    func stitch(_ masks: [Bitmask]) -> Bitmask {
        precondition(masks.count == sourceRowCounts.count && zip(masks, sourceRowCounts).allSatisfy { $0.count == $1 })
        var out = Bitmask(count: rowCount)
        // Safe: `masks` keeps every source's words alive until we return; each run lies within its
        // source (so within its mask) and within the merged rows.
        let sources = masks.map { mask in mask.withUnsafeWords { $0 } }
        out.withUnsafeMutableWords { words in
            guard let dst = words.baseAddress else { return }
            runs.withUnsafeBufferPointer { runs in
                starts.withUnsafeBufferPointer { starts in
                    for i in runs.indices {
                        let run = runs[i], src = sources[run.source]
                        guard let base = src.baseAddress else { continue }
                        if run.count == 1 {
                            // A day's row of one ticker: most runs of a store of daily appends.
                            let bit = (base[run.start >> 6] >> UInt64(run.start & 63)) & 1
                            dst[starts[i] >> 6] |= bit << UInt64(starts[i] & 63)
                        } else {
                            StitchPlan.orBits(base, wordCount: src.count, from: run.start, into: dst, at: starts[i], count: run.count)
                        }
                    }
                }
            }
        }
        return out
    }

    /// ORs bits `from ..< from + count` of `src` (`wordCount` words) into `dst` from bit `at`,
    /// 64 bits at a time.
    @inline(__always)
    static func orBits(
        _ src: UnsafePointer<UInt64>, wordCount: Int, from: Int, into dst: UnsafeMutablePointer<UInt64>, at: Int, count: Int
    ) {
        var done = 0
        while done < count {
            let n = Swift.min(64, count - done)
            let bit = from + done, w = bit >> 6, o = bit & 63
            var v = src[w] >> UInt64(o)
            if o != 0 && w + 1 < wordCount { v |= src[w + 1] << UInt64(64 - o) }
            if n < 64 { v &= (1 << UInt64(n)) - 1 }
            let target = at + done, tw = target >> 6, to = target & 63
            dst[tw] |= v << UInt64(to)
            if to != 0 && to + n > 64 { dst[tw + 1] |= v >> UInt64(64 - to) }
            done += n
        }
    }
}

/// A deferred merge's column read where its rows lie (`StitchPlan`): each source's column, all
/// of one type and without nulls. Range leaves are evaluated over each source and their bits
/// stitched (`Evaluator+Stitched.swift`); expressions copy the rows of each piece they evaluate
/// (`copy(_:into:)`), so the merged column is never made unless something else reads it.
final class ColumnStitch<Element: ColumnElement>: @unchecked Sendable {
    // Safe to share: immutable after init; `bases` point into `sources`' storage, which the
    // columns keep alive, and a storage's base address never moves.
    let plan: StitchPlan
    let sources: [Column<Element>]
    private let bases: [UnsafePointer<Element>?]

    /// Nil unless every source has the column without nulls (and no pending values of its own).
    init?(_ plan: StitchPlan, sources: [Column<Element>?]) {
        var held: [Column<Element>] = []
        for (s, column) in sources.enumerated() {
            guard let column, !column.isPending, column.validity == nil, column.count == plan.sourceRowCounts[s] else { return nil }
            held.append(column)
        }
        self.plan = plan
        self.sources = held
        bases = held.map { c in c.withUnsafeBufferPointer { UnsafePointer($0.baseAddress) } }
    }

    /// The first merged row of `rows` whose value is not `isBefore`, the values ascending over
    /// `rows` (a ticker's dates): a search over the runs holding `rows` by their last values,
    /// then within the one run, read in place.
    func partition(_ rows: Range<Int>, _ isBefore: (Element) -> Bool) -> Int {
        guard !rows.isEmpty else { return rows.lowerBound }
        let first = plan.run(holding: rows.lowerBound), last = plan.run(holding: rows.upperBound - 1)
        let starts = plan.starts, runs = plan.runs
        // Safe: rows of `rows` lie in runs first ... last, and each run within its source.
        func value(_ run: Int, _ row: Int) -> Element {
            bases[runs[run].source].unsafelyUnwrapped[runs[run].start + row - starts[run]]
        }
        // The first run whose last row in `rows` is not before.
        var lo = first, hi = last + 1
        while lo < hi {
            let mid = (lo + hi) >> 1
            if isBefore(value(mid, Swift.min(starts[mid + 1], rows.upperBound) - 1)) { lo = mid + 1 } else { hi = mid }
        }
        guard lo <= last else { return rows.upperBound }
        var a = Swift.max(starts[lo], rows.lowerBound), b = Swift.min(starts[lo + 1], rows.upperBound)
        while a < b {
            let mid = (a + b) >> 1
            if isBefore(value(lo, mid)) { a = mid + 1 } else { b = mid }
        }
        return a
    }

    /// Writes merged rows `rows` to `dst` (`rows.count` values).
    func copy(_ rows: Range<Int>, into dst: UnsafeMutablePointer<Element>) {
        plan.forEachPiece(rows) { source, start, n, row in
            // Safe: the piece lies within its source, and within `rows`.
            (dst + (row - rows.lowerBound)).update(from: bases[source].unsafelyUnwrapped + start, count: n)
        }
    }
}

extension ColumnStitch where Element == Double {
    /// The decimal scale of the merged column (`Column.decimalScale`), from the sources' values:
    /// the merge keeps every source row once, so its values are theirs.
    var decimalScale: DecimalScale? {
        var digits = 0, largest = 0.0
        for c in sources {
            guard let parts = c.decimalParts() else { return nil }
            digits = Swift.max(digits, parts.digits)
            largest = Swift.max(largest, parts.largest)
        }
        return DecimalScale(digits: digits, largest: largest)
    }
}
