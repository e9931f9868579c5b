#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade
import DataLinkFormat

/// Decodes a datatable CSV that arrives in chunks (inflated from a zip member, or read from a
/// pipe) while it arrives: the producing thread calls `feed` with each chunk; `feed` cuts it after
/// its last line end outside quotes and submits the whole lines to a `ChunkPipeline`, where a
/// worker decodes them into row buffers (and checksums the chunk's new bytes, for a zip); the
/// pieces go in order to a streaming `ColumnAssembler`, which copies them straight into the final
/// columns (ColumnAssembler+Streaming.swift).
///
/// That holds while the pieces concatenate: each ticker in one run (a ticker may continue across
/// a seam when its dates ascend). From the first piece that does not (a file not sorted by
/// ticker), the rest are kept as tables; `finish` then checks them for rows repeated across
/// pieces and merges them as `QuoteTable.merging` does.
///
/// Cuts follow the same rule as `CSVChunker`: a line end counts when an even number of `"`
/// bytes lies between it and the previous cut (itself a line start outside quotes). A stray `"`
/// could misplace a cut; such a piece fails to decode or yields a ticker holding a `"`, and the
/// caller decodes the whole input in one piece, which gives the exact error (line:column in the
/// whole file). So the result, and the error, are those of decoding the whole file.
///
/// `feed` returns nil to stop the producer early: the input is not a datatable CSV, or a piece
/// failed (the remaining input need not be inflated or read).
final class CSVStreamDecoder {
    /// How the stream ended.
    enum Outcome {
        /// The table, and the CRC-32 of every byte fed as new (0 unless checksummed).
        case table(QuoteTable, crc: UInt32)
        /// Not a datatable CSV, no rows, or a piece failed: decode the whole input instead.
        case decodeWhole
    }

    /// One piece's result.
    struct Piece: Sendable {
        var rows: DecodedRows?
        var lineBytes: Int
        var crc: UInt32
        var newCount: Int
    }

    private let source: String
    private let checksums: Bool
    private let totalBytes: Int?
    private let threads: Int
    private let pipeline: ChunkPipeline<Piece>
    private var layout: CSVScanner.Layout?
    private var notDatatable = false
    // Safe: `assembler` is set by the producer before its first submit; the rest is written by
    // the delivering worker only (one at a time), and read after `finish`.
    private final class Totals: @unchecked Sendable {
        var crc: UInt32 = 0
        var appendFailed = false
        /// The final columns; nil until the header is read (or when no address space was left).
        var assembler: ColumnAssembler?
        /// Pieces kept whole once the pieces stopped concatenating.
        var rest: [QuoteTable] = []
        var appending = true
    }
    private let totals = Totals()

    /// - Parameters:
    ///   - source: the input's name for messages (`archive.zip:member.csv`).
    ///   - totalBytes: the CSV's size when known (a zip member), to reserve the final columns.
    ///   - threads: decoding threads (pieces in flight: threads + 1).
    ///   - checksums: compute the CRC-32 of each chunk's new bytes on the workers.
    init(source: String, totalBytes: Int?, threads: Int, checksums: Bool) {
        self.source = source
        self.checksums = checksums
        self.totalBytes = totalBytes
        self.threads = threads
        let totals = self.totals
        pipeline = ChunkPipeline(maximumInFlight: threads + 1) { piece in
            totals.crc = CRC32.combine(totals.crc, piece.crc, length: piece.newCount)
            guard let rows = piece.rows else { return true }
            if Self.append(rows, bytes: piece.lineBytes, to: totals, source: source) { return true }
            totals.appendFailed = true
            return false
        }
    }

    /// Adds the next piece: appended to the columns while the pieces concatenate, else kept whole;
    /// false when it must not be used (a ticker holding a `"`: a cut may have fallen inside a
    /// quoted field).
    private static func append(_ rows: DecodedRows, bytes: Int, to totals: Totals, source: String) -> Bool {
        if rows.tickers.contains(where: { $0.symbol.utf8.contains(UInt8(ascii: "\"")) }) { return false }
        guard rows.rowCount > 0 || !rows.tickers.isEmpty else {
            _ = totals.assembler?.append(rows, bytes: bytes)  // no rows: counts its bytes only
            return true
        }
        if totals.appending, let assembler = totals.assembler, assembler.append(rows, bytes: bytes) { return true }
        totals.appending = false
        totals.rest.append(rows.makeTable(source: source))
        return true
    }

    /// Takes the next chunk: `data` is what the previous call left unused followed by new bytes,
    /// of which `newBytes` (a suffix of `data`) are new; `owner` keeps both alive until decoded.
    /// - Returns: How many trailing bytes of `data` were not used (a partial line) and must start
    ///   the next call's `data`; nil to stop.
    func feed(
        _ data: UnsafeRawBufferPointer, newBytes: UnsafeRawBufferPointer, isLast: Bool,
        owner: AnyObject & Sendable
    ) -> Int? {
        if pipeline.failed || notDatatable { return nil }
        guard let base = data.baseAddress?.assumingMemoryBound(to: UInt8.self) else {
            submitEmpty(newBytes, owner: owner)
            return 0
        }
        var end = data.count
        if !isLast {
            guard let cut = Self.lastLineEnd(base, count: data.count) else {
                submitEmpty(newBytes, owner: owner)
                return data.count
            }
            end = cut + 1
        }
        var start = 0
        if layout == nil {
            // The first lines: skip a byte order mark and blanks, sniff, read the header.
            var p = 0
            if end >= 3 && base[0] == 0xEF && base[1] == 0xBB && base[2] == 0xBF { p = 3 }
            while p < end && ByteInput.isBlank(base[p]) { p += 1 }
            if p == end {
                submitEmpty(newBytes, owner: owner)
                return isLast ? 0 : data.count - p
            }
            if base[p] == UInt8(ascii: "{") || base[p] == UInt8(ascii: "[") || base[p] == UInt8(ascii: "<") {
                notDatatable = true
                return nil
            }
            var decoder = CSVScanner(input: ByteInput(base: base, count: end, source: source), position: p)
            guard let read = try? decoder.readLayout(), read.isDatatable else {
                notDatatable = true
                return nil
            }
            layout = read
            start = decoder.position
            totals.assembler = ColumnAssembler(
                streamingValueNames: read.valueNames, dateColumnName: read.names[read.dateIndex],
                totalBytes: totalBytes)
        }
        guard let layout else { return nil }
        let source = self.source, checksums = self.checksums
        let first = UnsafeRawPointer(base + start), lineCount = end - start
        let fresh = newBytes
        let box = UnsafeSendable(first: first, fresh: fresh)
        pipeline.submit {
            withExtendedLifetime(owner) {
                let crc = checksums ? CRC32.checksum(box.fresh) : 0
                var rows: DecodedRows?
                if lineCount > 0, let first = box.first {
                    // Safe: `owner` keeps the bytes alive and unchanged until this job ends.
                    var decoder = CSVScanner(
                        input: ByteInput(
                            base: first.assumingMemoryBound(to: UInt8.self), count: lineCount,
                            source: source), position: 0)
                    guard let decoded = try? decoder.decodeDatatableRowsInPlace(layout) else { return nil }
                    rows = decoded
                }
                return Piece(rows: rows, lineBytes: lineCount, crc: crc, newCount: box.fresh.count)
            }
        }
        return data.count - end
    }

    /// A chunk with no whole line still has new bytes to checksum, in order.
    private func submitEmpty(_ newBytes: UnsafeRawBufferPointer, owner: AnyObject & Sendable) {
        guard newBytes.count > 0, checksums else { return }
        let checksums = self.checksums
        let box = UnsafeSendable(first: nil, fresh: newBytes)
        pipeline.submit {
            withExtendedLifetime(owner) {
                Piece(rows: nil, lineBytes: 0, crc: checksums ? CRC32.checksum(box.fresh) : 0, newCount: box.fresh.count)
            }
        }
    }

    /// Stops early (the producer failed): nothing more is decoded.
    func cancel() { pipeline.fail() }

    /// Waits for the pieces in flight, then builds the table.
    func finish() -> Outcome {
        pipeline.finish()
        if notDatatable || pipeline.failed || totals.appendFailed || layout == nil { return .decodeWhole }
        guard let table = assembledTable() else { return .decodeWhole }
        return .table(table, crc: totals.crc)
    }

    /// The appended rows and any pieces kept whole, as one table; nil when there were no rows or
    /// two pieces hold the same ticker and date (the caller then decodes the whole input, for the
    /// exact error).
    private func assembledTable() -> QuoteTable? {
        var parts: [QuoteTable] = []
        if let assembler = totals.assembler, assembler.appendedRowCount > 0 { parts.append(assembler.finishAppending()) }
        totals.assembler = nil
        parts.append(contentsOf: totals.rest)
        totals.rest = []
        guard parts.contains(where: { $0.rowCount > 0 }) else { return nil }
        if parts.count > 1 && ArchiveImporter.hasDuplicatesAcrossChunks(parts) { return nil }
        return QuoteTable.merging(&parts, threads: threads)
    }

    /// Whether decoding failed (the producer may stop).
    var failed: Bool { pipeline.failed || notDatatable }

    /// The offset of the last LF in `base[0..<count]` with an even number of `"` before it.
    static func lastLineEnd(_ base: UnsafePointer<UInt8>, count: Int) -> Int? {
        var lf = count
        var quotes = -1
        while true {
            // Safe: every index read is below `lf` <= count.
            var q = lf - 1
            while q >= 0 && base[q] != UInt8(ascii: "\n") { q -= 1 }
            guard q >= 0 else { return nil }
            if quotes < 0 {
                // Most inputs hold no `"` at all: `memchr` finds that several times faster than
                // counting (this runs on the producing thread, for every chunk).
                quotes = memchr(base, Int32(UInt8(ascii: "\"")), q) == nil ? 0 : countQuotes(base, q)
            } else {
                quotes -= countQuotes(base + q, lf - q)
            }
            if quotes & 1 == 0 { return q }
            lf = q
        }
    }

    /// The number of `"` bytes in `[p, p + n)`, eight bytes at a time: a byte of `w ^ 0x22…`
    /// is zero exactly where `w` holds a `"`, and the expression below sets the top bit of
    /// exactly those bytes (no carries between bytes), so their count is a popcount.
    static func countQuotes(_ p: UnsafePointer<UInt8>, _ n: Int) -> Int {
        let quotes: UInt64 = 0x2222_2222_2222_2222, low7: UInt64 = 0x7F7F_7F7F_7F7F_7F7F
        var count = 0
        var i = 0
        while i + 8 <= n {
            // Safe: 8 bytes remain at p + i.
            let v = UnsafeRawPointer(p + i).loadUnaligned(as: UInt64.self) ^ quotes
            let zeros = ~(((v & low7) &+ low7) | v | low7)
            count &+= zeros.nonzeroBitCount
            i += 8
        }
        while i < n {
            count &+= p[i] == UInt8(ascii: "\"") ? 1 : 0
            i += 1
        }
        return count
    }
}

/// Pointers into a chunk that its `owner` keeps alive, carried into a job on another thread.
private struct UnsafeSendable: @unchecked Sendable {
    // Safe: read-only bytes kept alive by the job's captured owner.
    let first: UnsafeRawPointer?
    let fresh: UnsafeRawBufferPointer
}
