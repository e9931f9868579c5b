#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// The final columns of a fresh import, reserved once at an upper bound of the row count and
/// filled in place: each decoded input's rows are copied straight from the decoder's buffers
/// into their slice (`place`, on any thread, at offsets the caller hands out in input order),
/// then the unused tail goes back to the system (`finish`). No per-input table is built and no
/// concatenation copies the rows again. The pieces of one input whose total is not known in
/// advance (a CSV inflated from a zip, or read from a pipe) are appended instead, the columns
/// growing as they fill (ColumnAssembler+Streaming.swift).
///
/// The reservation is address space (anonymous pages are zero-filled on first touch), so an
/// upper bound several times the real row count costs nothing resident.
///
/// Or the columns are a `SnapshotDraft`'s payloads (`init(valueNames:dateColumnName:draft:)`,
/// exactly the counted rows): `place` then writes each column's rows through a scratch buffer
/// into the snapshot file, and the table `finish` gives views them in the file's pages.
package final class ColumnAssembler: @unchecked Sendable {
    // Safe to share: `place` calls write disjoint row ranges (the caller's offsets do not
    // overlap), null rows go through a mutex, and `finish` runs after every `place` returned;
    // `append` calls (which may move the columns) come one at a time, never beside `place`.

    /// The value columns' names (every input must have these, in this order).
    package let valueNames: [String]
    /// The date column's name.
    package let dateColumnName: String
    /// Rows that fit (appending grows it: ColumnAssembler+Streaming.swift).
    package internal(set) var rowCapacity: Int
    /// Region 0 holds the dates, region c + 1 value column c.
    var regions: [UnsafeMutableRawPointer]
    var regionBytes: [Int]
    /// Output rows that are null, per value column (unordered).
    let nullRows: Mutex<[[Int]]>
    /// Block summaries computed while placing (`BlockSummaries.blockRows` rows per block): for
    /// every block that lies wholly inside one input's rows, per column (0 the dates), while those
    /// rows are still in cache. Blocks across inputs, and columns where the input had nulls, are
    /// left to `finish`. `summarized[c][b]` is 1 once block b of column c is filled in.
    var dateSummaries: (minimums: UnsafeMutablePointer<Int32>, maximums: UnsafeMutablePointer<Int32>)
    var valueSummaries:
        [(
            minimums: UnsafeMutablePointer<Double>, maximums: UnsafeMutablePointer<Double>,
            unknown: UnsafeMutablePointer<UInt32>
        )]
    var summarized: [UnsafeMutablePointer<UInt8>]
    var blockCapacity: Int
    var finished = false
    /// What appending pieces one after another keeps (ColumnAssembler+Streaming.swift).
    var stream = StreamState()
    /// The owner of the regions when they are a `SnapshotDraft`'s payloads (nil: anonymous
    /// mappings of our own).
    private let regionOwner: AnyObject?
    /// The draft whose payloads the rows are written into (`place` then writes through the file;
    /// the regions are its read-only mapping). Never set for an assembler that appends.
    private let draft: SnapshotDraft?

    /// Reserves columns for up to `rowCapacity` rows; nil when the address space is not there
    /// (the caller merges tables instead).
    package convenience init?(valueNames: [String], dateColumnName: String, rowCapacity: Int) {
        var regions: [UnsafeMutableRawPointer] = []
        var sizes: [Int] = []
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        for width in [4] + Array(repeating: 8, count: valueNames.count) {
            let bytes = Swift.max(page, (rowCapacity * width + page - 1) / page * page)
            let pointer = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
            guard let pointer, pointer != MAP_FAILED else {
                for (r, b) in zip(regions, sizes) { munmap(r, b) }
                return nil
            }
            #if os(Linux)
            _ = madvise(pointer, bytes, 14 /* MADV_HUGEPAGE */)
            #endif
            regions.append(pointer)
            sizes.append(bytes)
        }
        self.init(
            valueNames: valueNames, dateColumnName: dateColumnName, rowCapacity: rowCapacity,
            regions: regions, regionBytes: sizes, owner: nil, draft: nil)
    }

    /// Columns for exactly `draft.rowCount` rows written straight into `draft`'s payloads, so
    /// that `finish` gives a table whose columns already lie in the snapshot file
    /// (`SnapshotDraft.commit`). The draft must be laid out for `valueNames.count` Float64
    /// columns.
    package convenience init(valueNames: [String], dateColumnName: String, draft: SnapshotDraft) {
        precondition(draft.payloadOffsets.count == valueNames.count + 1, "the draft is laid out for other columns")
        let k = draft.payloadOffsets.indices
        // Safe: with a draft, `place` never writes through the regions, only reads them back.
        self.init(
            valueNames: valueNames, dateColumnName: dateColumnName, rowCapacity: draft.rowCount,
            regions: k.map { UnsafeMutableRawPointer(mutating: draft.payload($0)) },
            regionBytes: k.map { draft.payloadCapacity($0) }, owner: draft.owner, draft: draft)
    }

    private init(
        valueNames: [String], dateColumnName: String, rowCapacity: Int,
        regions: [UnsafeMutableRawPointer], regionBytes: [Int], owner: AnyObject?, draft: SnapshotDraft?
    ) {
        self.draft = draft
        self.valueNames = valueNames
        self.dateColumnName = dateColumnName
        self.rowCapacity = rowCapacity
        self.regions = regions
        self.regionBytes = regionBytes
        self.regionOwner = owner
        self.nullRows = Mutex([[Int]](repeating: [], count: valueNames.count))
        let blocks = rowCapacity / BlockSummaries<Double>.blockRows + 1
        blockCapacity = blocks
        dateSummaries = (.allocate(capacity: blocks), .allocate(capacity: blocks))
        valueSummaries = valueNames.map { _ in (.allocate(capacity: blocks), .allocate(capacity: blocks), .allocate(capacity: blocks)) }
        summarized = (0 ... valueNames.count).map { _ in
            let flags = UnsafeMutablePointer<UInt8>.allocate(capacity: blocks)
            flags.initialize(repeating: 0, count: blocks)
            return flags
        }
    }

    deinit {
        if !finished && regionOwner == nil { for (r, b) in zip(regions, regionBytes) { munmap(r, b) } }
        dateSummaries.minimums.deallocate()
        dateSummaries.maximums.deallocate()
        for s in valueSummaries {
            s.minimums.deallocate()
            s.maximums.deallocate()
            s.unknown.deallocate()
        }
        for flags in summarized { flags.deallocate() }
    }

    /// Whether `rows` fits at `offset`: the same columns, and room left.
    package func accepts(_ rows: DecodedRows, at offset: Int) -> Bool {
        rows.valueNames == valueNames && rows.dateColumnName == dateColumnName && offset + rows.rowCount <= rowCapacity
    }

    /// Copies `rows` in table order into rows `offset ..< offset + rows.rowCount` of every column.
    /// - Precondition: `accepts(rows, at: offset)`, and no other call writes those rows.
    package func place(_ rows: DecodedRows, at offset: Int) {
        precondition(accepts(rows, at: offset), "rows do not fit the assembled columns")
        let blockRows = BlockSummaries<Double>.blockRows
        // The blocks wholly inside these rows (none may be, for short inputs).
        let firstBlock = (offset + blockRows - 1) / blockRows, endBlock = (offset + rows.rowCount) / blockRows
        if let draft {
            placeWriting(rows, into: draft, at: offset)
            return
        }
        let dates = regions[0].assumingMemoryBound(to: Int32.self)
        rows.copyDates(to: dates + offset)
        for b in firstBlock ..< Swift.max(firstBlock, endBlock) {
            // Safe: b < endBlock <= rowCapacity / blockRows < blockCapacity; no other input holds block b.
            (dateSummaries.minimums[b], dateSummaries.maximums[b]) =
                BlockSummaries<Int32>.summary(of: dates + b * blockRows, count: blockRows)
            summarized[0][b] = 1
        }
        for c in 0 ..< valueNames.count {
            let values = regions[c + 1].assumingMemoryBound(to: Double.self)
            let nulls = rows.copyColumn(c, to: values + offset)
            if !nulls.isEmpty {
                nullRows.withLock { $0[c].append(contentsOf: nulls.map { $0 + offset }) }
                continue  // finish summarizes this column with its validity
            }
            let s = valueSummaries[c]
            for b in firstBlock ..< Swift.max(firstBlock, endBlock) {
                // Safe: as for the dates.
                (s.minimums[b], s.maximums[b], s.unknown[b]) = BlockSummaries<Double>.summary(of: values + b * blockRows, count: blockRows)
                summarized[c + 1][b] = 1
            }
        }
    }

    /// `place` into a draft: each column's rows are copied, sorted, into a scratch buffer that
    /// stays in cache, summarized there (the blocks wholly inside these rows), and written into
    /// the file with one `pwrite` (whole pages need no zeroing in the page cache). Rows already
    /// in order (one ticker's rows by date, as a sorted CSV's pieces are) are summarized and
    /// written from the decoder's buffers, without the copy: a one-thread import of the medium
    /// CSV spent 4 % of its time in that copy.
    private func placeWriting(_ rows: DecodedRows, into draft: SnapshotDraft, at offset: Int) {
        let buffers = rows.buffers, n = rows.rowCount
        let blockRows = BlockSummaries<Double>.blockRows
        let firstBlock = (offset + blockRows - 1) / blockRows, endBlock = Swift.max(firstBlock, (offset + n) / blockRows)
        // Scratch only for rows that must be sorted.
        let scratch = rows.order == nil ? nil : UnsafeMutableRawPointer.allocate(byteCount: Swift.max(1, n) * 8, alignment: 8)
        defer { scratch?.deallocate() }
        let dates: UnsafePointer<Int32>
        if let scratch {
            let sorted = scratch.bindMemory(to: Int32.self, capacity: Swift.max(1, n))
            rows.copyDates(to: sorted)
            dates = UnsafePointer(sorted)
        } else {
            dates = buffers.datesInInputOrder
        }
        for b in firstBlock ..< endBlock {
            // Safe: as in `place`; block b's rows are rows b * blockRows - offset ..< + blockRows of these.
            (dateSummaries.minimums[b], dateSummaries.maximums[b]) =
                BlockSummaries<Int32>.summary(of: dates + (b * blockRows - offset), count: blockRows)
            summarized[0][b] = 1
        }
        draft.write(dates, count: n * 4, intoPayload: 0, at: offset * 4)
        for c in 0 ..< valueNames.count {
            let values: UnsafePointer<Double>
            let nulls: [Int]
            if let scratch {
                let sorted = scratch.bindMemory(to: Double.self, capacity: Swift.max(1, n))
                nulls = rows.copyColumn(c, to: sorted)
                values = UnsafePointer(sorted)
            } else {
                values = buffers.valuesInInputOrder(c)
                nulls = buffers.nullRows(c, order: nil)
            }
            draft.write(values, count: n * 8, intoPayload: c + 1, at: offset * 8)
            if !nulls.isEmpty {
                nullRows.withLock { $0[c].append(contentsOf: nulls.map { $0 + offset }) }
                continue  // finish summarizes this column with its validity
            }
            let s = valueSummaries[c]
            for b in firstBlock ..< endBlock {
                // Safe: as for the dates.
                (s.minimums[b], s.maximums[b], s.unknown[b]) =
                    BlockSummaries<Double>.summary(of: values + (b * blockRows - offset), count: blockRows)
                summarized[c + 1][b] = 1
            }
        }
    }

    /// The summaries of the first `rowCount` dates: those filled in while placing, the rest now.
    private func finishedDateSummaries(rowCount: Int) -> BlockSummaries<Int32> {
        let blockRows = BlockSummaries<Int32>.blockRows
        let blocks = BlockSummaries<Int32>.blockCount(forRows: rowCount)
        let dates = regions[0].assumingMemoryBound(to: Int32.self)
        var mins = [Int32](repeating: 0, count: blocks), maxs = [Int32](repeating: 0, count: blocks)
        for b in 0 ..< blocks {
            // Safe: b < blocks <= blockCapacity, and the block's rows are below rowCount.
            if summarized[0][b] != 0 {
                mins[b] = dateSummaries.minimums[b]
                maxs[b] = dateSummaries.maximums[b]
            } else {
                (mins[b], maxs[b]) = BlockSummaries<Int32>.summary(
                    of: dates + b * blockRows,
                    count: Swift.min(blockRows, rowCount - b * blockRows))
            }
        }
        return BlockSummaries(minimums: mins, maximums: maxs, unknownCounts: [UInt32](repeating: 0, count: blocks))
    }

    /// The summaries of value column `c` (which has no nulls) over the first `rowCount` rows.
    private func finishedValueSummaries(_ c: Int, rowCount: Int) -> BlockSummaries<Double> {
        let blockRows = BlockSummaries<Double>.blockRows
        let blocks = BlockSummaries<Double>.blockCount(forRows: rowCount)
        let values = regions[c + 1].assumingMemoryBound(to: Double.self)
        let s = valueSummaries[c]
        var mins = [Double](repeating: 0, count: blocks), maxs = [Double](repeating: 0, count: blocks)
        var unknown = [UInt32](repeating: 0, count: blocks)
        for b in 0 ..< blocks {
            // Safe: as for the dates.
            if summarized[c + 1][b] != 0 {
                mins[b] = s.minimums[b]
                maxs[b] = s.maximums[b]
                unknown[b] = s.unknown[b]
            } else {
                (mins[b], maxs[b], unknown[b]) = BlockSummaries<Double>.summary(
                    of: values + b * blockRows,
                    count: Swift.min(blockRows, rowCount - b * blockRows))
            }
        }
        return BlockSummaries(minimums: mins, maximums: maxs, unknownCounts: unknown)
    }

    /// The dates written so far, row `row`.
    package func date(at row: Int) -> Int32 {
        precondition(row >= 0 && row < rowCapacity, "row out of range")
        return regions[0].assumingMemoryBound(to: Int32.self)[row]
    }

    /// The table of the first `rowCount` rows with `tickers` as its index (block summaries
    /// complete: those `place` computed, the rest now); the reservation past them is unmapped.
    /// Call once, after every `place`.
    /// - Throws: What `QuoteTable.init` finds wrong with the index.
    package func finish(rowCount: Int, tickers: [TickerEntry], metadata: [String: String] = [:]) throws(TableError) -> QuoteTable {
        precondition(!finished && rowCount <= rowCapacity, "finished twice, or too many rows")
        finished = true
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var storages: [ColumnStorage] = []
        for (k, width) in ([4] + Array(repeating: 8, count: valueNames.count)).enumerated() {
            // Exactly the padded length, as `shrinkToFit` wants it; `munmap` in its deinit
            // frees the whole last page.
            let used = Swift.max(ColumnStorage.alignment, ColumnStorage.paddedByteCount(rowCount * width))
            if let regionOwner {
                // A draft's payloads: views (a payload of no rows still gets its 64 bytes, within the mapping).
                storages.append(ColumnStorage(borrowing: regions[k], byteCount: used, owner: regionOwner))
                continue
            }
            let kept = Swift.max(page, (rowCount * width + page - 1) / page * page)
            if kept < regionBytes[k] { munmap(regions[k] + kept, regionBytes[k] - kept) }
            storages.append(ColumnStorage(adoptingMapping: regions[k], byteCount: used))
        }
        let nulls = nullRows.withLock { $0 }
        let dates = Column<Int32>(
            viewing: storages[0], count: rowCount, validity: nil,
            summaries: finishedDateSummaries(rowCount: rowCount))
        var columns: [AnyColumn] = []
        for c in valueNames.indices {
            if nulls[c].isEmpty {
                columns.append(
                    .float64(
                        Column<Double>(
                            viewing: storages[c + 1], count: rowCount, validity: nil,
                            summaries: finishedValueSummaries(c, rowCount: rowCount))))
                continue
            }
            var bits = Bitmask(count: rowCount, allSet: true)
            bits.withUnsafeMutableWords { words in
                for r in nulls[c] { words[r >> 6] &= ~(1 << UInt64(r & 63)) }
            }
            var column = Column<Double>(viewing: storages[c + 1], count: rowCount, validity: bits, summaries: nil)
            column.computeSummaries()
            columns.append(.float64(column))
        }
        return try QuoteTable(
            schema: valueNames.map { ColumnDescriptor(name: $0, type: .float64) }, columns: columns,
            dates: dates, tickers: tickers, dateColumnName: dateColumnName, metadata: metadata,
            checkDates: false)
    }
}
