import Colonnade
import DataLinkFormat
import Synchronization

/// A fresh import of one large datatable CSV decoded straight into the snapshot file
/// (ARCHITECTURE.md, *Importing many files*): the file is read and cut as by `decodeLargeFile`
/// (`pieceLayout`), its data rows are counted exactly (the cutting pass's line count when the
/// lines are plain, else `countCSVRows`), which fixes the file's layout, and its pieces are
/// decoded and placed as by `placedPieces`, but into a `SnapshotDraft`'s payloads.
extension QuoteImporter {
    /// The datatable CSV at `path` imported into a new snapshot at `snapshot` (see
    /// `importDirect`), or nil, with nothing written and nothing counted in `progress`, when the
    /// ordinary path must run: not a datatable CSV, no rows, rows that do not fit the count
    /// (counted too low), pieces that do not concatenate (a CSV not grouped by ticker), a failing
    /// piece or a ticker holding a `"` (the ordinary path then decodes the file whole, for its
    /// exact error), a draft that cannot be made. A count too high saves the placed table the
    /// ordinary way (`commit`); nulls are written in place.
    static func importDirectCSV(
        _ path: String, threads: Int, chunkSize: Int, progress: ImportProgress?,
        snapshot: String, durable: Bool, dateColumnName: String?,
        writebackStride: Int = SnapshotDraft.defaultWritebackStride
    ) throws -> (table: QuoteTable, inPlace: Bool)? {
        let name = fileName(of: path)
        let counted = ImportProgress()
        // The draft is committed after the input is freed: the table's columns are the file's pages.
        let placing = try? withContents(ofFile: path, threads: threads) {
            bytes throws(ResponseError) -> (PlacingOutcome, SnapshotDraft?)? in
            guard let (input, layout, survey) = pieceLayout(bytes, source: name, threads: threads, chunkSize: chunkSize) else { return nil }
            let cuts = survey.cuts
            // Plain lines (no quote, no blank line) are rows as they are: no second pass.
            guard let total = survey.plainLines ?? countCSVRows(input.base, cuts: cuts, end: input.count, threads: threads),
                total > 0
            else { return nil }
            return placeInDraft(
                cuts.count, rowCount: total, threads: threads, snapshot: snapshot,
                writeback: durable ? writebackStride : 0
            ) { k throws(ResponseError) in
                let from = cuts[k], to = k + 1 < cuts.count ? cuts[k + 1] : input.count
                var scanner = CSVScanner(input: ByteInput(base: input.base + from, count: to - from, source: input.source), position: 0)
                let rows = try scanner.decodeDatatableRowsInPlace(layout)
                if rows.tickers.contains(where: { $0.symbol.utf8.contains(UInt8(ascii: "\"")) }) {
                    // Never shown: the ordinary path decodes the file whole.
                    throw .notADataLinkResponse(source: input.source, detail: "a quote in a ticker")
                }
                progress?.add(rows: rows.rowCount, bytes: to - from)
                counted.add(rows: rows.rowCount, bytes: to - from)
                return rows
            }
        }
        guard let (outcome, draft) = placing else { return nil }
        if case .placed(let table) = outcome {
            progress?.add(files: 1)
            return try commit(table, draft, snapshot: snapshot, durable: durable, threads: threads, dateColumnName: dateColumnName)
        }
        // Failed or abandoned: the ordinary path decodes (and counts) the file again.
        draft?.discard()
        progress?.takeBack(counted)
        return nil
    }

    /// The data rows of a CSV response (time-series or datatable) of fewer than `largeCSV` bytes:
    /// `countCSVRows` from the line after its header. nil for anything else (a zip too), a
    /// header that does not scan or a control byte in the lines (the decoder reports either).
    static func countCSVDataRows(_ bytes: UnsafeRawBufferPointer, largeCSV: Int) -> Int? {
        // A zip is imported member by member on the ordinary path.
        guard bytes.count < largeCSV, !ZipArchive.looksLikeZip(bytes),
            let (input, start) = try? QuoteDecoder.start(of: bytes, source: "")
        else { return nil }
        let b = input.base[start]
        if b == UInt8(ascii: "{") || b == UInt8(ascii: "[") || b == UInt8(ascii: "<") { return nil }
        var header = CSVScanner(input: input, position: start)
        guard (try? header.readHeader()) != nil else { return nil }
        return countCSVRows(input.base, from: header.position, to: input.count)
    }

    /// The rows `CSVScanner.decodeRows` finds in the pieces `cuts` of the data lines up to `end`
    /// (each piece counted on its own, on up to `threads` threads), when the pieces decode and no
    /// ticker holds a `"`: every line that is not blank (a lone LF, or CR LF; the decoder skips
    /// those) is one row, and a line ends at an LF outside quotes (quote parity from the piece's
    /// start, as `CSVChunker` cuts). A line that is not blank and not a row fails the decoding,
    /// so any miscount belongs to an import that takes the ordinary path anyway; `importDirect`
    /// also checks the decoded rows against it. nil when a piece holds a control byte (see
    /// `countCSVRows(_:from:to:)`).
    static func countCSVRows(_ base: UnsafePointer<UInt8>, cuts: [Int], end: Int, threads: Int) -> Int? {
        var counts = [Int](repeating: 0, count: cuts.count)
        let control = Atomic<Bool>(false)
        counts.withUnsafeMutableBufferPointer { out in
            let slots = SharedPointer(base: out.baseAddress!)
            forEachChunk(cuts.count, threads: threads) { k, _ in
                guard !control.load(ordering: .relaxed) else { return }
                if let rows = countCSVRows(base, from: cuts[k], to: k + 1 < cuts.count ? cuts[k + 1] : end) {
                    // Safe: each piece is claimed by one worker only.
                    slots.base[k] = rows
                } else {
                    control.store(true, ordering: .relaxed)
                }
            }
        }
        return control.load(ordering: .relaxed) ? nil : counts.reduce(0, +)
    }

    /// The rows of the data lines in `from ..< to` (`from` a line start outside quotes, `to` the
    /// end of the bytes the decoder sees), by the state machine below; blocks of 4,096 bytes
    /// without quotes, blank lines or a line starting with CR are counted by a vectorized pass.
    /// nil at the first block holding a byte below 0x20 other than TAB, LF and CR (never in a
    /// quote file written as text; the decoder then refuses it where it stands, or takes it
    /// inside a quoted ticker), so garbage is not passed over to its end before it is decoded.
    static func countCSVRows(_ base: UnsafePointer<UInt8>, from: Int, to: Int) -> Int? {
        let lf = UInt8(ascii: "\n"), cr = UInt8(ascii: "\r"), quote = UInt8(ascii: "\"")
        var rows = 0
        var inside = false, lineStart = true
        var a = from
        while a < to {
            let b = Swift.min(a + 4096, to)
            let (lineEnds, quotes, blank, control) = CSVChunker.lineEndsAndQuotes(base, a, b)
            if control { return nil }
            let first = base[a]
            if !inside && quotes == 0 && !blank && !(lineStart && (first == lf || first == cr)) {
                // A row starts here (at a line start), and after every LF but a last one, which
                // leaves the next block at a line start.
                let endsLine = base[b - 1] == lf
                rows += (lineStart ? 1 : 0) + lineEnds - (endsLine ? 1 : 0)
                lineStart = endsLine
                a = b
                continue
            }
            for k in a ..< b {
                let c = base[k]
                if lineStart {
                    // A blank line (the LF of CR LF is a blank line's start again: no row either).
                    if c == lf || (c == cr && k + 1 < to && base[k + 1] == lf) { continue }
                    rows += 1
                    lineStart = false
                }
                if c == quote {
                    inside.toggle()
                } else if c == lf && !inside {
                    lineStart = true
                }
            }
            a = b
        }
        return rows
    }
}
