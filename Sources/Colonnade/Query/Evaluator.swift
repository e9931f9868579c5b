/// Evaluates a plan into a bitmask, one chunk of rows at a time.
///
/// Each chunk (`QueryOptions.rowsPerChunk` rows, whole blocks) is evaluated on its own: the plan's
/// leaves write, intersect or union into the chunk's words, so chunks run on any thread and the
/// result is the same whatever the thread count. Within an `and`, the first child stores and the
/// rest intersect — a kernel in intersect mode skips words that are already zero, and a block
/// whose words are all zero is skipped without reading its values. Block summaries decide per
/// block whether to skip, fill or run the kernel.
struct Evaluator {
    let rowCount: Int
    let columns: [AnyColumn]
    let useSummaries: Bool
    /// Rows per chunk: a multiple of `blockRows`, so chunks cover whole blocks and mask words.
    let chunkRows: Int
    /// Where to count what was done (tests), or nil.
    let counters: EvaluationCounters?

    static let blockRows = zoneMapBlockRows

    init(rowCount: Int, columns: [AnyColumn], options: QueryOptions) {
        self.init(
            rowCount: rowCount, columns: columns, useSummaries: options.useBlockSummaries, chunkRows: options.rowsPerChunk,
            counters: options.counters)
    }

    init(rowCount: Int, columns: [AnyColumn], useSummaries: Bool, chunkRows: Int, counters: EvaluationCounters?) {
        self.rowCount = rowCount
        self.columns = columns
        self.useSummaries = useSummaries
        self.chunkRows = chunkRows
        self.counters = counters
    }

    /// Mask words per chunk (the size of each scratch buffer).
    var chunkWords: Int { chunkRows / 64 }

    /// Evaluates `plan` over the whole table.
    func mask(_ plan: PlanNode, threads: Int) -> Bitmask {
        var mask = Bitmask(count: rowCount)
        switch plan {
        case .none: return mask
        case .all:
            mask.setAll()
            return mask
        default: break
        }
        // Over a store's version with segments, unmerged: over each file, stitched.
        if let stitched = stitchedMask(plan, threads: threads) { return stitched }
        let chunks = (rowCount + chunkRows - 1) / chunkRows
        counters?.addRun(chunks: chunks, threads: threads)
        resolveColumns(of: plan)
        mask.withUnsafeMutableWords { words in
            guard let base = words.baseAddress else { return }
            let shared = SharedPointer(base: base)
            let scratchPerWorker = (0 ..< max(1, min(threads, chunks))).map { _ in Scratch(wordsPerBuffer: chunkWords) }
            forEachChunk(chunks, threads: threads) { chunk, worker in
                let start = chunk * chunkRows
                let rows = start ..< min(start + chunkRows, rowCount)
                scratchPerWorker[worker].expressions.span = rows  // shared windows are computed to its end
                evaluate(plan, rows: rows, out: shared.base + (start >> 6), mode: .store, scratch: scratchPerWorker[worker], depth: 0)
            }
            counters?.addWindowRows(scratchPerWorker.reduce(0) { $0 + $1.expressions.windowRows })
        }
        assert(mask.paddingIsClear, "a kernel set bits past the last row")
        InternalChecks.check(mask, "query result")
        return mask
    }

    /// Merges the pending columns `plan`'s range leaves read (a store's version with segments)
    /// before the workers start (`Column.resolvePendingValues`); expressions merge theirs when
    /// compiled. A loop, not recursion: the tree may be as deep as the parser allows.
    private func resolveColumns(of plan: PlanNode) {
        var nodes = [plan]
        while let node = nodes.popLast() {
            switch node {
            case .range(let column, _): columns[column].resolvePendingValues()
            case .and(let children), .or(let children): nodes += children
            case .rows, .expression, .all, .none: break
            }
        }
    }

    /// Evaluates `node` over `rows` (a chunk) into `out`, the chunk's first word.
    func evaluate(
        _ node: PlanNode, rows: Range<Int>, out: UnsafeMutablePointer<UInt64>, mode: MaskWriteMode,
        scratch: Scratch, depth: Int
    ) {
        let wordCount = (rows.count + 63) >> 6
        switch node {
        case .none:
            if mode != .union { out.update(repeating: 0, count: wordCount) }
        case .all:
            if mode != .intersect { Evaluator.fill(out, rows: rows.count, overwrite: mode == .store) }
        case .rows(let intervals):
            Evaluator.applyIntervals(intervals, rows: rows, out: out, mode: mode)
        case .range(let column, let bounds):
            switch (columns[column], bounds) {
            case let (.float64(c), .float64(b)): evaluateRange(b, c, rows: rows, out: out, mode: mode, scratch: scratch, depth: depth)
            case let (.float32(c), .float32(b)): evaluateRange(b, c, rows: rows, out: out, mode: mode, scratch: scratch, depth: depth)
            case let (.int64(c), .int64(b)): evaluateRange(b, c, rows: rows, out: out, mode: mode, scratch: scratch, depth: depth)
            case let (.int32(c), .int32(b)): evaluateRange(b, c, rows: rows, out: out, mode: mode, scratch: scratch, depth: depth)
            default: preconditionFailure("plan bounds do not match the column type")
            }
        case let .expression(program, bounds):
            evaluateExpression(program, bounds, rows: rows, out: out, mode: mode, scratch: scratch, depth: depth)
        case .and(let children):
            if mode == .union {
                let tmp = scratch.words(depth)
                evaluate(node, rows: rows, out: tmp, mode: .store, scratch: scratch, depth: depth + 1)
                for i in 0 ..< wordCount { out[i] |= tmp[i] }
                return
            }
            for (i, child) in children.enumerated() {
                // Once nothing is left in this chunk, the remaining terms cannot add anything.
                if i > 0 && Evaluator.allZero(out, wordCount) { return }
                evaluate(child, rows: rows, out: out, mode: i == 0 ? mode : .intersect, scratch: scratch, depth: depth + 1)
            }
        case .or(let children):
            if mode == .intersect {
                // Nothing to do where the running result is already empty.
                if Evaluator.allZero(out, wordCount) { return }
                let tmp = scratch.words(depth)
                evaluate(node, rows: rows, out: tmp, mode: .store, scratch: scratch, depth: depth + 1)
                for i in 0 ..< wordCount { out[i] &= tmp[i] }
                return
            }
            for (i, child) in children.enumerated() {
                evaluate(child, rows: rows, out: out, mode: i == 0 ? mode : .union, scratch: scratch, depth: depth + 1)
            }
        }
    }

    /// One range leaf over a chunk, block by block. Consecutive blocks that need the kernel are
    /// evaluated in one call, so small blocks cost little when nothing can be pruned.
    private func evaluateRange<T: ColumnElement>(
        _ bounds: RangeBounds<T>, _ column: Column<T>, rows: Range<Int>,
        out: UnsafeMutablePointer<UInt64>, mode: MaskWriteMode,
        scratch: Scratch, depth: Int
    ) {
        if bounds.isEmpty {
            evaluate(.none, rows: rows, out: out, mode: mode, scratch: scratch, depth: depth)
            return
        }
        let summaries = useSummaries ? column.summaries : nil
        column.withUnsafeBufferPointer { values in
            let validity = column.validity
            // Runs the kernel over rows [start, end) of the chunk (both relative to the table).
            func kernel(_ start: Int, _ end: Int) {
                guard start < end else { return }
                let n = end - start
                let words = (n + 63) >> 6
                let o = out + ((start - rows.lowerBound) >> 6)
                // Safe: end <= rowCount == values.count; o has `words` words in the chunk's mask.
                guard let base = values.baseAddress else { return }
                let v = base + start
                guard let validity else {
                    RangeKernels._evaluate(bounds, v, count: n, o, mode)
                    return
                }
                validity.withUnsafeWords { valid in
                    // Safe: the validity bitmap covers every row (n > 0 rows, so it has words).
                    guard let validWords = valid.baseAddress else { return }
                    let vw = validWords + (start >> 6)
                    if mode == .union {
                        var done = 0
                        while done < words {  // through the chunk-sized scratch, a chunk at a time
                            let part = min(words - done, chunkWords)
                            let tmp = scratch.words(depth)
                            RangeKernels._evaluate(bounds, v + done * 64, count: min(n - done * 64, part * 64), tmp, .store)
                            for i in 0 ..< part { o[done + i] |= tmp[i] & vw[done + i] }
                            done += part
                        }
                    } else {
                        RangeKernels._evaluate(bounds, v, count: n, o, mode)
                        for i in 0 ..< words { o[i] &= vw[i] }
                    }
                }
            }
            guard let summaries else {
                kernel(rows.lowerBound, rows.upperBound)
                return
            }
            forEachBlockRun(
                rows: rows, out: out, mode: mode,
                outcome: { block, n in summaries.outcome(of: bounds, inBlock: block, rows: n) },
                kernel: kernel,
                all: { o, blockStart, n in
                    // Every *value* matches; a null row still does not (a summary can
                    // only vouch for the values, and one loaded without verification
                    // may not even do that).
                    if let validity {
                        validity.withUnsafeWords { valid in
                            // Safe: the bitmap covers the block's rows.
                            guard let validWords = valid.baseAddress else { return }
                            Evaluator.applyValidity(o, validWords + (blockStart >> 6), rows: n, mode: mode)
                        }
                    } else if mode != .intersect {
                        Evaluator.fill(o, rows: n, overwrite: mode == .store)
                    }
                })
        }
    }

    /// Walks the blocks of a chunk for one leaf: `outcome` says per block (its index and row count)
    /// whether no value, every value or some values match; a block no longer in play (intersect
    /// mode, words already zero) is not asked. Runs of consecutive "some" blocks go to `kernel`
    /// (rows relative to the table) in one call; a "none" block is cleared (unless uniting), an
    /// "all" block goes to `all` (its first word, first row and row count).
    @inline(__always)
    private func forEachBlockRun(
        rows: Range<Int>, out: UnsafeMutablePointer<UInt64>, mode: MaskWriteMode,
        outcome: (_ block: Int, _ rows: Int) -> BlockOutcome,
        kernel: (_ start: Int, _ end: Int) -> Void,
        all: (_ out: UnsafeMutablePointer<UInt64>, _ blockStart: Int, _ rows: Int) -> Void
    ) {
        var pending = rows.lowerBound  // start of the run of blocks waiting for the kernel
        var blockStart = rows.lowerBound
        var skipped = 0, filled = 0, kernelRun = 0, emptied = 0  // for `counters` (tests)
        defer { counters?.addBlocks(skipped: skipped, filled: filled, kernel: kernelRun, emptied: emptied) }
        while blockStart < rows.upperBound {
            let n = min(Evaluator.blockRows, rows.upperBound - blockStart)
            let words = (n + 63) >> 6
            let o = out + ((blockStart - rows.lowerBound) >> 6)
            defer { blockStart += n }
            let result: BlockOutcome
            if mode == .intersect && Evaluator.allZero(o, words) {
                result = .none  // nothing left to narrow here
                emptied += 1
            } else {
                result = outcome(blockStart / Evaluator.blockRows, n)
                switch result {
                case .none: skipped += 1
                case .all: filled += 1
                case .some: kernelRun += 1
                }
            }
            if result == .some { continue }
            kernel(pending, blockStart)
            pending = blockStart + n
            switch result {
            case .none:
                // .intersect: the words are already zero or must become zero.
                if mode != .union { o.update(repeating: 0, count: words) }
            case .all:
                all(o, blockStart, n)
            case .some:
                break
            }
        }
        kernel(pending, rows.upperBound)
    }

    /// Rows of an expression evaluated at a time: a piece's values and the buffers beneath them
    /// (8 bytes a row each) stay in the core's L2 cache. A multiple of 64 (whole mask words).
    static let expressionPieceRows = 8192

    /// A computed value within bounds over a chunk: the expression's values into a Float64 buffer,
    /// then the same range kernel as a column (NaN, which stands for null, never matches), a piece
    /// (`expressionPieceRows`) at a time. In intersect mode a piece whose words are all zero is
    /// skipped, and only the rows between its first and last nonzero word are evaluated.
    private func evaluateExpression(
        _ program: ExpressionProgram, _ bounds: RangeBounds<Double>, rows: Range<Int>,
        out: UnsafeMutablePointer<UInt64>, mode: MaskWriteMode, scratch: Scratch, depth: Int
    ) {
        if bounds.isEmpty {
            evaluate(.none, rows: rows, out: out, mode: mode, scratch: scratch, depth: depth)
            return
        }
        if useSummaries && program.supportsBlockIntervals {
            evaluateExpressionByBlocks(program, bounds, rows: rows, out: out, mode: mode, scratch: scratch, depth: depth)
            return
        }
        evaluateExpressionRows(program, bounds, rows: rows, out: out, mode: mode, scratch: scratch, depth: depth)
    }

    /// A computed value within bounds over a chunk, block by block: interval arithmetic over the
    /// block summaries of the columns it reads (`ExpressionProgram+Intervals.swift`) says skip,
    /// fill or evaluate; runs of blocks to evaluate are evaluated together.
    private func evaluateExpressionByBlocks(
        _ program: ExpressionProgram, _ bounds: RangeBounds<Double>, rows: Range<Int>,
        out: UnsafeMutablePointer<UInt64>, mode: MaskWriteMode, scratch: Scratch, depth: Int
    ) {
        forEachBlockRun(
            rows: rows, out: out, mode: mode,
            outcome: { block, n in program.blockOutcome(bounds, block: block, rows: n) },
            kernel: { start, end in
                guard start < end else { return }
                evaluateExpressionRows(
                    program, bounds, rows: start ..< end,
                    out: out + ((start - rows.lowerBound) >> 6),
                    mode: mode, scratch: scratch, depth: depth)
            },
            all: { o, _, n in if mode != .intersect { Evaluator.fill(o, rows: n, overwrite: mode == .store) } })
    }

    /// The expression over `rows` (starting on a word boundary of the chunk; `out` is its first
    /// word), a piece at a time.
    private func evaluateExpressionRows(
        _ program: ExpressionProgram, _ bounds: RangeBounds<Double>, rows: Range<Int>,
        out: UnsafeMutablePointer<UInt64>, mode: MaskWriteMode, scratch: Scratch, depth: Int
    ) {
        var pieceStart = rows.lowerBound
        while pieceStart < rows.upperBound {
            let pieceEnd = min(pieceStart + Evaluator.expressionPieceRows, rows.upperBound)
            let o = out + ((pieceStart - rows.lowerBound) >> 6)
            let wordCount = (pieceEnd - pieceStart + 63) >> 6
            defer { pieceStart = pieceEnd }
            var firstWord = 0, lastWord = wordCount - 1
            if mode == .intersect {
                while firstWord < wordCount && o[firstWord] == 0 { firstWord += 1 }
                if firstWord == wordCount { continue }  // nothing left to narrow in this piece
                while o[lastWord] == 0 { lastWord -= 1 }
            }
            let sub = pieceStart + firstWord * 64 ..< min(pieceStart + (lastWord + 1) * 64, pieceEnd)
            let buffer = scratch.expressions.acquire(sub.count + program.lookback)
            defer { scratch.expressions.release() }
            let values = program.evaluate(rows: sub, buffer: buffer, scratch: scratch.expressions)
            if mode == .union {
                let tmp = scratch.words(depth)
                Double._evaluateRange(bounds, values, count: sub.count, tmp, .store)
                for i in 0 ..< wordCount { o[i] |= tmp[i] }
            } else {
                Double._evaluateRange(bounds, values, count: sub.count, o + firstWord, mode)
            }
        }
    }

    /// Applies sorted, disjoint row intervals to a chunk.
    static func applyIntervals(_ intervals: [Range<Int>], rows: Range<Int>, out: UnsafeMutablePointer<UInt64>, mode: MaskWriteMode) {
        let wordCount = (rows.count + 63) >> 6
        // The first interval that ends after the chunk starts.
        var lo = 0, hi = intervals.count
        while lo < hi {
            let mid = (lo + hi) >> 1
            if intervals[mid].upperBound <= rows.lowerBound { lo = mid + 1 } else { hi = mid }
        }
        if mode == .store { out.update(repeating: 0, count: wordCount) }
        var previousEnd = 0  // chunk-relative
        var i = lo
        while i < intervals.count && intervals[i].lowerBound < rows.upperBound {
            let a = max(intervals[i].lowerBound, rows.lowerBound) - rows.lowerBound
            let b = min(intervals[i].upperBound, rows.upperBound) - rows.lowerBound
            switch mode {
            case .store, .union: Bitmask._setBits(in: out, a, b)
            case .intersect: Bitmask._clearBits(in: out, previousEnd, a)
            }
            previousEnd = b
            i += 1
        }
        if mode == .intersect { Bitmask._clearBits(in: out, previousEnd, rows.count) }
    }

    /// Sets the first `rows` bits of `out`; with `overwrite`, the rest of the last word is cleared.
    static func fill(_ out: UnsafeMutablePointer<UInt64>, rows: Int, overwrite: Bool) {
        let full = rows >> 6
        for i in 0 ..< full { out[i] = ~0 }
        let tail = rows & 63
        guard tail != 0 else { return }
        let bits = (UInt64(1) << UInt64(tail)) &- 1
        if overwrite { out[full] = bits } else { out[full] |= bits }
    }

    /// Combines the validity words of a block whose every value matches into `out`: stored,
    /// intersected or united as `mode` says; bits past `rows` are left clear (store) or untouched.
    static func applyValidity(_ out: UnsafeMutablePointer<UInt64>, _ valid: UnsafePointer<UInt64>, rows: Int, mode: MaskWriteMode) {
        let words = (rows + 63) >> 6
        for i in 0 ..< words {
            var v = valid[i]
            if i == words - 1 && rows & 63 != 0 { v &= (UInt64(1) << UInt64(rows & 63)) &- 1 }
            switch mode {
            case .store: out[i] = v
            case .intersect: out[i] &= v
            case .union: out[i] |= v
            }
        }
    }

    static func allZero(_ p: UnsafeMutablePointer<UInt64>, _ n: Int) -> Bool {
        var acc: UInt64 = 0
        for i in 0 ..< n { acc |= p[i] }
        return acc == 0
    }
}

/// Per-worker temporary words, one chunk's worth per nesting depth.
final class Scratch {
    private var buffers: [UnsafeMutablePointer<UInt64>] = []
    private let wordsPerBuffer: Int
    /// Float64 buffers for computed values.
    let expressions = ExpressionScratch()

    init(wordsPerBuffer: Int) { self.wordsPerBuffer = wordsPerBuffer }

    func words(_ depth: Int) -> UnsafeMutablePointer<UInt64> {
        while buffers.count <= depth {
            let p = UnsafeMutablePointer<UInt64>.allocate(capacity: wordsPerBuffer)
            p.initialize(repeating: 0, count: wordsPerBuffer)
            buffers.append(p)
        }
        return buffers[depth]
    }

    deinit { for b in buffers { b.deallocate() } }
}
