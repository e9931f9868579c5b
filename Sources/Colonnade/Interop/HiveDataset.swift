#if canImport(Glibc)
import Glibc
#endif

/// A dataset of Parquet or Arrow files as one table: a directory written by Spark, DuckDB,
/// pyarrow, Polars or Colonnade's own `export --partition-by`, or a zip of such files.
///
///     quotes/_SUCCESS                                       ignored (as `.crc`, `_metadata`, …)
///     quotes/ticker=AAPL/part-00000-….snappy.parquet       ticker AAPL (the files lack the column)
///     quotes/year=2014/part-0.parquet                       dates checked to lie in 2014
///
/// Files are the ones named `.parquet`, `.arrow`, `.arrows`, `.feather` or `.ipc`, and files
/// without such a name that begin with Parquet's or Arrow's magic; names beginning with `.` or
/// `_` are not data (Spark's `_SUCCESS`, checksums `.part-….crc`, `_delta_log`). Hive partition
/// keys (`key=value` directories, values percent-decoded, `__HIVE_DEFAULT_PARTITION__` null):
/// `ticker=`/`symbol=` is the ticker of the files' rows when they lack the column (and must agree
/// when they have it); `year=`, `month=` (`7` or `2014-07`) and `date=` are checked against each
/// row's date (a disagreement is an error) and not stored, so a partitioned export imports back
/// exactly; any other key is a column that is not a quote (skipped with a note, refused when
/// strict). The files' rows form one table: two rows of one ticker on one date are an error,
/// as within one file.
enum HiveDataset {
    /// One data file of the dataset and the partition keys of its directories.
    struct Part {
        /// The path to open (for a zip member, its name in the archive).
        var path: String
        /// The name errors give it (a zip member's: `archive.zip:member`).
        var label: String
        /// The `key=value` directories above it, outermost first; a nil value is null.
        var keys: [(key: String, value: String?)]
    }

    /// The deepest directory walked.
    static let maximumDepth = 64
    /// The data file extensions.
    static let dataExtensions = [".parquet", ".arrow", ".arrows", ".feather", ".ipc"]

    /// Refuses a directory that holds a Delta Lake table (`_delta_log/`): its data files are the
    /// ones its log lists, not every file there. (The place a Delta reader takes over.)
    static func refuseDeltaTable(at directory: String) throws(InteropError) {
        var st = stat()
        if stat(directory + "/_delta_log", &st) == 0 && (st.st_mode & S_IFMT) == S_IFDIR {
            throw .deltaTable(directory: directory)
        }
    }

    /// The data files under `directory`, sorted by path, with their partition keys.
    static func parts(under directory: String) throws(InteropError) -> [Part] {
        var out: [Part] = []
        var visited = Set<[UInt64]>()
        try walk(directory, relative: "", keys: [], depth: 0, visited: &visited, into: &out)
        return out
    }

    private static func walk(
        _ directory: String, relative: String, keys: [(key: String, value: String?)], depth: Int,
        visited: inout Set<[UInt64]>, into out: inout [Part]
    ) throws(InteropError) {
        var st = stat()
        guard stat(directory, &st) == 0 else { throw .io(file: directory, operation: "open directory", errno: errno) }
        // A symbolic link back up the tree is walked once.
        guard visited.insert([UInt64(st.st_dev), UInt64(st.st_ino)]).inserted else { return }
        guard depth <= maximumDepth else {
            throw .malformed(file: directory, offset: 0, detail: "directories nested more than \(maximumDepth) levels deep")
        }
        guard let dir = opendir(directory) else { throw .io(file: directory, operation: "open directory", errno: errno) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = DirectoryEntry.name(entry)
            if name.hasPrefix(".") || name.hasPrefix("_") { continue }
            names.append(name)
        }
        closedir(dir)
        for name in names.sorted() {
            let full = directory + "/" + name
            guard stat(full, &st) == 0 else { continue }
            if (st.st_mode & S_IFMT) == S_IFDIR {
                try walk(
                    full, relative: relative + name + "/", keys: keys + partitionKey(name).map { [$0] }.orEmpty,
                    depth: depth + 1, visited: &visited, into: &out)
            } else if (st.st_mode & S_IFMT) == S_IFREG && isDataFile(name: name, path: full) {
                out.append(Part(path: full, label: full, keys: keys))
            }
        }
    }

    /// Whether a file is data: by its name, else by its first bytes.
    static func isDataFile(name: String, path: String) -> Bool {
        let lower = name.lowercased()
        if dataExtensions.contains(where: lower.hasSuffix) { return true }
        // Hive and Spark also write data files without an extension (`000000_0`, `part-00000`).
        let fd = open(path, O_RDONLY | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 8)
        let n = head.withUnsafeMutableBytes { SystemCall.readFully(fd, $0.baseAddress!, 8) }
        guard n == 8 else { return false }
        return head.withUnsafeBytes { InteropReader.format(of: $0) } != nil
    }

    /// The key and value of a `key=value` directory name (percent-decoded; Hive's
    /// `__HIVE_DEFAULT_PARTITION__` is a null value), or nil for another name.
    static func partitionKey(_ name: String) -> (key: String, value: String?)? {
        guard let eq = name.firstIndex(of: "="), eq != name.startIndex else { return nil }
        let key = percentDecoded(String(name[..<eq]))
        let raw = String(name[name.index(after: eq)...])
        return (key, raw == "__HIVE_DEFAULT_PARTITION__" ? nil : percentDecoded(raw))
    }

    /// `%XX` escapes decoded (as Hive, Spark and pyarrow write them); a `%` not followed by two
    /// hex digits stays as it is.
    static func percentDecoded(_ s: String) -> String {
        guard s.utf8.contains(UInt8(ascii: "%")) else { return s }
        let b = Array(s.utf8)
        var out: [UInt8] = []
        out.reserveCapacity(b.count)
        func hex(_ c: UInt8) -> UInt8? {
            switch c {
            case 48 ... 57: c - 48
            case 65 ... 70: c - 55
            case 97 ... 102: c - 87
            default: nil
            }
        }
        var i = 0
        while i < b.count {
            if b[i] == UInt8(ascii: "%"), i + 2 < b.count, let h = hex(b[i + 1]), let l = hex(b[i + 2]) {
                out.append(h << 4 | l)
                i += 3
            } else {
                out.append(b[i])
                i += 1
            }
        }
        return String(decoding: out, as: UTF8.self)
    }

    /// What a partition key means.
    enum KeyRole {
        case ticker, year, month, date
        case other
    }

    static func role(of key: String) -> KeyRole {
        switch ColumnDescriptor.identifier(for: key) {
        case "ticker", "symbol": .ticker
        case "year": .year
        case "month": .month
        case "date": .date
        default: .other
        }
    }

    /// Reads the parts' bytes (`contents(part, body)` calls `body` with them) into one table.
    static func read(
        _ parts: [Part], name: String, ticker: String?, strict: Bool, skipped: inout [InteropSkippedColumn], threads: Int = 1,
        contents: (Part, (UnsafeRawBufferPointer) throws(InteropError) -> ImportedColumns) throws(InteropError) -> ImportedColumns
    )
        throws(InteropError) -> QuoteTable
    {
        guard !parts.isEmpty else { throw .missingColumn(file: name, column: "data file (.parquet, .arrow)", available: []) }
        var decoded: [ImportedColumns] = []
        var notedKeys = Set<String>()
        for part in parts {
            let partTicker = part.keys.last { role(of: $0.key) == .ticker }
            if let partTicker, partTicker.value == nil {
                throw .nullKey(
                    file: part.label, column: "\(partTicker.key) (the partition key \(partTicker.key)=__HIVE_DEFAULT_PARTITION__)", row: 0)
            }
            let symbol = partTicker?.value ?? ticker
            var columns = try contents(part) { bytes throws(InteropError) in
                try InteropReader.columns(bytes, file: part.label, ticker: symbol, strict: strict, threads: threads)
            }
            try check(&columns, part: part, strict: strict)
            for (key, _) in part.keys where role(of: key) == .other && notedKeys.insert(key).inserted {
                columns.skipped.append(
                    InteropSkippedColumn(file: name, column: key, type: "a partition key, which is not a ticker, a date or a number"))
            }
            skipped += columns.skipped
            columns.skipped.removeAll { $0.kind == .notAQuote }
            decoded.append(columns)
        }
        return try ImportedColumns.joining(decoded, name: name).assemble()
    }

    /// Checks a part's rows against its partition keys.
    static func check(_ columns: inout ImportedColumns, part: Part, strict: Bool) throws(InteropError) {
        for (key, value) in part.keys {
            let keyRole = role(of: key)
            func disagree(_ row: Int, _ what: String) -> InteropError {
                .partitionMismatch(
                    file: part.label, key: key, value: value ?? "__HIVE_DEFAULT_PARTITION__", detail: what + " in row \(row)")
            }
            switch keyRole {
            case .other:
                if strict {
                    throw .unsupportedColumn(
                        file: part.label, column: key, type: "a partition key, which is not a ticker, a date or a number")
                }
            case .ticker:
                // The files lack the column (Spark's partitionBy("ticker")), or agree with the key.
                if let value, let i = columns.symbols.firstIndex(where: { $0 != value }),
                    let row = columns.rowTickers.firstIndex(of: Int32(i))
                {
                    throw disagree(row, "ticker \(columns.symbols[i])")
                }
            case .year, .month, .date:
                guard columns.dates.count > 0 else { continue }
                guard let value else { throw disagree(0, "a date") }
                let accepts: (Day) -> Bool
                switch keyRole {
                case .year:
                    guard let y = Int(value) else { throw disagree(0, "'\(value)' is not a year") }
                    accepts = { $0.components.year == y }
                case .month:
                    if let m = Int(value) {
                        let year = part.keys.last { role(of: $0.key) == .year }?.value.flatMap { Int($0) }
                        accepts = { $0.components.month == m && (year == nil || $0.components.year == year) }
                    } else {
                        let pieces = value.split(separator: "-")
                        guard pieces.count == 2, let y = Int(pieces[0]), let m = Int(pieces[1]) else {
                            throw disagree(0, "'\(value)' is not a month (7 or 2014-07)")
                        }
                        accepts = { $0.components.year == y && $0.components.month == m }
                    }
                default:
                    guard let d = Day(value) else { throw disagree(0, "'\(value)' is not a date (YYYY-MM-DD)") }
                    accepts = { $0 == d }
                }
                for r in 0 ..< columns.dates.count {
                    let day = Day(daysSinceEpoch: columns.dates[r])
                    if !accepts(day) { throw disagree(r, "date \(Day.format(day: columns.dates[r]))") }
                }
            }
        }
    }
}

extension Optional where Wrapped: RangeReplaceableCollection {
    fileprivate var orEmpty: Wrapped { self ?? Wrapped() }
}
