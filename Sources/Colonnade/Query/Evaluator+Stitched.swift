/// A plan over a deferred merge (a store's version with segments), evaluated over each source
/// table where its rows lie and the bits stitched into the merged table's order (`StitchPlan`),
/// so nothing is merged: ARCHITECTURE.md, *Versions and appends*, *Reading in place*.
///
/// Applies to a plan whose leaves are ranges over columns still unmerged, row intervals, and
/// row-local expressions (`ExpressionProgram.rowLocalColumns`) over such columns: each row's outcome
/// depends on that row alone, so it is the same over the source as over the merge. Row intervals
/// (tickers, dates) are in the merged order, and are taken to each source's rows. Each source is
/// evaluated as any table is, with its own block summaries.
extension Evaluator {
    /// `plan` over the merge's sources, stitched; nil when the plan is not of that kind, or
    /// reads a column that is merged already or is not one of the merge's.
    func stitchedMask(_ plan: PlanNode, threads: Int) -> Bitmask? {
        var stitchPlan: StitchPlan?
        var read = Set<Int>()
        func reads(_ column: Int) -> Bool {
            guard let p = columns[column].unmergedStitchPlan else { return false }
            if let stitchPlan, stitchPlan !== p { return false }
            stitchPlan = p
            read.insert(column)
            return true
        }
        // A loop, not recursion: the tree may be as deep as the parser allows.
        var nodes = [(plan, 1)]
        var depth = 1
        while let (node, level) = nodes.popLast() {
            depth = Swift.max(depth, level)
            switch node {
            case .range(let column, _):
                guard reads(column) else { return nil }
            case .expression(let program, _):
                guard let read = program.rowLocalColumns, read.allSatisfy(reads) else { return nil }
            case .and(let children), .or(let children): nodes += children.map { ($0, level + 1) }
            case .rows, .all, .none: break
            }
        }
        guard let stitchPlan else { return nil }
        let sourceCount = stitchPlan.sourceRowCounts.count
        let sourceColumns = (0 ..< sourceCount).map { s in
            columns.indices.map { c in read.contains(c) ? columns[c].stitchSource(s) : columns[c] }
        }
        let plans = DeepRecursion.run(depth: depth) { Evaluator.split(plan, stitchPlan, sourceColumns) }
        let masks = (0 ..< sourceCount).map { s in
            let rows = stitchPlan.sourceRowCounts[s]
            let evaluator = Evaluator(
                rowCount: rows, columns: sourceColumns[s], useSummaries: useSummaries, chunkRows: chunkRows, counters: counters)
            // A day's segment is a few thousand rows: not worth waking the other threads.
            return evaluator.mask(plans[s], threads: rows > chunkRows ? threads : 1)
        }
        return stitchPlan.stitch(masks)
    }

    /// `node` as one plan per source: row intervals taken to the source's rows, expressions
    /// reading the source's columns, everything else as it is.
    private static func split(_ node: PlanNode, _ stitchPlan: StitchPlan, _ sourceColumns: [[AnyColumn]]) -> [PlanNode] {
        let sources = sourceColumns.indices
        switch node {
        case .rows(let intervals):
            return stitchPlan.sourceIntervals(intervals).map { .rows($0) }
        case let .expression(program, bounds):
            return sources.map { s in
                .expression(
                    ExpressionProgram(program, readingColumns: sourceColumns[s], rowCount: stitchPlan.sourceRowCounts[s]), bounds)
            }
        case .and(let children):
            let parts = children.map { split($0, stitchPlan, sourceColumns) }
            return sources.map { s in .and(parts.map { $0[s] }) }
        case .or(let children):
            let parts = children.map { split($0, stitchPlan, sourceColumns) }
            return sources.map { s in .or(parts.map { $0[s] }) }
        case .range, .all, .none:
            return sources.map { _ in node }
        }
    }
}
