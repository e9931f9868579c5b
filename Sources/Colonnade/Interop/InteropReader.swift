#if canImport(Glibc)
import Glibc
#endif

/// Reads Arrow IPC and Parquet inputs — a file, a stream, or a directory of them (the Hive layout
/// `export --format parquet --partition-by year` writes) — into one table.
///
///     let table = try InteropReader.read(path: "quotes/")          // every year=…/part-*.parquet
///     let same = try InteropReader.read(bytes, file: "q.arrows")   // by magic: ARROW1, stream, PAR1
public enum InteropReader {
    /// The formats this reader knows.
    public enum Format: Sendable, Equatable {
        case arrowFile
        case arrowStream
        case parquet
    }

    /// The format of `bytes` by its first bytes, or nil.
    public static func format(of bytes: UnsafeRawBufferPointer) -> Format? {
        if bytes.count >= 6 && bytes.prefix(6).elementsEqual(ArrowIPCFormat.magic) { return .arrowFile }
        if bytes.count >= 4 && bytes.prefix(4).elementsEqual(ParquetFormat.magic) { return .parquet }
        if bytes.count >= 8 && bytes.prefix(4).elementsEqual([0xFF, 0xFF, 0xFF, 0xFF]) { return .arrowStream }
        return nil
    }

    /// Whether `path` names something this reader should take: a directory, a file named
    /// `.arrow`, `.arrows`, `.feather`, `.ipc` or `.parquet`, or a zip whose files are all such
    /// files (a zip of anything else is a zip of Data Link responses).
    public static func handles(path: String) -> Bool {
        var st = stat()
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { return true }
        let lower = path.lowercased()
        if HiveDataset.dataExtensions.contains(where: lower.hasSuffix) { return true }
        guard lower.hasSuffix(".zip"), let archive = try? ZipArchive(contentsOfFile: path) else { return false }
        // Data files, and zips inside (refused by the reader, saying so).
        let files = archive.members.filter { !$0.isDirectory && !isHiddenMember($0.name) }
        let data = dataMembers(of: archive).count
        return data > 0
            && files.allSatisfy { m in
                let lower = m.name.lowercased()
                return lower.hasSuffix(".zip") || HiveDataset.dataExtensions.contains(where: lower.hasSuffix)
            }
    }

    /// A member name with a path component starting with `.` or `_` (`__MACOSX/`, `_SUCCESS`,
    /// `.part-0.crc`): not data.
    static func isHiddenMember(_ name: String) -> Bool {
        name.split(separator: "/").contains { $0.hasPrefix(".") || $0.hasPrefix("_") }
    }

    /// The members of `archive` that are data files by name, in the archive's order.
    static func dataMembers(of archive: ZipArchive) -> [ZipMember] {
        archive.members.filter { m in
            !m.isDirectory && !isHiddenMember(m.name) && HiveDataset.dataExtensions.contains(where: m.name.lowercased().hasSuffix)
        }
    }

    /// Decodes one input held in memory, choosing the reader by its magic bytes.
    /// - Parameters:
    ///   - bytes: the whole input, in memory.
    ///   - file: names the input in errors.
    ///   - ticker: the symbol of every row when the input has no ticker column.
    ///   - threads: how many threads decode a Parquet file's column chunks at once (the table is
    ///     the same for any count).
    public static func read(
        _ bytes: UnsafeRawBufferPointer, file: String, ticker: String? = nil, threads: Int = 1
    ) throws(InteropError) -> QuoteTable {
        var skipped: [InteropSkippedColumn] = []
        return try read(bytes, file: file, ticker: ticker, strict: false, skipped: &skipped, threads: threads)
    }

    /// `read(_:file:ticker:)`, saying which columns that are not quotes (strings other than the
    /// ticker, booleans, nested columns) were left out, or, with `strict`, refusing the file for
    /// the first of them.
    public static func read(
        _ bytes: UnsafeRawBufferPointer, file: String, ticker: String? = nil, strict: Bool,
        skipped: inout [InteropSkippedColumn], threads: Int = 1
    ) throws(InteropError) -> QuoteTable {
        let columns = try self.columns(bytes, file: file, ticker: ticker, strict: strict, threads: threads)
        skipped += columns.skipped
        return try columns.assemble()
    }

    /// The columns of one input held in memory, by its magic bytes.
    static func columns(
        _ bytes: UnsafeRawBufferPointer, file: String, ticker: String?, strict: Bool, threads: Int = 1
    ) throws(InteropError) -> ImportedColumns {
        switch format(of: bytes) {
        case .arrowFile, .arrowStream:
            return try ArrowIPCReader.columns(bytes, file: file, ticker: ticker, strict: strict, threads: threads)
        case .parquet: return try ParquetReader.columns(bytes, file: file, ticker: ticker, strict: strict, threads: threads)
        case nil:
            if bytes.count < 8 { throw .truncated(file: file, offset: 0, needed: 8) }
            throw .unrecognizedFormat(file: file)
        }
    }

    /// Reads a file, a dataset directory, or a zip of Parquet and Arrow files (see `HiveDataset`:
    /// non-data files ignored, Hive partition keys applied) into one table.
    /// `threads`: how many threads decode a Parquet file's column chunks at once (the table is
    /// the same for any count).
    public static func read(path: String, ticker: String? = nil, threads: Int = 1) throws(InteropError) -> QuoteTable {
        var skipped: [InteropSkippedColumn] = []
        return try read(path: path, ticker: ticker, strict: false, skipped: &skipped, threads: threads)
    }

    /// `read(path:ticker:)`, saying which columns that are not quotes were left out (see
    /// `read(_:file:ticker:strict:skipped:)`).
    public static func read(
        path: String, ticker: String? = nil, strict: Bool,
        skipped: inout [InteropSkippedColumn], threads: Int = 1
    ) throws(InteropError) -> QuoteTable {
        var st = stat()
        guard stat(path, &st) == 0 else { throw .io(file: path, operation: "open", errno: errno) }
        var found: [InteropSkippedColumn] = []
        defer { skipped += found }
        if (st.st_mode & S_IFMT) == S_IFDIR {
            try HiveDataset.refuseDeltaTable(at: path)
            let parts = try HiveDataset.parts(under: path)
            return try HiveDataset.read(parts, name: path, ticker: ticker, strict: strict, skipped: &found, threads: threads) {
                part, body throws(InteropError) in
                try withContents(of: part.path, body)
            }
        }
        if path.lowercased().hasSuffix(".zip") { return try readZip(path: path, ticker: ticker, strict: strict, skipped: &found) }
        return try withContents(of: path) { b throws(InteropError) in
            try read(b, file: path, ticker: ticker, strict: strict, skipped: &found, threads: threads)
        }
    }

    /// A zip of Parquet and Arrow files: each member read like a file of a dataset directory
    /// (its directories' `key=value` names are partition keys). A member that is itself a zip is
    /// refused, saying so.
    static func readZip(
        path: String, ticker: String?, strict: Bool, skipped: inout [InteropSkippedColumn]
    ) throws(InteropError) -> QuoteTable {
        let archive: ZipArchive
        do throws(ZipError) { archive = try ZipArchive(contentsOfFile: path) } catch { throw .archive(error) }
        return try readZip(archive, path: path, ticker: ticker, strict: strict, skipped: &skipped)
    }

    /// `readZip(path:…)` of an archive already open (`path` names it in errors); the fuzz
    /// target's entry point.
    static func readZip(
        _ archive: ZipArchive, path: String, ticker: String?, strict: Bool,
        skipped: inout [InteropSkippedColumn]
    ) throws(InteropError) -> QuoteTable {
        if let inner = archive.members.first(where: {
            !$0.isDirectory && !isHiddenMember($0.name) && $0.name.lowercased().hasSuffix(".zip")
        }) {
            throw .malformed(
                file: "\(path):\(inner.name)", offset: inner.localHeaderOffset,
                detail: "a zip archive inside the zip (unzip the outer one first)")
        }
        let parts = dataMembers(of: archive).map { m in
            let directories = m.name.split(separator: "/").dropLast()
            return HiveDataset.Part(
                path: m.name, label: "\(path):\(m.name)", keys: directories.compactMap { HiveDataset.partitionKey(String($0)) })
        }
        let members = Dictionary(dataMembers(of: archive).map { ($0.name, $0) }, uniquingKeysWith: { a, _ in a })
        return try HiveDataset.read(parts, name: path, ticker: ticker, strict: strict, skipped: &skipped) {
            part, body throws(InteropError) in
            guard let member = members[part.path] else { throw .io(file: part.label, operation: "open", errno: ENOENT) }
            let bytes: [UInt8]
            do throws(ZipError) { bytes = try archive.extract(member) } catch { throw .archive(error) }
            let nested = bytes.withUnsafeBytes { ZipArchive.looksLikeZip($0) }
            if nested { throw .malformed(file: part.label, offset: 0, detail: "a zip archive inside the zip (unzip the outer one first)") }
            return try withInteropBytes(bytes, body)
        }
    }

    /// Calls `body` with the bytes of the file at `path` (memory-mapped when it is a regular file,
    /// else read whole, as for a pipe).
    public static func withContents<R>(
        of path: String, _ body: (UnsafeRawBufferPointer) throws(InteropError) -> R
    ) throws(InteropError) -> R {
        let fd = path == "-" ? STDIN_FILENO : open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { throw .io(file: path, operation: "open", errno: errno) }
        defer { if path != "-" { close(fd) } }
        var st = stat()
        if fstat(fd, &st) == 0 && (st.st_mode & S_IFMT) == S_IFREG && st.st_size > 0 {
            let size = Int(st.st_size)
            guard let p = mmap(nil, size, PROT_READ, MAP_PRIVATE, fd, 0), p != MAP_FAILED else {
                throw .io(file: path, operation: "mmap", errno: errno)
            }
            defer { munmap(p, size) }
            return try body(UnsafeRawBufferPointer(start: p, count: size))
        }
        var bytes: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1 << 20)
        while true {
            let n = chunk.withUnsafeMutableBytes { b in SystemCall.retryingOnInterrupt { Glibc.read(fd, b.baseAddress, b.count) } }
            if n < 0 { throw .io(file: path, operation: "read", errno: errno) }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0 ..< n])
        }
        return try withInteropBytes(bytes, body)
    }
}
