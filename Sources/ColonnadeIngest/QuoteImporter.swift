#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Colonnade
import DataLinkFormat

/// Imports response files (as saved from the API, or written by `QuoteGenerator`'s writers) into
/// one table.
///
///     var table = try SnapshotReader.load(…)          // or QuoteTable()
///     try QuoteImporter.importFiles(["WIKI-FDX.csv", "AMZN.json"], into: &table)
///
/// Each file is read whole into one buffer (`read(2)`), decoded with `QuoteDecoder`, and freed
/// once decoded; files decode on several threads when asked (see `QuoteImporter+Parallel.swift`). The ticker of a single-ticker file is, in order: the `ticker`
/// argument, the code the body names (`dataset_code`), or the file name (see
/// `tickerSymbol(fromFileName:)`); datatables carry their own tickers.
package enum QuoteImporter {
    /// Decodes every file and merges them into one new table, later files winning on equal
    /// (ticker, date) as in `QuoteTable.upsert(_:)`.
    ///
    /// Files decode on up to `threads` threads, each into its own small table; then each column
    /// of the result is allocated once at its final size and every file's rows are copied into
    /// their slice of it. A large datatable CSV is cut at line ends and its pieces decode in
    /// parallel. The result (and the error) is the same for any `threads`.
    ///
    /// - Parameters:
    ///   - paths: The files; each may be any `QuoteFormat`.
    ///   - ticker: The symbol for every single-ticker file, overriding body and file name.
    ///   - archiveOptions: How zip archives among the files are read (`ArchiveImporter`); a file
    ///     is a zip when it starts with a zip signature, whatever its name.
    ///   - threads: Decode on up to this many threads (default 1).
    ///   - progress: Counters updated as files finish, for a display on another thread.
    /// - Returns: The merged table (every value column Float64).
    /// - Throws: The first failing file's `ResponseError` (in `paths` order, whatever thread
    ///   decoded it); nothing is returned then.
    /// - Complexity: O(total bytes) when the files hold distinct tickers with the same columns
    ///   (their rows are concatenated), else one upsert of all of them.
    package static func importFiles(
        _ paths: [String], ticker: String? = nil,
        archiveOptions: ArchiveImporter.Options = ArchiveImporter.Options(),
        threads: Int = 1, progress: ImportProgress? = nil
    ) throws(ResponseError) -> QuoteTable {
        try importFiles(
            paths, ticker: ticker, archiveOptions: archiveOptions, threads: threads,
            chunkSize: defaultChunkSize, progress: progress)
    }

    /// Decodes one response body, or a zip archive of them, held in memory (for example read from
    /// standard input).
    /// - Parameter source: The input's name for messages.
    package static func importBytes(
        _ bytes: [UInt8], source: String, ticker: String? = nil,
        archiveOptions: ArchiveImporter.Options = ArchiveImporter.Options()
    ) throws(ResponseError) -> QuoteTable {
        do {
            return try bytes.withUnsafeBytes { raw in
                try importBody(raw, source: source, ticker: ticker, archiveOptions: archiveOptions) { () throws(ZipError) in
                    try ZipArchive(bytes: bytes, name: source)
                }
            }
        } catch let error as ResponseError {
            throw error
        } catch {
            preconditionFailure("unexpected error \(error)")
        }
    }

    /// `importBytes` on bytes held anywhere: a zip archive (made by `archive`, which may take
    /// the bytes over) is imported member by member, anything else decoded as one response.
    static func importBody(
        _ bytes: UnsafeRawBufferPointer, source: String, ticker: String?,
        archiveOptions: ArchiveImporter.Options,
        archive: () throws(ZipError) -> ZipArchive
    ) throws(ResponseError) -> QuoteTable {
        if ZipArchive.looksLikeZip(bytes) {
            var options = archiveOptions
            if let ticker { options.ticker = ticker }
            let made: ZipArchive
            do { made = try archive() } catch { throw .archive(error) }
            return try ArchiveImporter.importArchive(made, options: options)
        }
        var parts = [try QuoteDecoder.decode(bytes, ticker: ticker, source: source).table]
        return QuoteTable.merging(&parts)
    }

    /// Whether the file at `path` is a regular file starting with a zip signature (`PK\3\4`, or
    /// `PK\5\6` for an empty archive). False when it cannot be read or is not a regular file (the
    /// decoder then reports why).
    package static func isZipFile(_ path: String) -> Bool {
        // O_NONBLOCK: a FIFO must not make this wait for a writer.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else { return false }
        var head = [UInt8](repeating: 0, count: 4)
        let n = head.withUnsafeMutableBytes { SystemCall.readFully(fd, $0.baseAddress!, 4, at: 0) }
        guard n == 4 else { return false }
        return head.withUnsafeBytes { ZipArchive.looksLikeZip($0) }
    }

    /// Decodes every file and upserts them into `table` — only when all of them decode.
    /// - Throws: The first file's `ResponseError`; `table` is unchanged then.
    package static func importFiles(
        _ paths: [String], ticker: String? = nil,
        archiveOptions: ArchiveImporter.Options = ArchiveImporter.Options(),
        threads: Int = 1, into table: inout QuoteTable
    ) throws(ResponseError) {
        let imported = try importFiles(paths, ticker: ticker, archiveOptions: archiveOptions, threads: threads)
        if table.rowCount == 0 && table.tickers.isEmpty && table.schema.isEmpty {
            let metadata = table.metadata
            table = imported
            for (k, v) in metadata { table.metadata[k] = v }
        } else {
            table.upsert(contentsOf: [imported], threads: threads)
        }
    }

    /// Reads and decodes one file.
    ///
    /// - Parameters:
    ///   - path: The file.
    ///   - ticker: The symbol for a single-ticker file, overriding body and file name.
    /// - Throws: `.unreadable` when the file cannot be read, else the decoder's errors, which name
    ///   the file by its last path component.
    package static func decodeFile(_ path: String, ticker: String? = nil) throws(ResponseError) -> DecodedResponse {
        let name = fileName(of: path)
        return try withContents(ofFile: path) { bytes throws(ResponseError) in
            try QuoteDecoder.decode(bytes, ticker: ticker, fallbackTicker: tickerSymbol(fromFileName: name), source: name)
        }
    }

    /// The symbol a file name implies: the name up to its first `.`, after its first `-` if any
    /// (the database code), with `_` read as `.` (`DataLinkSymbols.symbol(fromCode:)`).
    ///
    ///     tickerSymbol(fromFileName: "FDX.json")                 // "FDX"
    ///     tickerSymbol(fromFileName: "WIKI-FDX.csv")             // "FDX"
    ///     tickerSymbol(fromFileName: "WIKI-BRK_A.2014.asc.csv")  // "BRK.A"
    ///
    /// - Returns: nil when nothing is left (for example `.json`).
    package static func tickerSymbol(fromFileName name: String) -> String? {
        var stem = Substring(fileName(of: name))
        if let dot = stem.firstIndex(of: ".") { stem = stem[..<dot] }
        if let dash = stem.firstIndex(of: "-") { stem = stem[stem.index(after: dash)...] }
        return stem.isEmpty ? nil : DataLinkSymbols.symbol(fromCode: String(stem))
    }

    static func fileName(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        let name = path[path.index(after: slash)...]
        return name.isEmpty ? path : String(name)
    }

    /// Calls `body` with the whole file: a file of `mappedReadSize` bytes or more mapped
    /// (`GuardedFileMapping`: the page cache's own pages, no copy and no fresh memory), others
    /// read into one buffer that is freed afterwards. `body` must not keep pointers into it.
    ///
    /// A mapped file that shrinks while `body` reads it is `.unreadable` ("shrank while being
    /// read"), whatever `body` returned or threw: the pages past its new end read as zeros.
    /// A file that cannot be mapped is read. With `threads` above 1, a file read of
    /// `parallelReadSize` bytes or more is read in 8 MiB pieces on that many threads (`pread`).
    package static func withContents<R>(
        ofFile path: String, threads: Int = 1,
        _ body: (UnsafeRawBufferPointer) throws(ResponseError) -> R
    ) throws(ResponseError) -> R {
        try withContents(ofFile: path, threads: threads, mappedReadSize: mappedReadSize, body)
    }

    /// Files from this size are mapped by `withContents` rather than read: a mapping costs a
    /// few system calls and a fault per 16 pages, a reused read buffer nothing, so small files
    /// (a response of a few hundred kB) are read (docs/MEASUREMENTS.md, *Mapping large inputs*).
    package static let mappedReadSize = 8 << 20

    /// `withContents(ofFile:threads:_:)` with the mapping threshold given (tests make it small).
    package static func withContents<R>(
        ofFile path: String, threads: Int = 1, mappedReadSize: Int,
        _ body: (UnsafeRawBufferPointer) throws(ResponseError) -> R
    ) throws(ResponseError) -> R {
        // O_NONBLOCK: opening a FIFO must not wait for a writer; it is refused just below.
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { throw .decoding(.unreadable(path: path, reason: String(cString: strerror(errno)))) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .decoding(.unreadable(path: path, reason: String(cString: strerror(errno)))) }
        guard (info.st_mode & S_IFMT) == S_IFREG else {
            throw .decoding(.unreadable(path: path, reason: "is \(FileTarget.kind(info.st_mode)), not a regular file"))
        }
        if Int(info.st_size) >= mappedReadSize, let mapping = GuardedFileMapping(fileDescriptor: fd, count: Int(info.st_size)) {
            let result: Result<R, ResponseError>
            do throws(ResponseError) { result = .success(try body(mapping.bytes)) } catch { result = .failure(error) }
            // A decoder that stopped at the zeros standing for the lost tail (a control byte) may
            // not have reached a lost page: the file's size now tells too.
            var now = stat()
            if mapping.lostPages || (fstat(fd, &now) == 0 && Int(now.st_size) < Int(info.st_size)) {
                throw .decoding(.unreadable(path: path, reason: "the file shrank while it was being read"))
            }
            return try result.get()
        }
        var capacity = Swift.max(Int(info.st_size), 0) + 1
        var buffer = try fileBuffer(capacity, path: path)
        defer { free(buffer) }
        var count = 0
        if threads > 1 && Int(info.st_size) >= parallelReadSize {
            let (n, code) = readInPieces(fd, into: buffer, size: Int(info.st_size), threads: threads)
            if code != 0 { throw .decoding(.unreadable(path: path, reason: String(cString: strerror(code)))) }
            count = n
        }
        while true {
            if count == capacity {
                // The file grew while being read.
                let bigger = try fileBuffer(capacity * 2, path: path)
                bigger.copyMemory(from: buffer, byteCount: count)
                free(buffer)
                buffer = bigger
                capacity *= 2
            }
            let n = SystemCall.retryingOnInterrupt { pread(fd, buffer + count, capacity - count, off_t(count)) }
            if n < 0 { throw .decoding(.unreadable(path: path, reason: String(cString: strerror(errno)))) }
            if n == 0 { break }
            count += n
        }
        return try body(UnsafeRawBufferPointer(start: buffer, count: count))
    }

    /// `byteCount` bytes, 64-byte aligned, for a file's contents (freed with `free`); a file too
    /// large for the memory left is `.unreadable` (out of memory), not a stop of the process.
    private static func fileBuffer(_ byteCount: Int, path: String) throws(ResponseError) -> UnsafeMutableRawPointer {
        var raw: UnsafeMutableRawPointer?
        guard posix_memalign(&raw, 64, byteCount) == 0, let raw else {
            throw .decoding(
                .unreadable(path: path, reason: "out of memory: cannot allocate \(DecodeError.sizeText(byteCount)) to hold the file"))
        }
        return raw
    }

    /// Files from this size are read on several threads when `withContents` is given threads.
    package static let parallelReadSize = 16 << 20

    /// Reads `size` bytes of `fd` into `buffer` in pieces of `piece` bytes on up to `threads` threads.
    /// Returns how many bytes from the start were read without a gap (fewer than `size` when the
    /// file shrank meanwhile; the caller reads on from there), and the first failing piece's
    /// `errno` (0 when none failed).
    package static func readInPieces(
        _ fd: Int32, into buffer: UnsafeMutableRawPointer, size: Int, threads: Int,
        piece: Int = 8 << 20
    ) -> (count: Int, errno: Int32) {
        precondition(piece > 0, "empty pieces")
        let pieces = (size + piece - 1) / piece
        var got = [Int](repeating: 0, count: pieces)
        var failures = [Int32](repeating: 0, count: pieces)
        got.withUnsafeMutableBufferPointer { gotBuffer in
            failures.withUnsafeMutableBufferPointer { failureBuffer in
                let gotSlots = SharedPointer(base: gotBuffer.baseAddress!)
                let failureSlots = SharedPointer(base: failureBuffer.baseAddress!)
                forEachChunk(pieces, threads: threads) { k, _ in
                    let start = k * piece, length = Swift.min(piece, size - start)
                    // Fewer than `length` bytes: the file shrank.
                    let done = SystemCall.readFully(fd, buffer + start, length, at: start)
                    // Safe: each piece index is claimed by one worker only.
                    if done < 0 { failureSlots.base[k] = Int32(-done) }
                    gotSlots.base[k] = Swift.max(done, 0)
                }
            }
        }
        if let code = failures.first(where: { $0 != 0 }) { return (0, code) }
        var count = 0
        for k in 0 ..< pieces {
            count += got[k]
            if got[k] < Swift.min(piece, size - k * piece) { break }
        }
        return (count, 0)
    }
}
