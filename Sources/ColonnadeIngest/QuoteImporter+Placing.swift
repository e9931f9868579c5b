#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade
import DataLinkFormat
import Synchronization

/// A fresh import written straight into the final columns: many plain files, or the pieces of
/// one large datatable CSV.
///
/// Each input is decoded into the decoder's row buffers on some thread; the inputs' row counts
/// are then chained in input order (input i learns its first row once input i − 1 is decoded,
/// which with inputs claimed in order is at most one decode away), and its rows are copied,
/// sorted, straight into their slice of columns reserved once at an upper bound of the rows
/// (`ColumnAssembler`). No per-input table is built and nothing is concatenated afterwards: each
/// value is written once by the decoder and once into its final column, then saved from there.
extension QuoteImporter {
    /// The fewest bytes a row of `valueCount` values takes in any text response (a 10-byte date,
    /// a separator and one digit per value, a line end): how many rows the input can hold at most.
    static func minimumRowBytes(valueCount: Int) -> Int { 11 + 2 * valueCount }

    /// `paths` decoded and placed into final columns in file order, or nil when they do not fit
    /// one concatenation (different columns or date names, a ticker in two files other than
    /// continuing with later dates): the caller merges decoded tables then, which gives the same
    /// table. Throws the first failing file's error (in `paths` order), as the merging path does.
    static func importPlacing(
        _ paths: [String], ticker: String?, threads: Int,
        progress: ImportProgress?
    ) throws(ResponseError) -> QuoteTable? {
        guard !paths.isEmpty else { return nil }
        var totalBytes = 0
        for path in paths {
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            totalBytes += Int(info.st_size)
        }
        let counted = ImportProgress()
        let outcome = placeInOrder(
            paths.count, threads: threads, inputBytes: totalBytes,
            decode: fileRows(paths, ticker: ticker, progress: progress, counted: counted))
        switch outcome {
        case .placed(let table): return table
        case .failed(let error): throw error
        case .abandoned:
            // The merging path counts every file again.
            progress?.takeBack(counted)
            return nil
        }
    }

    /// Decodes file `i` of `paths` into row buffers, counting it in `progress` and in `counted`
    /// (what to take back if the caller gives up).
    static func fileRows(
        _ paths: [String], ticker: String?, progress: ImportProgress?,
        counted: ImportProgress
    ) -> (Int) throws(ResponseError) -> DecodedRows {
        { i throws(ResponseError) in
            let name = fileName(of: paths[i])
            return try withContents(ofFile: paths[i]) { bytes throws(ResponseError) in
                let rows = try QuoteDecoder.decodeRows(
                    bytes, ticker: ticker, fallbackTicker: tickerSymbol(fromFileName: name), source: name)
                progress?.add(files: 1, rows: rows.rowCount, bytes: bytes.count)
                counted.add(files: 1, rows: rows.rowCount, bytes: bytes.count)
                return rows
            }
        }
    }

    /// A datatable CSV's data lines from `start`, cut at line ends (`cuts`), decoded on up to
    /// `threads` threads and placed into final columns; nil when any piece fails, a ticker holds a
    /// `"` (a cut may have landed inside a quoted field) or the pieces do not concatenate (a ticker
    /// in two pieces other than continuing with later dates): the caller then merges decoded
    /// pieces, or decodes the file whole for its exact error.
    static func placedPieces(
        _ input: ByteInput, layout: CSVScanner.Layout, cuts: [Int], threads: Int,
        progress: ImportProgress?
    ) -> QuoteTable? {
        let outcome = placeInOrder(cuts.count, threads: threads, inputBytes: input.count - (cuts.first ?? 0)) { k throws(ResponseError) in
            let from = cuts[k], to = k + 1 < cuts.count ? cuts[k + 1] : input.count
            var scanner = CSVScanner(input: ByteInput(base: input.base + from, count: to - from, source: input.source), position: 0)
            let rows = try scanner.decodeDatatableRowsInPlace(layout)
            if rows.tickers.contains(where: { $0.symbol.utf8.contains(UInt8(ascii: "\"")) }) {
                throw .notADataLinkResponse(source: input.source, detail: "a quote in a ticker")  // never shown: the caller decodes whole
            }
            progress?.add(rows: rows.rowCount, bytes: to - from)
            return rows
        }
        if case .placed(let table) = outcome, table.rowCount > 0 { return table }
        return nil
    }

    /// How `placeInOrder` ended.
    enum PlacingOutcome {
        /// Every input placed; the table of all of them.
        case placed(QuoteTable)
        /// The first failing input's error (in input order).
        case failed(ResponseError)
        /// The inputs do not fit one concatenation.
        case abandoned
    }

    /// Decodes inputs `0 ..< count` on up to `threads` threads (`decode(i)`) and places each into
    /// final columns sized for `inputBytes` of text, in input order.
    ///
    /// `makeAssembler` makes the columns once input 0 is decoded (from its rows, for an upper
    /// bound of the rows); nil abandons the placing. By default they are anonymous memory.
    static func placeInOrder(
        _ count: Int, threads: Int, inputBytes: Int,
        makeAssembler: ((DecodedRows, Int) -> ColumnAssembler?)? = nil,
        decode: (Int) throws(ResponseError) -> DecodedRows
    ) -> PlacingOutcome {
        guard count > 0 else { return .abandoned }
        let state = PlacingState()
        var slots = [Result<Placed, ResponseError>?](repeating: nil, count: count)
        slots.withUnsafeMutableBufferPointer { buffer in
            let out = SharedPointer(base: buffer.baseAddress!)
            forEachChunk(count, threads: Swift.max(1, threads)) { i, _ in
                guard i < state.firstFailure.load(ordering: .relaxed), !state.abandoned.load(ordering: .relaxed) else { return }
                let rows: DecodedRows
                do throws(ResponseError) {
                    rows = try decode(i)
                } catch {
                    state.firstFailure.min(i, ordering: .relaxed)
                    // Safe: each index is claimed by one worker only.
                    out.base[i] = .failure(error)
                    return
                }
                // Wait for input i − 1 to be counted (it was claimed earlier, by a running worker).
                guard let offset = state.waitForTurn(i) else { return }
                if i == 0 {
                    let capacity = inputBytes / minimumRowBytes(valueCount: rows.valueNames.count) + 1
                    state.assembler =
                        makeAssembler.map { $0(rows, capacity) }
                        ?? ColumnAssembler(valueNames: rows.valueNames, dateColumnName: rows.dateColumnName, rowCapacity: capacity)
                }
                guard let assembler = state.assembler, assembler.accepts(rows, at: offset) else {
                    state.abandoned.store(true, ordering: .relaxed)
                    return
                }
                state.pass(turn: i + 1, offset: offset + rows.rowCount)
                assembler.place(rows, at: offset)
                out.base[i] = .success(Placed(tickers: rows.tickers, rowCount: rows.rowCount, offset: offset))
            }
        }
        if state.abandoned.load(ordering: .relaxed) { return .abandoned }
        var parts: [(tickers: [TickerEntry], rowCount: Int)] = []
        var offsets: [Int] = []
        for slot in slots {
            switch slot {
            case .success(let placed):
                parts.append((placed.tickers, placed.rowCount))
                offsets.append(placed.offset)
            case .failure(let error): return .failed(error)
            case nil: preconditionFailure("an input was skipped without an earlier failure")
            }
        }
        guard let assembler = state.assembler,
            let tickers = QuoteTable.concatenatedIndex(parts, date: { part, row in assembler.date(at: offsets[part] + row) })
        else {
            return .abandoned
        }
        do {
            return .placed(try assembler.finish(rowCount: parts.reduce(0) { $0 + $1.rowCount }, tickers: tickers))
        } catch {
            // The decoders check what QuoteTable checks; the merging path reports anything else.
            return .abandoned
        }
    }
}

/// Where one input's rows went.
private struct Placed {
    var tickers: [TickerEntry]
    var rowCount: Int
    var offset: Int
}

/// The row-count chain of `placeInOrder`: whose turn it is to take its first row, and that row.
private final class PlacingState: @unchecked Sendable {
    // Safe: `assembler` is written by input 0's worker before it passes the turn (a releasing
    // store) and read by others after they see their turn (an acquiring load).
    let turn = Atomic<Int>(0)
    let nextOffset = Atomic<Int>(0)
    let firstFailure = Atomic<Int>(Int.max)
    let abandoned = Atomic<Bool>(false)
    var assembler: ColumnAssembler?

    /// Input `i`'s first row, once every earlier input is counted; nil when an earlier input
    /// failed or the placing was abandoned (its result is not needed then).
    func waitForTurn(_ i: Int) -> Int? {
        var spins = 0
        while turn.load(ordering: .acquiring) != i {
            if firstFailure.load(ordering: .relaxed) < i || abandoned.load(ordering: .relaxed) { return nil }
            spins += 1
            if spins > 64 { sched_yield() }
        }
        return nextOffset.load(ordering: .relaxed)
    }

    /// Hands the turn to input `next`, whose first row is `offset`.
    func pass(turn next: Int, offset: Int) {
        nextOffset.store(offset, ordering: .relaxed)
        turn.store(next, ordering: .releasing)
    }
}
