#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade
import Synchronization

/// A fresh import of many plain files written straight into the final columns.
///
/// Each file is decoded into the decoder's row buffers on some thread; the files' row counts are
/// then chained in file order (file i learns its first row once file i − 1 is decoded, which
/// with files claimed in order is at most one decode away), and its rows are copied, sorted,
/// straight into their slice of columns reserved once at an upper bound of the rows
/// (`ColumnAssembler`). No per-file table is built and nothing is concatenated afterwards: each
/// value is written once by the decoder and once into its final column, then saved from there.
extension QuoteImporter {
    /// The fewest bytes a row of `valueCount` values takes in any text response (a 10-byte date,
    /// a separator and one digit per value, a line end): how many rows the input can hold at most.
    static func minimumRowBytes(valueCount: Int) -> Int { 11 + 2 * valueCount }

    /// `paths` decoded and placed into final columns in file order, or nil when they do not fit
    /// one concatenation (different columns or date names, a ticker in two files other than
    /// continuing with later dates): the caller merges decoded tables then, which gives the same
    /// table. Throws the first failing file's error (in `paths` order), as the merging path does.
    static func importPlacing(_ paths: [String], ticker: String?, threads: Int,
                              progress: ImportProgress?) throws(ResponseError) -> QuoteTable? {
        guard !paths.isEmpty else { return nil }
        var totalBytes = 0
        for path in paths {
            var info = stat()
            guard stat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return nil }
            totalBytes += Int(info.st_size)
        }
        let state = PlacingState()
        var slots = [Result<Placed, ResponseError>?](repeating: nil, count: paths.count)
        slots.withUnsafeMutableBufferPointer { buffer in
            let out = SharedPointer(base: buffer.baseAddress!)
            forEachChunk(paths.count, threads: Swift.max(1, threads)) { i, _ in
                guard i < state.firstFailure.load(ordering: .relaxed), !state.abandoned.load(ordering: .relaxed) else { return }
                let name = fileName(of: paths[i])
                let rows: DecodedRows
                do throws(ResponseError) {
                    rows = try withContents(ofFile: paths[i]) { bytes throws(ResponseError) in
                        let rows = try QuoteDecoder.decodeRows(bytes, ticker: ticker, fallbackTicker: tickerSymbol(fromFileName: name),
                                                               source: name)
                        progress?.add(files: 1, rows: rows.rowCount, bytes: bytes.count)
                        state.counted.add(files: 1, rows: rows.rowCount, bytes: bytes.count)
                        return rows
                    }
                } catch {
                    state.firstFailure.min(i, ordering: .relaxed)
                    // Safe: each index is claimed by one worker only.
                    out.base[i] = .failure(error)
                    return
                }
                // Wait for file i − 1 to be counted (it was claimed earlier, by a running worker).
                guard let offset = state.waitForTurn(i) else { return }
                if i == 0 {
                    let capacity = totalBytes / minimumRowBytes(valueCount: rows.valueNames.count) + 1
                    state.assembler = ColumnAssembler(valueNames: rows.valueNames, dateColumnName: rows.dateColumnName,
                                                      rowCapacity: capacity)
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
        if state.abandoned.load(ordering: .relaxed) {
            state.takeBack(from: progress)
            return nil
        }
        var parts: [(tickers: [TickerEntry], rowCount: Int)] = []
        var offsets: [Int] = []
        for slot in slots {
            switch slot {
            case .success(let placed):
                parts.append((placed.tickers, placed.rowCount))
                offsets.append(placed.offset)
            case .failure(let error): throw error
            case nil: preconditionFailure("a file was skipped without an earlier failure")
            }
        }
        guard let assembler = state.assembler else { return nil }
        guard let tickers = QuoteTable.concatenatedIndex(parts, date: { part, row in assembler.date(at: offsets[part] + row) }) else {
            state.takeBack(from: progress)
            return nil
        }
        let rowCount = parts.reduce(0) { $0 + $1.rowCount }
        do {
            return try assembler.finish(rowCount: rowCount, tickers: tickers)
        } catch {
            // The decoders check what QuoteTable checks; the merging path reports anything else.
            state.takeBack(from: progress)
            return nil
        }
    }
}

/// Where one file's rows went.
private struct Placed {
    var tickers: [TickerEntry]
    var rowCount: Int
    var offset: Int
}

/// The row-count chain of `importPlacing`: whose turn it is to take its first row, and that row.
private final class PlacingState: @unchecked Sendable {
    // Safe: `assembler` is written by file 0's worker before it passes the turn (a releasing
    // store) and read by others after they see their turn (an acquiring load).
    let turn = Atomic<Int>(0)
    let nextOffset = Atomic<Int>(0)
    let firstFailure = Atomic<Int>(Int.max)
    let abandoned = Atomic<Bool>(false)
    /// What was added to the caller's progress, taken back when the placing is abandoned.
    let counted = ImportProgress()
    var assembler: ColumnAssembler?

    /// File `i`'s first row, once every earlier file is counted; nil when an earlier file failed
    /// or the placing was abandoned (its result is not needed then).
    func waitForTurn(_ i: Int) -> Int? {
        var spins = 0
        while turn.load(ordering: .acquiring) != i {
            if firstFailure.load(ordering: .relaxed) < i || abandoned.load(ordering: .relaxed) { return nil }
            spins += 1
            if spins > 64 { sched_yield() }
        }
        return nextOffset.load(ordering: .relaxed)
    }

    /// Takes back what this placing added to `progress`: the merging path counts every file again.
    func takeBack(from progress: ImportProgress?) {
        let (files, rows, bytes) = counted.current
        progress?.add(files: -files, rows: -rows, bytes: -bytes)
    }

    /// Hands the turn to file `next`, whose first row is `offset`.
    func pass(turn next: Int, offset: Int) {
        nextOffset.store(offset, ordering: .relaxed)
        turn.store(next, ordering: .releasing)
    }
}
