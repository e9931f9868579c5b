#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Appending decoded pieces of one input, in input order, when their total row count is not
/// known in advance (a CSV inflated from a zip member, or read from a pipe): each piece's rows are
/// copied from the decoder's buffers to the end of the columns, which grow geometrically, and the
/// block summaries of every block the piece completes are computed while its rows are in cache.
/// `finishAppending` hands the columns over as a table, as `finish` does for placed inputs.
///
/// Appending requires the pieces to concatenate: the same columns, and each ticker in one run (a
/// ticker may continue from the end of one piece into the start of the next when its dates
/// ascend across the seam). `append` returns false, and changes nothing, for a piece that does
/// not (or when the columns cannot grow); the caller then keeps it and merges it after.
///
/// Appends are serial (one at a time, in order); `place` must not be used on the same assembler.
extension ColumnAssembler {
    /// What appending keeps between pieces.
    struct StreamState {
        /// Rows appended.
        var rowCount = 0
        /// The ticker index of the rows appended.
        var tickers: [TickerEntry] = []
        /// Every symbol in `tickers`.
        var seen = Set<String>()
        /// Input bytes the pieces appended (or offered) came from.
        var bytes = 0
        /// The input's size when known, to size the columns from the rows per byte seen.
        var totalBytes: Int?
        /// Blocks below this one are summarized.
        var summarizedBlocks = 0
    }

    /// Rows a streaming assembler of unknown input size reserves first.
    package static let defaultStreamingRows = 1 << 22

    /// An assembler to append pieces to.
    ///
    /// - Parameters:
    ///   - totalBytes: the input's size when known: the columns are then reserved for the rows it
    ///     will hold, judged from the rows per byte seen (plus 2 %); nil starts from
    ///     `initialRowCapacity` rows and doubles.
    ///   - initialRowCapacity: rows reserved before the first piece (address space only; tests
    ///     make it small so the columns grow).
    /// - Returns: nil when the address space is not there.
    package convenience init?(
        streamingValueNames valueNames: [String], dateColumnName: String, totalBytes: Int?,
        initialRowCapacity: Int? = nil
    ) {
        let rows = initialRowCapacity ?? (totalBytes == nil ? Self.defaultStreamingRows : 0)
        self.init(valueNames: valueNames, dateColumnName: dateColumnName, rowCapacity: Swift.max(1, rows))
        stream.totalBytes = totalBytes
    }

    /// Rows appended so far.
    package var appendedRowCount: Int { stream.rowCount }

    /// Appends `rows`, decoded from `bytes` bytes of the input, after the rows appended so far.
    /// - Returns: false, with nothing appended, when the rows do not continue those appended (other
    ///   columns; a ticker appended before that does not continue the last one with later dates)
    ///   or the columns could not grow. Their bytes still count towards the rows-per-byte estimate.
    package func append(_ rows: DecodedRows, bytes: Int) -> Bool {
        precondition(!finished, "appending after finish")
        stream.bytes += bytes
        guard rows.valueNames == valueNames, rows.dateColumnName == dateColumnName else { return false }
        let n = rows.rowCount
        let start = stream.rowCount
        // The ticker index: a continuation across the seam, then tickers never seen.
        var continues = false
        for (j, t) in rows.tickers.enumerated() {
            if j == 0, let last = stream.tickers.last, last.symbol == t.symbol, last.rowCount > 0, t.rowCount > 0,
                date(at: start - 1) < Self.firstDate(of: t, in: rows)
            {
                continues = true
                continue
            }
            if stream.seen.contains(t.symbol) { return false }
        }
        if start + n > rowCapacity && !grow(toHold: start + n) { return false }
        for (j, t) in rows.tickers.enumerated() {
            if j == 0 && continues {
                let k = stream.tickers.count - 1, last = stream.tickers[k]
                var metadata = last.metadata
                metadata.merge(t.metadata) { _, new in new }
                stream.tickers[k] = TickerEntry(
                    symbol: last.symbol, metadata: metadata, firstRow: last.firstRow,
                    rowCount: last.rowCount + t.rowCount)
            } else {
                stream.seen.insert(t.symbol)
                stream.tickers.append(
                    TickerEntry(
                        symbol: t.symbol, metadata: t.metadata, firstRow: t.firstRow + start,
                        rowCount: t.rowCount))
            }
        }
        copy(rows, at: start)
        stream.rowCount = start + n
        summarizeCompletedBlocks()
        return true
    }

    /// The table of every row appended, block summaries complete; the reservation past the rows
    /// is unmapped. Call once, after the last `append`.
    package func finishAppending() -> QuoteTable {
        do {
            return try finish(rowCount: stream.rowCount, tickers: stream.tickers)
        } catch {
            preconditionFailure("appended an inconsistent table: \(error)")
        }
    }

    /// The date of ticker entry `t`'s first row in table order.
    private static func firstDate(of t: TickerEntry, in rows: DecodedRows) -> Int32 {
        let row = rows.order.map { Int($0[t.firstRow]) } ?? t.firstRow
        return rows.buffers.dates[row]
    }

    /// Copies `rows` in table order to rows `offset ..< offset + rows.rowCount` (which fit).
    private func copy(_ rows: DecodedRows, at offset: Int) {
        rows.copyDates(to: regions[0].assumingMemoryBound(to: Int32.self) + offset)
        for c in 0 ..< valueNames.count {
            let nulls = rows.copyColumn(c, to: regions[c + 1].assumingMemoryBound(to: Double.self) + offset)
            if !nulls.isEmpty { nullRows.withLock { $0[c].append(contentsOf: nulls.map { $0 + offset }) } }
        }
    }

    /// Summarizes the blocks the rows appended so far complete (a block across two pieces too:
    /// its rows are all known once the later piece is in). The columns holding a null are left to
    /// `finish`, which summarizes them with their validity.
    private func summarizeCompletedBlocks() {
        let blockRows = BlockSummaries<Double>.blockRows
        let end = stream.rowCount / blockRows
        guard end > stream.summarizedBlocks else { return }
        let hasNulls = nullRows.withLock { $0.map { !$0.isEmpty } }
        let dates = regions[0].assumingMemoryBound(to: Int32.self)
        for b in stream.summarizedBlocks ..< end {
            // Safe: b < end <= rowCapacity / blockRows < blockCapacity, and the block's rows are written.
            (dateSummaries.minimums[b], dateSummaries.maximums[b]) = BlockSummaries<Int32>.summary(
                of: dates + b * blockRows, count: blockRows)
            summarized[0][b] = 1
        }
        for c in 0 ..< valueNames.count where !hasNulls[c] {
            let values = regions[c + 1].assumingMemoryBound(to: Double.self)
            let s = valueSummaries[c]
            for b in stream.summarizedBlocks ..< end {
                // Safe: as for the dates.
                (s.minimums[b], s.maximums[b], s.unknown[b]) = BlockSummaries<Double>.summary(of: values + b * blockRows, count: blockRows)
                summarized[c + 1][b] = 1
            }
        }
        stream.summarizedBlocks = end
    }

    /// Grows every column (and the summary slots) to hold at least `needed` rows: at least twice
    /// the capacity, or the rows the whole input will hold when its size is known. On Linux each
    /// column's reservation is enlarged by `mremap`, which moves page table entries, not bytes;
    /// elsewhere, or when that fails, each column moves to a fresh reservation with its rows
    /// copied over, one column at a time (so the peak is the columns plus one); false, with
    /// nothing lost, when a reservation fails.
    private func grow(toHold needed: Int) -> Bool {
        var capacity = Swift.max(needed, rowCapacity * 2)
        if let total = stream.totalBytes {
            let perByte = Double(needed) / Double(Swift.max(stream.bytes, 1))
            var estimate = Int(Double(total) * perByte * 1.02) + 1024
            if stream.rowCount > 0 { estimate += estimate / 4 }
            capacity = Swift.max(needed, estimate)
        }
        let page = Int(sysconf(Int32(_SC_PAGESIZE)))
        for (k, width) in ([4] + Array(repeating: 8, count: valueNames.count)).enumerated() {
            let bytes = (capacity * width + page - 1) / page * page
            #if os(Linux)
            if let moved = linuxMremap(regions[k], regionBytes[k], bytes, 1 /* MREMAP_MAYMOVE */), moved != MAP_FAILED {
                regions[k] = moved
                regionBytes[k] = bytes
                continue
            }
            #endif
            let pointer = mmap(nil, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0)
            guard let pointer, pointer != MAP_FAILED else { return false }  // the columns grown so far keep their rows
            #if os(Linux)
            _ = madvise(pointer, bytes, 14 /* MADV_HUGEPAGE */)
            #endif
            pointer.copyMemory(from: regions[k], byteCount: stream.rowCount * width)
            munmap(regions[k], regionBytes[k])
            regions[k] = pointer
            regionBytes[k] = bytes
        }
        let blocks = capacity / BlockSummaries<Double>.blockRows + 1
        func moved<T>(_ old: UnsafeMutablePointer<T>, zeroed: T? = nil) -> UnsafeMutablePointer<T> {
            let new = UnsafeMutablePointer<T>.allocate(capacity: blocks)
            new.moveInitialize(from: old, count: blockCapacity)
            if let zeroed { (new + blockCapacity).initialize(repeating: zeroed, count: blocks - blockCapacity) }
            old.deallocate()
            return new
        }
        dateSummaries = (moved(dateSummaries.minimums), moved(dateSummaries.maximums))
        valueSummaries = valueSummaries.map { (minimums: moved($0.minimums), maximums: moved($0.maximums), unknown: moved($0.unknown)) }
        summarized = summarized.map { moved($0, zeroed: 0) }
        blockCapacity = blocks
        rowCapacity = capacity
        return true
    }
}

#if os(Linux)
/// glibc's `mremap(2)` wrapper, which the Glibc module does not import (it is declared only under
/// `_GNU_SOURCE`).
@_silgen_name("mremap")
private func linuxMremap(_ old: UnsafeMutableRawPointer, _ oldSize: Int, _ newSize: Int, _ flags: Int32) -> UnsafeMutableRawPointer?
#endif
