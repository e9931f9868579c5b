#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade
import DataLinkFormat
import Synchronization

/// Importing many files on several threads, and one large CSV in pieces.
///
/// Files decode in parallel, each into its own table, kept by file number; then every column of
/// the result is allocated once at its final size and each file's rows are copied into their
/// slice of it (`QuoteTable.merging`). A large datatable CSV is cut at line ends (`CSVChunker`)
/// and its pieces decode in parallel. The result, and the error, do not depend on the thread
/// count: when several files fail, the error is the first failing file's, and a failing piece
/// of a CSV is re-decoded in one piece for its exact error (file, byte, line:column, row).
extension QuoteImporter {
    /// Files at least this large, not zips and not starting like JSON, are candidates for
    /// decoding in pieces.
    package static let defaultLargeFileSize = 16 << 20
    /// The nominal size of one piece of a large CSV.
    package static let defaultChunkSize = 8 << 20

    /// How one input file is handled.
    enum FileKind {
        /// Decoded whole, in parallel with other plain files.
        case plain
        /// Decoded after the plain files, each with every thread (zips, large CSVs).
        case zip, large
    }

    /// Decodes every file, on up to `threads` threads, and merges them into one new table, later
    /// files winning on equal (ticker, date) as in `QuoteTable.upsert(_:)`.
    ///
    /// - Parameters:
    ///   - paths: The files; each may be any `QuoteFormat`, or a zip of them.
    ///   - ticker: The symbol for every single-ticker file, overriding body and file name.
    ///   - archiveOptions: How zip archives among the files are read.
    ///   - threads: Decode on up to this many threads; the result does not depend on it.
    ///   - chunkSize: The nominal piece size of a large CSV (tests make it small).
    ///   - largeFileSize: The size from which a CSV is decoded in pieces (tests make it small).
    ///   - progress: Counters the caller may show while this runs.
    /// - Throws: The error of the first file (in `paths` order) that fails; nothing is returned then.
    package static func importFiles(
        _ paths: [String], ticker: String?, archiveOptions: ArchiveImporter.Options,
        threads: Int, chunkSize: Int, largeFileSize: Int = defaultLargeFileSize,
        progress: ImportProgress?
    ) throws(ResponseError) -> QuoteTable {
        let threads = Swift.max(1, threads)
        let kinds = paths.map { kind(of: $0, largeFileSize: largeFileSize) }
        // Plain files only (the usual case): decoded straight into the final columns.
        if kinds.allSatisfy({ $0 == .plain }),
            let table = try importPlacing(paths, ticker: ticker, threads: threads, progress: progress)
        {
            return table
        }
        var slots = [Result<QuoteTable, ResponseError>?](repeating: nil, count: paths.count)
        let firstFailure = Atomic<Int>(Int.max)

        let plain = paths.indices.filter { kinds[$0] == .plain }
        slots.withUnsafeMutableBufferPointer { buffer in
            let out = SharedPointer(base: buffer.baseAddress!)
            forEachChunk(plain.count, threads: threads) { j, _ in
                let i = plain[j]
                // A file after a failed one is not needed: the earlier error is the answer.
                guard i < firstFailure.load(ordering: .relaxed) else { return }
                let result = decodeCounted(paths[i], ticker: ticker, progress: progress)
                if case .failure = result { firstFailure.min(i, ordering: .relaxed) }
                // Safe: each index is claimed by one worker only.
                out.base[i] = result
            }
        }
        for i in paths.indices where kinds[i] != .plain && i < firstFailure.load(ordering: .relaxed) {
            let result: Result<QuoteTable, ResponseError>
            do throws(ResponseError) {
                if kinds[i] == .zip {
                    var options = archiveOptions
                    if let ticker { options.ticker = ticker }
                    result = .success(try ArchiveImporter.importArchive(atPath: paths[i], options: options))
                    progress?.add(files: 1, rows: result.rowCount)
                } else {
                    result = .success(
                        try decodeLargeFile(
                            paths[i], ticker: ticker, threads: threads,
                            chunkSize: chunkSize, progress: progress))
                }
            } catch {
                result = .failure(error)
                firstFailure.min(i, ordering: .relaxed)
            }
            slots[i] = result
        }

        var parts: [QuoteTable] = []
        parts.reserveCapacity(paths.count)
        for i in slots.indices {
            switch slots[i] {
            case .success(let table): parts.append(table)
            case .failure(let error): throw error
            case nil: preconditionFailure("file \(i) was skipped without an earlier failure")
            }
            slots[i] = nil
        }
        return QuoteTable.merging(&parts, threads: threads)
    }

    /// Decodes one plain file, counting it in `progress`.
    private static func decodeCounted(_ path: String, ticker: String?, progress: ImportProgress?) -> Result<QuoteTable, ResponseError> {
        do throws(ResponseError) {
            let name = fileName(of: path)
            let table = try withContents(ofFile: path) { bytes throws(ResponseError) in
                let table = try QuoteDecoder.decode(
                    bytes, ticker: ticker, fallbackTicker: tickerSymbol(fromFileName: name),
                    source: name
                ).table
                progress?.add(files: 1, rows: table.rowCount, bytes: bytes.count)
                return table
            }
            return .success(table)
        } catch {
            return .failure(error)
        }
    }

    /// Whether `path` is a zip, a large file that may be a CSV, or anything else (`plain`: the
    /// decoder reports what is wrong with an unreadable file).
    static func kind(of path: String, largeFileSize: Int) -> FileKind {
        if isZipFile(path) { return .zip }
        // Pieces pay at one thread too: each piece's row buffers are small and reused, and the
        // input is freed before the pieces are merged (a lower peak than one whole decode).
        // O_NONBLOCK: a FIFO must not make this wait for a writer.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return .plain }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG, Int(info.st_size) >= largeFileSize else { return .plain }
        var head = [UInt8](repeating: 0, count: 64)
        let n = head.withUnsafeMutableBytes { SystemCall.readFully(fd, $0.baseAddress!, 64, at: 0) }
        guard n > 0 else { return .plain }
        let first = head[0 ..< n].first { !ByteInput.isBlank($0) && $0 != 0xEF && $0 != 0xBB && $0 != 0xBF }
        if first == UInt8(ascii: "{") || first == UInt8(ascii: "[") || first == UInt8(ascii: "<") { return .plain }
        return .large
    }

    /// Decodes a large file: a datatable CSV in pieces on `threads` threads, anything else (or
    /// a CSV whose pieces fail) whole.
    private static func decodeLargeFile(
        _ path: String, ticker: String?, threads: Int, chunkSize: Int,
        progress: ImportProgress?
    ) throws(ResponseError) -> QuoteTable {
        let name = fileName(of: path)
        // The pieces are merged after the input is freed: the peak is the input and the decoded
        // pieces, or the pieces and the result, never all three.
        var pieces = try withContents(ofFile: path, threads: threads) { bytes throws(ResponseError) -> [QuoteTable] in
            // Straight into the final columns when the pieces concatenate (a CSV sorted by ticker).
            if let (input, layout, survey) = pieceLayout(bytes, source: name, threads: threads, chunkSize: chunkSize),
                let table = placedPieces(input, layout: layout, cuts: survey.cuts, threads: threads, progress: progress)
            {
                return [table]
            }
            if let pieces = decodedPieces(bytes, source: name, threads: threads, chunkSize: chunkSize, progress: progress) {
                return pieces
            }
            let table = try QuoteDecoder.decode(
                bytes, ticker: ticker, fallbackTicker: tickerSymbol(fromFileName: name),
                source: name
            ).table
            progress?.add(rows: table.rowCount, bytes: bytes.count)
            return [table]
        }
        progress?.add(files: 1)
        return QuoteTable.merging(&pieces, threads: threads)
    }

    /// A datatable CSV decoded in pieces cut at line ends, on up to `threads` threads, or nil
    /// when `bytes` is not a datatable CSV, has no rows, or any piece fails, two pieces hold the
    /// same ticker and date, or a ticker holds a `"` (a stray quote could have misplaced a cut):
    /// the caller then decodes it whole, which gives the exact error. Equal to decoding it whole.
    package static func decodeInPieces(
        _ bytes: UnsafeRawBufferPointer, source: String, threads: Int, chunkSize: Int,
        progress: ImportProgress? = nil
    ) -> QuoteTable? {
        guard var pieces = decodedPieces(bytes, source: source, threads: threads, chunkSize: chunkSize, progress: progress) else {
            return nil
        }
        return QuoteTable.merging(&pieces, threads: threads)
    }

    /// The input, header layout and survey (piece starts, plain line count) of a datatable CSV;
    /// nil for anything else, or a control byte in its lines (`CSVChunker.survey`).
    static func pieceLayout(
        _ bytes: UnsafeRawBufferPointer, source: String, threads: Int,
        chunkSize: Int
    ) -> (ByteInput, CSVScanner.Layout, CSVChunker.Survey)? {
        guard let (input, start) = try? QuoteDecoder.start(of: bytes, source: source) else { return nil }
        let b = input.base[start]
        if b == UInt8(ascii: "{") || b == UInt8(ascii: "[") || b == UInt8(ascii: "<") { return nil }
        var header = CSVScanner(input: input, position: start)
        guard let layout = try? header.readLayout(), layout.isDatatable else { return nil }
        guard
            let survey = CSVChunker.survey(input.base, start: header.position, end: input.count, chunkSize: chunkSize, threads: threads)
        else { return nil }
        return (input, layout, survey)
    }

    /// The tables of the pieces of `decodeInPieces`, in order, not yet merged.
    static func decodedPieces(
        _ bytes: UnsafeRawBufferPointer, source: String, threads: Int, chunkSize: Int,
        progress: ImportProgress?
    ) -> [QuoteTable]? {
        guard let (input, layout, survey) = pieceLayout(bytes, source: source, threads: threads, chunkSize: chunkSize) else { return nil }
        let cuts = survey.cuts
        var pieces = [QuoteTable?](repeating: nil, count: cuts.count)
        let failed = Atomic<Bool>(false)
        pieces.withUnsafeMutableBufferPointer { buffer in
            let out = SharedPointer(base: buffer.baseAddress!)
            forEachChunk(cuts.count, threads: threads) { k, _ in
                guard !failed.load(ordering: .relaxed) else { return }
                let from = cuts[k], to = k + 1 < cuts.count ? cuts[k + 1] : input.count
                var scanner = CSVScanner(input: ByteInput(base: input.base + from, count: to - from, source: source), position: 0)
                guard let piece = try? scanner.decodeDatatableRows(layout) else {
                    failed.store(true, ordering: .relaxed)
                    return
                }
                progress?.add(rows: piece.rowCount, bytes: to - from)
                // Safe: each piece index is claimed by one worker only.
                out.base[k] = piece
            }
        }
        guard !failed.load(ordering: .relaxed) else { return nil }
        let parts = pieces.compactMap { $0 }
        guard parts.count == cuts.count, parts.contains(where: { $0.rowCount > 0 }) else { return nil }
        for part in parts where part.tickers.contains(where: { $0.symbol.utf8.contains(UInt8(ascii: "\"")) }) { return nil }
        if ArchiveImporter.hasDuplicatesAcrossChunks(parts) { return nil }
        return parts
    }
}

extension Result where Success == QuoteTable {
    /// The rows of a decoded table, 0 for a failure.
    fileprivate var rowCount: Int {
        if case .success(let table) = self { return table.rowCount }
        return 0
    }
}
