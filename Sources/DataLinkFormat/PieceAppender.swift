import Colonnade

/// Takes the decoded pieces of one CSV, in file order, and builds the member's table from them
/// as they arrive: each piece's rows are appended to columns reserved once near their final size
/// (from the member's uncompressed size and the rows per byte seen so far), then the piece is
/// freed. So the copy into the final columns happens on the decoding threads, during the
/// pipeline, instead of in one merge after it.
///
/// That holds while the pieces concatenate: the same schema, Float64 values, and each ticker in
/// one run (a ticker may continue across a seam when its dates ascend). The first piece that
/// does not (a file not sorted by ticker) switches to keeping the rest whole; `finish` then
/// checks them for rows repeated across pieces and merges them as `QuoteTable.merging` does.
/// Without a size (standard input) the pieces are appended all the same, the columns growing
/// geometrically (`Column.append`); keeping them all for one merge at the end held every value
/// twice at its peak (the pieces and the merged columns, beside the input kept for an error).
final class PieceAppender {
    private let totalBytes: Int?
    private let threads: Int
    private var schema: [ColumnDescriptor] = []
    private var dateColumnName = ""
    private var metadata: [String: String] = [:]
    private var dates = Column<Int32>()
    private var columns: [Column<Double>] = []
    private var tickers: [TickerEntry] = []
    private var seen = Set<String>()
    private var rowCount = 0
    private var bytesSoFar = 0
    private var started = false
    /// Pieces kept whole once the pieces stop concatenating (or with no size).
    private var rest: [QuoteTable] = []
    private var appending = true

    /// - Parameters:
    ///   - totalBytes: the CSV's size, to reserve the columns; nil lets them grow as they fill.
    ///   - threads: for the final summaries and any merge.
    init(totalBytes: Int?, threads: Int) {
        self.totalBytes = totalBytes
        self.threads = threads
    }

    /// Adds the next piece, decoded from `bytes` bytes of the CSV; false when it must not be used
    /// (a ticker holding a `"`: a cut may have fallen inside a quoted field).
    func append(_ piece: QuoteTable, bytes: Int) -> Bool {
        if piece.tickers.contains(where: { $0.symbol.utf8.contains(UInt8(ascii: "\"")) }) { return false }
        bytesSoFar += bytes
        guard piece.rowCount > 0 || !piece.tickers.isEmpty else { return true }
        if appending && !appendInPlace(piece) { appending = false }
        if !appending { rest.append(piece) }
        return true
    }

    /// The member's table, or nil when two pieces hold the same ticker and date (the caller then
    /// decodes the whole file for the exact error) or there were no rows.
    func finish() -> QuoteTable? {
        var parts: [QuoteTable] = []
        if started {
            parts.append(builtTable())
        }
        parts.append(contentsOf: rest)
        rest = []
        guard parts.contains(where: { $0.rowCount > 0 }) else { return nil }
        if parts.count > 1 && ArchiveImporter.hasDuplicatesAcrossChunks(parts) { return nil }
        return QuoteTable.merging(&parts, threads: threads)
    }

    /// Appends `piece` to the columns; false (nothing changed) when it does not concatenate.
    private func appendInPlace(_ piece: QuoteTable) -> Bool {
        var pieceColumns: [Column<Double>] = []
        for column in piece.columns {
            guard case .float64(let c) = column else { return false }
            pieceColumns.append(c)
        }
        if started {
            guard piece.schema == schema, piece.dateColumnName == dateColumnName else { return false }
        }
        // The ticker index: a continuation across the seam, then tickers never seen.
        var continues = false
        for (j, t) in piece.tickers.enumerated() {
            if j == 0, let last = tickers.last, last.symbol == t.symbol, last.rowCount > 0, t.rowCount > 0,
               dates[rowCount - 1] < piece.dates[t.firstRow] {
                continues = true
                continue
            }
            if seen.contains(t.symbol) { return false }
        }
        if !started {
            started = true
            schema = piece.schema
            dateColumnName = piece.dateColumnName
            columns = Array(repeating: Column<Double>(), count: schema.count)
        }
        reserve(for: piece.rowCount)
        for (j, t) in piece.tickers.enumerated() {
            if j == 0 && continues {
                let last = tickers[tickers.count - 1]
                var metadata = last.metadata
                metadata.merge(t.metadata) { _, new in new }
                tickers[tickers.count - 1] = TickerEntry(symbol: last.symbol, metadata: metadata, firstRow: last.firstRow,
                                                         rowCount: last.rowCount + t.rowCount)
            } else {
                seen.insert(t.symbol)
                tickers.append(TickerEntry(symbol: t.symbol, metadata: t.metadata, firstRow: t.firstRow + rowCount, rowCount: t.rowCount))
            }
        }
        dates.append(contentsOf: piece.dates, rows: 0 ..< piece.rowCount)
        for c in columns.indices { columns[c].append(contentsOf: pieceColumns[c], rows: 0 ..< piece.rowCount) }
        rowCount += piece.rowCount
        metadata.merge(piece.metadata) { old, _ in old }
        return true
    }

    /// Reserves the columns for the rows the whole CSV will hold, judged from the rows per byte so
    /// far (plus 2%), when `more` rows would not fit. A second estimate (the lines got shorter)
    /// adds a quarter more, so the columns are copied a few times at most.
    private func reserve(for more: Int) {
        let needed = rowCount + more
        guard needed > dates.capacity, let totalBytes else { return }
        let perByte = Double(needed) / Double(Swift.max(bytesSoFar, 1))
        var estimate = Int(Double(totalBytes) * perByte * 1.02) + 1024
        if rowCount > 0 { estimate += estimate / 4 }
        let capacity = Swift.max(needed, estimate)
        dates.reserveCapacity(capacity)
        for c in columns.indices { columns[c].reserveCapacity(capacity) }
    }

    /// The appended rows as a table, with block summaries computed one column per thread.
    ///
    /// The columns were reserved past their final length; rather than copy them to their exact
    /// size (here, or in a later `shrinkToFit`), each becomes a view of exactly its rows in the
    /// reserved storage, which it keeps alive. The reserve's tail is mapped pages never touched,
    /// so it costs address space, not memory; a view is copied on its first write, as views are.
    private func builtTable() -> QuoteTable {
        let all = columns.map { Self.exact($0, rowCount) }
        columns = []
        let dateColumn = Self.exact(dates, rowCount)
        dates = Column()
        // Through AnyColumn: its summaries are specialized in the engine (a generic Column's,
        // called from here, would not be).
        var any = [AnyColumn.int32(dateColumn)] + all.map { AnyColumn.float64($0) }
        any.withUnsafeMutableBufferPointer { buffer in
            let out = SharedPointer(base: buffer.baseAddress!)
            forEachChunk(buffer.count, threads: threads) { c, _ in
                // Safe: each index is claimed by one worker, which touches only its own column.
                out.base[c].computeSummaries()
            }
        }
        guard case .int32(let summarizedDates) = any.removeFirst() else { preconditionFailure("the dates are Int32") }
        do {
            return try QuoteTable(schema: schema, columns: any, dates: summarizedDates, tickers: tickers,
                                  dateColumnName: dateColumnName, metadata: metadata, checkDates: false)
        } catch {
            preconditionFailure("appended an inconsistent table: \(error)")
        }
    }

    /// `column` as a view of its first `count` rows, sharing (and keeping alive) its storage.
    private static func exact<T: ColumnElement>(_ column: Column<T>, _ count: Int) -> Column<T> {
        let storage = column.valueStorage
        let bytes = ColumnStorage.paddedByteCount(count * MemoryLayout<T>.stride)
        guard count > 0, count == column.count, bytes < storage.byteCapacity,
              let base = column.withUnsafeBufferPointer({ UnsafeRawPointer($0.baseAddress) }) else { return column }
        // Safe: the view keeps `storage` alive, so `base` stays valid as long as the view.
        let view = ColumnStorage(borrowing: base, byteCount: bytes, owner: storage)
        return Column(viewing: view, count: count, validity: column.validity, summaries: nil)
    }
}
