#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade
import DataLinkFormat
import Synchronization

/// A fresh import decoded straight into the snapshot file (ARCHITECTURE.md, *Importing many
/// files*): the rows of every input are counted first, which fixes the file's layout; the inputs
/// are then decoded and placed as by `importPlacing`, but into a `SnapshotDraft`'s mapped
/// payloads instead of anonymous memory, so the page cache is filled once, by the placing, and
/// the disk writes it back while later inputs decode. The draft's commit writes header and
/// footer and renames the file over the target.
extension QuoteImporter {
    /// `paths` imported into a new snapshot at `snapshot` (which must not exist; the caller holds
    /// its write lock), or nil, with nothing written and nothing counted in `progress`, when this
    /// way does not apply: an input that is not a JSON response whose data rows can be counted
    /// ahead (`countDataRows`), no rows at all, inputs that do not concatenate, a filesystem
    /// that cannot reserve the file. The caller then imports the ordinary way. One datatable CSV
    /// of `largeFileSize` or more is imported by its pieces instead (`importDirectCSV`, with
    /// `chunkSize` as in `importFiles`; tests make both small).
    ///
    /// When the counted rows turn out not to be the decoded ones, the decoded table is saved the
    /// ordinary way from the draft's columns instead: the same file, with one more copy. Columns
    /// with nulls are written in place (their validity bitmaps go after every column's values).
    ///
    /// `dateColumnName`, when given, names the saved table's date column (the CLI's ordinary path
    /// upserts into an empty `QuoteTable()`, whose name is kept: "Date", whatever the input says).
    ///
    /// - Returns: the table saved (its columns are views of the new file's pages), and whether
    ///   its rows were written in place (false: saved the ordinary way from the draft's columns).
    /// - Throws: `ResponseError`: the first failing input's (in `paths` order), exactly as
    ///   `importFiles` throws it; `SnapshotError` from writing. Nothing is at `snapshot` then,
    ///   and no temporary is left.
    package static func importDirect(
        _ paths: [String], ticker: String?, threads: Int, progress: ImportProgress?,
        snapshot: String, durable: Bool = true, chunkSize: Int = defaultChunkSize,
        largeFileSize: Int = defaultLargeFileSize,
        dateColumnName: String? = nil,
        writebackStride: Int = SnapshotDraft.defaultWritebackStride
    ) throws -> (table: QuoteTable, inPlace: Bool)? {
        let threads = Swift.max(1, threads)
        // One large datatable CSV: its pieces, counted exactly (QuoteImporter+DirectCSV.swift).
        if paths.count == 1, kind(of: paths[0], largeFileSize: largeFileSize) == .large {
            return try importDirectCSV(
                paths[0], threads: threads, chunkSize: chunkSize, progress: progress,
                snapshot: snapshot, durable: durable, dateColumnName: dateColumnName,
                writebackStride: writebackStride)
        }
        guard !paths.isEmpty, let counts = countDataRows(paths, threads: threads, largeCSV: largeFileSize) else { return nil }
        let total = counts.reduce(0, +)
        guard total > 0 else { return nil }
        let counted = ImportProgress()
        let (outcome, draft) = placeInDraft(
            paths.count, rowCount: total, threads: threads, snapshot: snapshot,
            writeback: durable ? writebackStride : 0,
            decode: fileRows(paths, ticker: ticker, progress: progress, counted: counted))
        switch outcome {
        case .placed(let table):
            return try commit(table, draft, snapshot: snapshot, durable: durable, threads: threads, dateColumnName: dateColumnName)
        case .failed(let error):
            draft?.discard()
            throw error
        case .abandoned:
            draft?.discard()
            // The ordinary path counts every file again.
            progress?.takeBack(counted)
            return nil
        }
    }

    /// `placeInOrder` of inputs `0 ..< count` into the payloads of a new `SnapshotDraft` for
    /// `rowCount` rows at `snapshot` (made once input 0 is decoded: its columns fix the layout;
    /// a draft that cannot be made abandons the placing). The draft is nil when it was not made.
    /// `writeback`: the draft's writeback stride, 0 for none (a save without `fsync`).
    static func placeInDraft(
        _ count: Int, rowCount: Int, threads: Int, snapshot: String, writeback: Int,
        decode: (Int) throws(ResponseError) -> DecodedRows
    ) -> (PlacingOutcome, SnapshotDraft?) {
        let made = DraftSlot()
        let outcome = placeInOrder(
            count, threads: threads, inputBytes: 0,
            makeAssembler: { rows, _ in
                guard
                    let draft = try? SnapshotDraft(
                        replacing: snapshot, rowCount: rowCount,
                        valueWidths: Array(repeating: 8, count: rows.valueNames.count),
                        writebackStride: writeback)
                else { return nil }
                made.draft = draft
                return ColumnAssembler(valueNames: rows.valueNames, dateColumnName: rows.dateColumnName, draft: draft)
            }, decode: decode)
        // Safe: written by input 0's worker, which has returned (placeInOrder joins its workers).
        return (outcome, made.draft)
    }

    /// Commits the placed `table` in `draft`, or saves it the ordinary way when its layout is not
    /// the draft's (a miscount); its date column named `dateColumnName` if given
    /// (the names follow the payloads in the file: the layout does not move).
    static func commit(
        _ table: QuoteTable, _ draft: SnapshotDraft?, snapshot: String, durable: Bool,
        threads: Int, dateColumnName: String?
    ) throws -> (table: QuoteTable, inPlace: Bool) {
        guard let draft else { preconditionFailure("placed without columns") }
        var table = table
        if let dateColumnName { table.dateColumnName = dateColumnName }
        if try draft.commit(table, durable: durable, threads: threads) { return (table, true) }
        try table.save(to: snapshot, durable: durable, threads: threads)
        return (table, false)
    }

    /// The largest file `countDataRows(_:threads:)` counts: a bigger one makes the whole import
    /// take the ordinary path (its copy for counting would add its size to the peak memory).
    static let largestCountedFile = 64 << 20

    /// The data rows of each file at `paths` (`countDataRows(_:largeCSV:)`, on up to `threads`
    /// threads), or nil when any file cannot be counted.
    ///
    /// Each file is read with `pread` into one buffer per worker, reused from file to file (so it
    /// stays in cache), not mapped: a file truncated meanwhile must not end the process with
    /// SIGBUS. A file changed between this count and its decoding is caught as any miscount is.
    static func countDataRows(
        _ paths: [String], threads: Int, largestFile: Int = largestCountedFile,
        largeCSV: Int = defaultLargeFileSize
    ) -> [Int]? {
        var counts = [Int](repeating: -1, count: paths.count)
        let failed = Atomic<Bool>(false)
        let workers = Swift.max(1, Swift.min(threads, paths.count))
        let buffers = (0 ..< workers).map { _ in CountBuffer() }
        counts.withUnsafeMutableBufferPointer { out in
            let slots = SharedPointer(base: out.baseAddress!)
            forEachChunk(paths.count, threads: workers) { i, worker in
                guard !failed.load(ordering: .relaxed) else { return }
                if let n = buffers[worker].countDataRows(atPath: paths[i], largestFile: largestFile, largeCSV: largeCSV) {
                    // Safe: each index is claimed by one worker only.
                    slots.base[i] = n
                } else {
                    failed.store(true, ordering: .relaxed)
                }
            }
        }
        return failed.load(ordering: .relaxed) ? nil : counts
    }

    /// `countDataRows(_:largeCSV:)` of the regular file at `path`, or nil.
    static func countDataRows(atPath path: String) -> Int? { CountBuffer().countDataRows(atPath: path) }

    /// How many rows the `"data"` array of a JSON response holds, counted without decoding: the
    /// `[` bytes from the array's opening to its first `]]` (a row's end that ends the array).
    /// A guess that can be wrong only for responses this import would not meet in practice (a
    /// `[` inside a string in the rows, a pretty-printed `]` `]`): `importDirect` compares it
    /// with the decoded rows and saves the ordinary way when they differ. nil when the bytes are
    /// a JSON object without a `"data": [` or the array's end is not found.
    ///
    /// Bytes not starting with `{` are counted as a CSV response shorter than `largeCSV` bytes
    /// (`countCSVDataRows`; a longer one is decoded in pieces on the ordinary path: nil).
    static func countDataRows(_ bytes: UnsafeRawBufferPointer, largeCSV: Int = defaultLargeFileSize) -> Int? {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return nil }
        let count = bytes.count
        var i = 0
        while i < count && (ByteInput.isBlank(base[i]) || base[i] == 0xEF || base[i] == 0xBB || base[i] == 0xBF) { i += 1 }
        guard i < count, base[i] == UInt8(ascii: "{") else { return countCSVDataRows(bytes, largeCSV: largeCSV) }
        // The key `"data"` followed by `:` and `[`. JSON text holds no byte below 0x20 but the
        // blanks (RFC 8259 §7: strings escape them), so the first such byte ends the count (nil:
        // the decoder then refuses it at its byte): garbage, such as a file of zeros, is not
        // passed over to its end before the decoder sees it.
        let key: [UInt8] = Array("\"data\"".utf8)
        var open = -1
        while open < 0 {
            while i < count && base[i] != UInt8(ascii: "\"") {
                if base[i] < 0x20 && !ByteInput.isBlank(base[i]) { return nil }
                i += 1
            }
            guard i + key.count <= count else { return nil }
            if memcmp(base + i, key, key.count) == 0 && (i == 0 || base[i - 1] != UInt8(ascii: "\\")) {
                var j = i + key.count
                while j < count && ByteInput.isBlank(base[j]) { j += 1 }
                if j < count && base[j] == UInt8(ascii: ":") {
                    j += 1
                    while j < count && ByteInput.isBlank(base[j]) { j += 1 }
                    if j < count && base[j] == UInt8(ascii: "[") { open = j }
                }
            }
            i += 1
        }
        var j = open + 1
        while j < count && ByteInput.isBlank(base[j]) { j += 1 }
        if j < count && base[j] == UInt8(ascii: "]") { return 0 }
        // Brackets counted a block of 4096 bytes at a time, by a branch-free loop the compiler
        // vectorizes (faster than `SIMD32` masks with `any`: docs/MEASUREMENTS.md, *Counting
        // brackets*); the block holding the first `]]` is counted again up to it.
        var rows = 0
        var from = open + 1
        while from < count - 1 {
            let to = Swift.min(from + 4096, count - 1)
            let (opens, ends, control) = bracketsAndEnds(base, from, to)
            if control { return nil }
            if !ends {
                rows += opens
                from = to
                continue
            }
            for k in from ..< to {
                if base[k] == UInt8(ascii: "]") && base[k + 1] == UInt8(ascii: "]") { return rows }
                if base[k] == UInt8(ascii: "[") { rows += 1 }
            }
            from = to  // not reached: the block holds a `]]`
        }
        return nil
    }
}

/// The `[` bytes in `from ..< to` (at most 65,535 of them), whether a `]]` starts there
/// (`base[to]` is read), and whether a byte below 0x20 other than TAB, LF and CR (never in JSON
/// text) is there.
@inline(never)
private func bracketsAndEnds(_ base: UnsafePointer<UInt8>, _ from: Int, _ to: Int) -> (Int, Bool, Bool) {
    var opens: UInt16 = 0, ends: UInt8 = 0, control: UInt8 = 0
    for k in from ..< to {
        let b = base[k], next = base[k + 1]
        opens &+= b == UInt8(ascii: "[") ? 1 : 0
        ends |= (b == UInt8(ascii: "]") ? 1 : 0) & (next == UInt8(ascii: "]") ? 1 : 0)
        control |= (b < 0x20 ? 1 : 0) & (b != 0x09 ? 1 : 0) & (b != 0x0A ? 1 : 0) & (b != 0x0D ? 1 : 0)
    }
    return (Int(opens), ends != 0, control != 0)
}

/// One worker's buffer for counting rows: the file is read into it whole. A file too large for
/// the memory left is not counted (the ordinary path then reads it, and reports that).
private final class CountBuffer {
    private var base: UnsafeMutableRawPointer?
    private var capacity = 0

    deinit { free(base) }

    func countDataRows(
        atPath path: String, largestFile: Int = QuoteImporter.largestCountedFile,
        largeCSV: Int = QuoteImporter.defaultLargeFileSize
    ) -> Int? {
        // O_NONBLOCK: a FIFO must not make this wait for a writer.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return nil }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, info.st_size > 0,
            info.st_size <= largestFile
        else { return nil }
        let size = Int(info.st_size)
        if size >= QuoteImporter.mappedReadSize, let mapping = GuardedFileMapping(fileDescriptor: fd, count: size) {
            let rows = QuoteImporter.countDataRows(mapping.bytes, largeCSV: largeCSV)
            return mapping.lostPages ? nil : rows  // shrank meanwhile: the ordinary path reports it
        }
        if size > capacity {
            free(base)
            capacity = 0
            var raw: UnsafeMutableRawPointer?
            guard posix_memalign(&raw, 64, Swift.max(size, 1 << 20)) == 0, let raw else {
                base = nil
                return nil
            }
            base = raw
            capacity = Swift.max(size, 1 << 20)
        }
        guard let base else { return nil }
        // An error, or the file shrank: the ordinary path reports it.
        guard SystemCall.readFully(fd, base, size, at: 0) == size else { return nil }
        return QuoteImporter.countDataRows(UnsafeRawBufferPointer(start: base, count: size), largeCSV: largeCSV)
    }
}

/// The draft `importDirect` makes on input 0's worker.
private final class DraftSlot: @unchecked Sendable {
    // Safe: written once by one worker before the workers are joined, read after.
    var draft: SnapshotDraft?
}
