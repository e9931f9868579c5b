extension QuoteTable {
    /// Merges `other` into this table as an upsert by (ticker, date).
    ///
    /// For each ticker of `other`, its rows are merged with the stored ones by date: a date present
    /// in both takes `other`'s row (a re-fetched day replaces the stored one — columns `other`
    /// lacks are null in it), new dates are inserted in order, and dates stay unique and ascending.
    /// Tickers `other` does not mention are untouched (their rows are copied as they are). New
    /// tickers are added after the existing ones; their metadata, and new metadata of existing
    /// tickers, is merged in. Columns only one side has are filled with nulls on the other; a
    /// column whose types differ becomes Float64.
    ///
    /// - Complexity: O(rows of both tables); block summaries are recomputed. To merge many tables,
    ///   use `upsert(contentsOf:)`, which copies the table once rather than once per table.
    public mutating func upsert(_ other: QuoteTable) {
        upsert(contentsOf: [other])
    }

    /// Merges several tables at once, as if `upsert(_:)` were called with each in order (so a later
    /// table's row wins over an earlier one's for the same ticker and date), in one pass.
    ///
    /// The rows of the result are planned first (`UpsertPlan`: runs of consecutive rows from one
    /// table each); then every column is allocated once at its final size and filled along the
    /// runs with one bulk copy per run, columns on up to `threads` threads. Into an empty table,
    /// one incoming table is taken as it is, without a copy.
    ///
    /// - Parameters:
    ///   - others: the tables to merge in, in order; a later one wins on the same ticker and date.
    ///   - threads: Columns are copied on up to this many threads; the result does not depend on
    ///     it.
    /// - Complexity: O(rows of all tables); tickers present in one table only are copied as whole
    ///   runs.
    public mutating func upsert(contentsOf others: [QuoteTable], threads: Int = 1) {
        upsert(contentsOf: others, threads: threads, deferringColumns: false)
    }

    /// ``upsert(contentsOf:threads:)``, with `deferringColumns`: the ticker index is merged at
    /// once, the dates and each value column only when first read (`PendingColumn`: once, on the
    /// reading thread, shared by every copy of the table), so a query that reads two of twelve
    /// columns merges two. The table is the same, bit for bit, either way; deferred columns keep
    /// the tables merged alive until they are read. How a store's version with segments is read
    /// (`SnapshotStore.table(atVersion:)`; ARCHITECTURE.md, *Versions and appends*).
    package mutating func upsert(contentsOf others: [QuoteTable], threads: Int, deferringColumns: Bool) {
        let others = others.filter { $0.rowCount > 0 || !$0.tickers.isEmpty }
        guard !others.isEmpty else { return }
        if others.count == 1 && rowCount == 0 && tickers.isEmpty && schema.isEmpty {
            adopt(others[0])
            return
        }
        let sources = [self] + others  // source 0 is this table
        let plan = UpsertPlan(sources)
        let runs = plan.runs, total = plan.rowCount
        @Sendable func mergedDates() -> Column<Int32> {
            QuoteTable.gatherMerged(runs, total: total, threads: threads, { sources[$0].dates }) {
                QuoteTable.gather(runs, total: total) { sources[$0].dates }
            }
        }
        // Deferred, the dates too are merged when first read: a range over prices reads none. A
        // merge that keeps every source row (an append) can be read where the rows lie.
        let stitchPlan = deferringColumns ? StitchPlan(plan, sourceRowCounts: sources.map(\.rowCount)) : nil
        let newDates =
            deferringColumns
            ? Column<Int32>(
                pendingCount: total, stitch: stitchPlan.flatMap { ColumnStitch($0, sources: sources.map(\.dates)) }, mergedDates)
            : mergedDates()
        let newColumns =
            deferringColumns
            ? QuoteTable.pendingColumns(plan, sources, stitchPlan: stitchPlan, threads: threads)
            : QuoteTable.gatherColumns(plan, sources, threads: threads)
        schema = plan.schema
        columns = newColumns
        dates = newDates
        tickers = plan.tickers
        numberBySymbol = plan.numberBySymbol
        for other in others { for (k, v) in other.metadata where metadata[k] == nil { metadata[k] = v } }
        shrinkToFit()
        // Summaries of the columns gathered without them (the summarized gather and pending
        // columns bring their own).
        if !dates.hasSummaries { dates.computeSummaries() }
        for i in columns.indices where !columns[i].hasSummaries { columns[i].computeSummaries() }
        InternalChecks.check(self, "after upsert")
    }

    /// Becomes `other` (an upsert into an empty table), keeping this table's date column name
    /// and metadata (other's metadata fills in missing keys), as the general path would.
    private mutating func adopt(_ other: QuoteTable) {
        let name = dateColumnName, ownMetadata = metadata
        self = other
        dateColumnName = name
        metadata = ownMetadata
        for (k, v) in other.metadata where metadata[k] == nil { metadata[k] = v }
        shrinkToFit()
        if !hasSummaries { computeSummaries() }
        InternalChecks.check(self, "after upsert")
    }

    /// Every column of the plan's schema, gathered along its runs, on up to `threads` threads.
    private static func gatherColumns(_ plan: UpsertPlan, _ sources: [QuoteTable], threads: Int) -> [AnyColumn] {
        let sourceIndexes = sources.map { source in
            Dictionary(source.schema.enumerated().map { ($1.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        }
        var results = [AnyColumn?](repeating: nil, count: plan.schema.count)
        results.withUnsafeMutableBufferPointer { out in
            let slots = SharedPointer(base: out.baseAddress!)
            forEachChunk(plan.schema.count, threads: threads) { c, _ in
                let d = plan.schema[c]
                let columns = sources.indices.map { s in sourceIndexes[s][d.identifier].map { sources[s].columns[$0] } }
                // Safe: each column index is claimed by one worker only.
                slots.base[c] = gather(type: d.type, columns, runs: plan.runs, total: plan.rowCount)
            }
        }
        return results.map { $0! }
    }

    /// Every column of the plan's schema as a `PendingColumn`: gathered along its runs, shrunk and
    /// summarized, as `upsert` does eagerly, when first read; read where its rows lie until then
    /// (`ColumnStitch`) when `stitchPlan` is given and every source has it without nulls.
    private static func pendingColumns(
        _ plan: UpsertPlan, _ sources: [QuoteTable], stitchPlan: StitchPlan?, threads: Int
    ) -> [AnyColumn] {
        let sourceIndexes = sources.map { source in
            Dictionary(source.schema.enumerated().map { ($1.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        }
        let runs = plan.runs, total = plan.rowCount
        return plan.schema.map { d in
            let columns = sources.indices.map { s in sourceIndexes[s][d.identifier].map { sources[s].columns[$0] } }
            func pending<T: ColumnElement>(_: T.Type) -> AnyColumn {
                let typed = columns.map { $0.flatMap(T.unwrap) }
                let stitch = stitchPlan.flatMap { ColumnStitch($0, sources: typed) }
                return AnyColumn(
                    Column<T>(pendingCount: total, stitch: stitch) {
                        gatherMerged(runs, total: total, threads: threads, { typed[$0] }) {
                            T.unwrap(gather(type: d.type, columns, runs: runs, total: total))!
                        }
                    })
            }
            switch d.type {
            case .int32: return pending(Int32.self)
            case .int64: return pending(Int64.self)
            case .float32: return pending(Float.self)
            case .float64: return pending(Double.self)
            }
        }
    }

    /// A merged column with its summaries: `gatherSummarized` where it applies, else `gather`
    /// (a column with nulls, another type or a widened one) shrunk and then summarized.
    private static func gatherMerged<T: ColumnElement>(
        _ runs: [UpsertPlan.Run], total: Int, threads: Int,
        _ source: (Int) -> Column<T>?, otherwise gathered: () -> Column<T>
    ) -> Column<T> {
        if let c = gatherSummarized(runs, total: total, threads: threads, source) { return c }
        var c = gathered()
        c.shrinkToFit()
        c.computeSummaries()
        return c
    }

    /// Rows of the summarized gather written (and summarized) at a time: 64 zone-map blocks, whose
    /// 256 kB of Float64 values stay in the core's L2 cache between the copy and the summaries.
    static let gatherPieceRows = 64 * zoneMapBlockRows

    /// One column along `runs` with its block summaries, as `gather` followed by `shrinkToFit` and
    /// `computeSummaries` make it, bit for bit, in one pass: chunks of eight pieces of
    /// `gatherPieceRows` rows on up to `threads` threads, each chunk's pages populated at once,
    /// each piece copied along its runs and summarized while it is in cache. A merged column is
    /// fresh memory, and clearing its pages is most of a merge's cost (MEASUREMENTS.md,
    /// *Versions*): two threads clear their own chunks' pages at once.
    ///
    /// Nil, for `gather` to do, when a run's source lacks the column, has nulls or holds another
    /// type, or the type has no fast summaries (Float64 and Int32 do: prices and dates).
    static func gatherSummarized<T: ColumnElement>(
        _ runs: [UpsertPlan.Run], total: Int, threads: Int,
        _ source: (Int) -> Column<T>?
    ) -> Column<T>? {
        guard BlockSummaries<T>.hasFastSummaries, total > 0 else { return nil }
        // The sources the runs read, by source number, kept alive for their pointers.
        var held = [Column<T>?](repeating: nil, count: (runs.map(\.source).max() ?? 0) + 1)
        for run in runs where held[run.source] == nil {
            guard let c = source(run.source), c.validity == nil, !c.isPending else { return nil }
            held[run.source] = c
        }
        let stride = MemoryLayout<T>.stride
        guard let storage = ColumnStorage(allocatingByteCount: ColumnStorage.paddedByteCount(total * stride)) else { return nil }
        // Safe: `held` keeps every source column (and so its storage) alive until we return, and
        // a column's base address never moves; the sources are only read.
        let bases = held.map { held in
            held.map { c in
                SharedPointer(base: UnsafeMutablePointer(mutating: c.withUnsafeBufferPointer { $0.baseAddress! }))
            }
        }
        let index = UpsertPlan.RunIndex(runs)
        precondition(index.rowCount == total, "runs of \(index.rowCount) rows, not \(total)")
        let blockRows = zoneMapBlockRows, blocks = BlockSummaries<T>.blockCount(forRows: total)
        var minimums = [T](repeating: .nullPlaceholder, count: blocks)
        var maximums = [T](repeating: .nullPlaceholder, count: blocks)
        var unknowns = [UInt32](repeating: 0, count: blocks)
        let out = SharedPointer(base: storage.base.assumingMemoryBound(to: T.self))
        // Each worker takes chunks of 8 pieces (2 MB of Float64, a huge page's worth), populates
        // their pages at once, then copies and summarizes them a piece at a time.
        let chunkRows = 8 * gatherPieceRows
        minimums.withUnsafeMutableBufferPointer { mins in
            maximums.withUnsafeMutableBufferPointer { maxs in
                unknowns.withUnsafeMutableBufferPointer { unknownCounts in
                    let mn = SharedPointer(base: mins.baseAddress!), mx = SharedPointer(base: maxs.baseAddress!)
                    let un = SharedPointer(base: unknownCounts.baseAddress!)
                    forEachChunk((total + chunkRows - 1) / chunkRows, threads: threads) { chunk, _ in
                        // Safe: each chunk (rows and blocks) is claimed by one worker; the runs
                        // cover 0..<total (checked above) and each lies within its source.
                        let chunkStart = chunk * chunkRows, chunkEnd = Swift.min(chunkStart + chunkRows, total)
                        storage.populateForWriting(bytes: chunkStart * stride ..< chunkEnd * stride)
                        for lo in Swift.stride(from: chunkStart, to: chunkEnd, by: gatherPieceRows) {
                            let hi = Swift.min(lo + gatherPieceRows, chunkEnd)
                            index.forEachPiece(lo ..< hi) { source, sourceRow, n, row in
                                (out.base + row).update(from: bases[source]!.base + sourceRow, count: n)
                            }
                            for b in lo / blockRows ..< (hi + blockRows - 1) / blockRows {
                                let first = b * blockRows, n = Swift.min(blockRows, total - first)
                                (mn.base[b], mx.base[b], un.base[b]) = BlockSummaries<T>.fastSummary(of: out.base + first, count: n)
                            }
                        }
                    }
                }
            }
        }
        let summaries = BlockSummaries(minimums: minimums, maximums: maximums, unknownCounts: unknowns)
        return Column(viewing: storage, count: total, validity: nil, summaries: summaries)
    }

    /// One column along `runs`: each run is one bulk copy from its source, or nulls where the
    /// source lacks the column.
    static func gather<T: ColumnElement>(
        _ runs: [UpsertPlan.Run], total: Int,
        _ source: (Int) -> Column<T>?
    ) -> Column<T> {
        var out = Column<T>()
        out.reserveCapacity(total)
        for run in runs {
            if let src = source(run.source) {
                out.append(contentsOf: src, rows: run.start ..< run.start + run.count)
            } else {
                out.appendNulls(run.count)
            }
        }
        return out
    }

    private static func gather(
        type: ElementType, _ sourceColumns: [AnyColumn?],
        runs: [UpsertPlan.Run], total: Int
    ) -> AnyColumn {
        func typed<T: ColumnElement>(_ c: AnyColumn?, as _: T.Type) -> Column<T>? {
            guard let c else { return nil }
            return T.unwrap(c) ?? T.unwrap(.float64(c.convertedToFloat64()))
        }
        func build<T: ColumnElement>(_: T.Type) -> AnyColumn {
            let typedSources = sourceColumns.map { typed($0, as: T.self) }
            return AnyColumn(gather(runs, total: total) { typedSources[$0] })
        }
        switch type {
        case .int32: return build(Int32.self)
        case .int64: return build(Int64.self)
        case .float32: return build(Float.self)
        case .float64: return build(Double.self)
        }
    }
}
