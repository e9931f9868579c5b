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
/// concatenation copies the rows again.
///
/// The reservation is address space (anonymous pages are zero-filled on first touch), so an
/// upper bound several times the real row count costs nothing resident.
package final class ColumnAssembler: @unchecked Sendable {
    // Safe to share: `place` calls write disjoint row ranges (the caller's offsets do not
    // overlap), null rows go through a mutex, and `finish` runs after every `place` returned.

    /// The value columns' names (every input must have these, in this order).
    package let valueNames: [String]
    /// The date column's name.
    package let dateColumnName: String
    /// Rows that fit.
    package let rowCapacity: Int
    /// Region 0 holds the dates, region c + 1 value column c.
    private let regions: [UnsafeMutableRawPointer]
    private let regionBytes: [Int]
    /// Output rows that are null, per value column (unordered).
    private let nullRows: Mutex<[[Int]]>
    private var finished = false

    /// Reserves columns for up to `rowCapacity` rows; nil when the address space is not there
    /// (the caller merges tables instead).
    package init?(valueNames: [String], dateColumnName: String, rowCapacity: Int) {
        self.valueNames = valueNames
        self.dateColumnName = dateColumnName
        self.rowCapacity = rowCapacity
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
        self.regions = regions
        self.regionBytes = sizes
        self.nullRows = Mutex([[Int]](repeating: [], count: valueNames.count))
    }

    deinit {
        if !finished { for (r, b) in zip(regions, regionBytes) { munmap(r, b) } }
    }

    /// Whether `rows` fits at `offset`: the same columns, and room left.
    package func accepts(_ rows: DecodedRows, at offset: Int) -> Bool {
        rows.valueNames == valueNames && rows.dateColumnName == dateColumnName && offset + rows.rowCount <= rowCapacity
    }

    /// Copies `rows` in table order into rows `offset ..< offset + rows.rowCount` of every column.
    /// - Precondition: `accepts(rows, at: offset)`, and no other call writes those rows.
    package func place(_ rows: DecodedRows, at offset: Int) {
        precondition(accepts(rows, at: offset), "rows do not fit the assembled columns")
        let buffers = rows.buffers
        let run = { (order: UnsafeBufferPointer<Int32>?) in
            buffers.copyDates(to: self.regions[0].assumingMemoryBound(to: Int32.self) + offset, order: order)
            for c in 0 ..< self.valueNames.count {
                let nulls = buffers.copyColumn(c, to: self.regions[c + 1].assumingMemoryBound(to: Double.self) + offset, order: order)
                if !nulls.isEmpty { self.nullRows.withLock { $0[c].append(contentsOf: nulls.map { $0 + offset }) } }
            }
        }
        if let order = rows.order { order.withUnsafeBufferPointer { run($0) } } else { run(nil) }
    }

    /// The dates written so far, row `row`.
    package func date(at row: Int) -> Int32 {
        precondition(row >= 0 && row < rowCapacity, "row out of range")
        return regions[0].assumingMemoryBound(to: Int32.self)[row]
    }

    /// The table of the first `rowCount` rows with `tickers` as its index (block summaries
    /// computed); the reservation past them is unmapped. Call once, after every `place`.
    /// - Throws: What `QuoteTable.init` finds wrong with the index.
    package func finish(rowCount: Int, tickers: [TickerEntry], metadata: [String: String] = [:]) throws(TableError) -> QuoteTable {
        precondition(!finished && rowCount <= rowCapacity, "finished twice, or too many rows")
        finished = true
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        var storages: [ColumnStorage] = []
        for (k, width) in ([4] + Array(repeating: 8, count: valueNames.count)).enumerated() {
            let kept = Swift.max(page, (rowCount * width + page - 1) / page * page)
            if kept < regionBytes[k] { munmap(regions[k] + kept, regionBytes[k] - kept) }
            // Exactly the padded length, as `shrinkToFit` wants it; `munmap` in its deinit
            // frees the whole last page.
            let used = Swift.max(ColumnStorage.alignment, ColumnStorage.paddedByteCount(rowCount * width))
            storages.append(ColumnStorage(adoptingMapping: regions[k], byteCount: used))
        }
        let nulls = nullRows.withLock { $0 }
        let dates = Column<Int32>(viewing: storages[0], count: rowCount, validity: nil, summaries: nil)
        var columns: [AnyColumn] = []
        for c in valueNames.indices {
            var validity: Bitmask?
            if !nulls[c].isEmpty {
                var bits = Bitmask(count: rowCount, allSet: true)
                bits.withUnsafeMutableWords { words in
                    for r in nulls[c] { words[r >> 6] &= ~(1 << UInt64(r & 63)) }
                }
                validity = bits
            }
            columns.append(.float64(Column<Double>(viewing: storages[c + 1], count: rowCount, validity: validity, summaries: nil)))
        }
        var table = try QuoteTable(schema: valueNames.map { ColumnDescriptor(name: $0, type: .float64) }, columns: columns,
                                   dates: dates, tickers: tickers, dateColumnName: dateColumnName, metadata: metadata,
                                   checkDates: false)
        table.computeSummaries()
        return table
    }
}
