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

    /// Whether `path` names something this reader should take: a directory, or a file named
    /// `.arrow`, `.arrows`, `.feather`, `.ipc` or `.parquet`.
    public static func handles(path: String) -> Bool {
        var st = stat()
        if stat(path, &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR { return true }
        let lower = path.lowercased()
        return [".arrow", ".arrows", ".feather", ".ipc", ".parquet"].contains { lower.hasSuffix($0) }
    }

    /// Decodes one input held in memory, choosing the reader by its magic bytes.
    /// - Parameters:
    ///   - file: names the input in errors.
    ///   - ticker: the symbol of every row when the input has no ticker column.
    public static func read(_ bytes: UnsafeRawBufferPointer, file: String, ticker: String? = nil) throws(InteropError) -> QuoteTable {
        var skipped: [InteropSkippedColumn] = []
        return try read(bytes, file: file, ticker: ticker, strict: false, skipped: &skipped)
    }

    /// `read(_:file:ticker:)`, saying which columns that are not quotes (strings other than the
    /// ticker, booleans, nested columns) were left out, or, with `strict`, refusing the file for
    /// the first of them.
    public static func read(_ bytes: UnsafeRawBufferPointer, file: String, ticker: String? = nil, strict: Bool,
                            skipped: inout [InteropSkippedColumn]) throws(InteropError) -> QuoteTable {
        let columns: ImportedColumns
        switch format(of: bytes) {
        case .arrowFile, .arrowStream: columns = try ArrowIPCReader.columns(bytes, file: file, ticker: ticker, strict: strict)
        case .parquet: columns = try ParquetReader.columns(bytes, file: file, ticker: ticker, strict: strict)
        case nil:
            if bytes.count < 8 { throw .truncated(file: file, offset: 0, needed: 8) }
            throw .unrecognizedFormat(file: file)
        }
        skipped += columns.skipped
        return try columns.assemble()
    }

    /// Reads a file, or every `.parquet`/`.arrow`/`.arrows` file under a directory (sorted by path,
    /// recursively, skipping names starting with `.` or `_`), merged as `QuoteTable.upsert` does.
    public static func read(path: String, ticker: String? = nil) throws(InteropError) -> QuoteTable {
        var skipped: [InteropSkippedColumn] = []
        return try read(path: path, ticker: ticker, strict: false, skipped: &skipped)
    }

    /// `read(path:ticker:)`, saying which columns that are not quotes were left out (see
    /// `read(_:file:ticker:strict:skipped:)`).
    public static func read(path: String, ticker: String? = nil, strict: Bool,
                            skipped: inout [InteropSkippedColumn]) throws(InteropError) -> QuoteTable {
        var st = stat()
        guard stat(path, &st) == 0 else { throw .io(file: path, operation: "open", errno: errno) }
        var found: [InteropSkippedColumn] = []
        defer { skipped += found }
        if (st.st_mode & S_IFMT) != S_IFDIR {
            return try withContents(of: path) { b throws(InteropError) in try read(b, file: path, ticker: ticker, strict: strict, skipped: &found) }
        }
        let files = try dataFiles(under: path)
        guard !files.isEmpty else { throw .missingColumn(file: path, column: "data file (.parquet, .arrow)", available: []) }
        var parts: [QuoteTable] = []
        for f in files {
            parts.append(try withContents(of: f) { b throws(InteropError) in try read(b, file: f, ticker: ticker, strict: strict, skipped: &found) })
        }
        var first = parts.removeFirst()
        if !parts.isEmpty { first.upsert(contentsOf: parts) }
        return first
    }

    /// The data files under `directory`, sorted, recursively.
    static func dataFiles(under directory: String) throws(InteropError) -> [String] {
        guard let dir = opendir(directory) else { throw .io(file: directory, operation: "open directory", errno: errno) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = DirectoryEntry.name(entry)
            if name.hasPrefix(".") || name.hasPrefix("_") { continue }
            names.append(name)
        }
        closedir(dir)
        var out: [String] = []
        for name in names.sorted() {
            let full = directory + "/" + name
            var st = stat()
            guard stat(full, &st) == 0 else { continue }
            if (st.st_mode & S_IFMT) == S_IFDIR {
                out.append(contentsOf: try dataFiles(under: full))
            } else if name.hasSuffix(".parquet") || name.hasSuffix(".arrow") || name.hasSuffix(".arrows") {
                out.append(full)
            }
        }
        return out
    }

    /// Calls `body` with the bytes of the file at `path` (memory-mapped when it is a regular file,
    /// else read whole, as for a pipe).
    public static func withContents<R>(of path: String, _ body: (UnsafeRawBufferPointer) throws(InteropError) -> R) throws(InteropError) -> R {
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
            let n = chunk.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress, $0.count) }
            if n < 0 {
                if errno == EINTR { continue }
                throw .io(file: path, operation: "read", errno: errno)
            }
            if n == 0 { break }
            bytes.append(contentsOf: chunk[0 ..< n])
        }
        return try withInteropBytes(bytes, body)
    }
}
