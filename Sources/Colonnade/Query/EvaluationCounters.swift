import Synchronization

/// What the evaluator did for one or more queries, for tests that must prove a path was taken
/// (zone-map skip, fill, kernel; chunks on several threads). Set `QueryOptions.counters` to
/// collect; left nil (the default), the evaluator pays one untaken branch per range leaf and chunk.
package final class EvaluationCounters: Sendable, Equatable {
    /// Blocks a summary ruled out (`BlockOutcome.none`): no value read.
    package let skippedBlocks = Atomic<Int>(0)
    /// Blocks a summary proved fully matching (`BlockOutcome.all`): words filled, no value read.
    package let filledBlocks = Atomic<Int>(0)
    /// Blocks a summary left undecided (`BlockOutcome.some`): the kernel ran.
    package let kernelBlocks = Atomic<Int>(0)
    /// Blocks not consulted because an earlier `and` term had already emptied them.
    package let emptiedBlocks = Atomic<Int>(0)
    /// Chunks evaluated (selection) or accumulated (aggregates), over all queries.
    package let chunks = Atomic<Int>(0)
    /// Calls that handed chunks (or ticker groups) to more than one worker thread.
    package let parallelRuns = Atomic<Int>(0)
    /// Rows for which a screen as of a day evaluated expressions (lookback included).
    package let expressionRows = Atomic<Int>(0)
    /// Rows run through recursive series (`ema`, `rma`, `rsi`, `cum*`): the table's rows once per
    /// distinct series a query computes (`SeriesCache`).
    package let seriesRows = Atomic<Int>(0)
    /// Rows run through window kernels by screens over the table (`mavg`, `prev`, …): a window
    /// named twice and shared (`SharedWindow`) counts once per chunk.
    package let windowRows = Atomic<Int>(0)

    package init() {}

    package static func == (a: EvaluationCounters, b: EvaluationCounters) -> Bool { a === b }

    /// (skipped, filled, kernel, emptied) block counts so far.
    package var blocks: (skipped: Int, filled: Int, kernel: Int, emptied: Int) {
        (
            skippedBlocks.load(ordering: .relaxed), filledBlocks.load(ordering: .relaxed),
            kernelBlocks.load(ordering: .relaxed), emptiedBlocks.load(ordering: .relaxed)
        )
    }

    func addBlocks(skipped: Int, filled: Int, kernel: Int, emptied: Int) {
        if skipped != 0 { skippedBlocks.add(skipped, ordering: .relaxed) }
        if filled != 0 { filledBlocks.add(filled, ordering: .relaxed) }
        if kernel != 0 { kernelBlocks.add(kernel, ordering: .relaxed) }
        if emptied != 0 { emptiedBlocks.add(emptied, ordering: .relaxed) }
    }

    func addExpressionRows(_ n: Int) {
        if n != 0 { expressionRows.add(n, ordering: .relaxed) }
    }

    func addSeriesRows(_ n: Int) {
        if n != 0 { seriesRows.add(n, ordering: .relaxed) }
    }

    func addWindowRows(_ n: Int) {
        if n != 0 { windowRows.add(n, ordering: .relaxed) }
    }

    func addRun(chunks: Int, threads: Int) {
        self.chunks.add(chunks, ordering: .relaxed)
        if Swift.min(threads, chunks) > 1 { parallelRuns.add(1, ordering: .relaxed) }
    }
}
