import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// Writes a table as a Delta Lake table (the Delta transaction protocol, reader version 1, writer
/// version 2, no table features): Parquet data files (zstd by default) under Hive partition
/// directories, and one JSON commit per export in `_delta_log/`. How engines read it:
/// docs/SCALING.md; ARCHITECTURE.md, Interop.
///
///     var writer = DeltaWriter(table: table)
///     writer.partitioning = .year
///     let result = try writer.write(to: "quotes_delta", mode: .append)   // result.version
///
/// The first write creates the table (version 0: `protocol`, `metaData`, `add`s). Later writes
/// need a mode: `append` adds files; `overwrite` removes the live files of exactly the partitions
/// the rows fall in (all files when the table has no partitions) and adds the new ones, in one
/// commit. Each `add` carries `stats` (numRecords, minValues, maxValues, nullCount; no min/max
/// for a column whose file holds NaN or ±infinity, which JSON cannot carry).
///
/// A commit is atomic: the actions go to a temporary in `_delta_log/` (its name starts with `.`,
/// so readers skip it), are fsynced, and `link(2)` gives them the version's 20-digit name, which
/// fails with EEXIST when another writer took that version first: the log is read again and the
/// commit retried at the next version (checking the table again), at most `retries` times. Then
/// the log directory is fsynced. Data files are written and fsynced before the commit, under
/// fresh UUID names created exclusively (never overwritten), so a crash at any moment leaves the
/// table at its last committed version, plus at most some files no version refers to.
/// Colonnade writers also take an exclusive lock (`.colonnade-delta.lock` beside the log); other
/// engines are kept apart by the put-if-absent link alone.
public struct DeltaWriter {
    /// What a write into an existing table does.
    public enum Mode: String, Sendable, CaseIterable {
        case append, overwrite
    }

    /// The outcome of a write.
    public struct Outcome: Sendable {
        /// The version committed.
        public var version: Int
        /// Data files added (paths relative to the table) and removed.
        public var added: [String]
        public var removed: Int
        public var rows: Int
    }

    public var table: QuoteTable
    /// Hive partitions (`year=2014/`, `year=2014/month=5/`); nil: none.
    public var partitioning: ParquetWriter.Partitioning?
    /// The data files' page compression.
    public var compression: ParquetWriter.Compression = .zstd(level: ZstdCompressor.fileDefaultLevel)
    public var rowGroupRows = 1 << 20
    /// Data files written at once (nil: one per core).
    public var threads: Int?
    /// Rows and bytes per row group written (for a progress display).
    public var progress: (@Sendable (_ rows: Int, _ bytes: Int) -> Void)?
    /// fsync data files, the commit and the log directory.
    public var durable = true
    /// Commits retried after another writer took the version.
    public var retries = 10
    /// Called at each step of a write ("data", "temporary", "linked", "synced"), for tests that stop
    /// a writer at a given point.
    public var step: ((String) -> Void)?

    public init(table: QuoteTable) {
        self.table = table
    }

    // MARK: Writing

    public func write(to directory: String, mode: Mode?) throws(DeltaError) -> Outcome {
        do throws(InteropError) {
            try ReplacementFile.makeDirectories(directory, durable: durable)
            try ReplacementFile.makeDirectories(DeltaTable.logDirectory(directory), durable: durable)
        } catch {
            throw .data(error)
        }
        let lock = try Self.lock(directory + "/.colonnade-delta.lock")
        defer {
            flock(lock, LOCK_UN)
            close(lock)
        }

        let schema = schemaFields()
        var existing = try currentSnapshot(directory)
        if let snapshot = existing {
            guard let mode else {
                throw .refused(
                    path: directory,
                    detail: "a Delta table is already there (version \(snapshot.version)); say whether to append to it or overwrite it")
            }
            try checkWritable(snapshot, mode: mode, schema: schema, path: directory)
        }

        // The data files, before any commit names them.
        var parquet = ParquetWriter(table: table)
        parquet.compression = compression
        parquet.rowGroupRows = rowGroupRows
        parquet.progress = progress
        parquet.threads = threads
        var parts: [(partition: ParquetWriter.Partition?, segments: [ParquetWriter.Segment])] = []
        do throws(InteropError) {
            if let partitioning {
                parts = try parquet.partitionSegments(by: partitioning, in: directory).map { ($0.partition, $0.segments) }
            } else if table.rowCount > 0 {
                parts = [(nil, ParquetWriter.segments(of: table, order: parquet.tickerOrder(), days: nil))]
            }
        } catch {
            throw .data(error)
        }
        let suffix =
            switch compression {
            case .none: ""
            case .snappy: ".snappy"
            case .zstd: ".zstd"
            case .lz4Raw: ".lz4raw"
            }
        var files: [(relative: String, segments: [ParquetWriter.Segment], partition: ParquetWriter.Partition?)] = []
        do throws(InteropError) {
            for part in parts {
                let folder = part.partition.map { $0.path + "/" } ?? ""
                if !folder.isEmpty { try ReplacementFile.makeDirectories(directory + "/" + folder.dropLast(), durable: durable) }
                files.append((folder + "part-00000-\(UUID().uuidString.lowercased())-c000\(suffix).parquet", part.segments, part.partition))
            }
        } catch {
            throw .data(error)
        }
        let sizes = try writeDataFiles(files.map { (directory + "/" + $0.relative, $0.segments) }, writer: parquet)
        step?("data")

        let now = Int64(Date().timeIntervalSince1970 * 1000)
        var adds: [String] = []
        for (i, f) in files.enumerated() {
            let values = f.partition?.values ?? []
            let stats = Self.stats(table, f.segments, schema: table.schema)
            adds.append(
                "{\"add\":{\"path\":\(Self.json(Self.encodePath(f.relative))),\"partitionValues\":\(Self.jsonObject(values)),"
                    + "\"size\":\(sizes[i]),\"modificationTime\":\(now),\"dataChange\":true,\"stats\":\(Self.json(stats))}}")
        }
        let partitionColumns = partitioning == nil ? [] : partitioning == .year ? ["year"] : ["year", "month"]
        let touched = Set(files.compactMap { f in f.partition.map { Self.partitionKey($0.values) } })

        // Commit: at the next version; again after another writer takes it.
        var attempt = 0
        while true {
            let version = (existing?.version ?? -1) + 1
            var lines: [String] = []
            let operation = existing == nil ? "CREATE TABLE" : "WRITE"
            let modeName = existing == nil ? "ErrorIfExists" : mode == .overwrite ? "Overwrite" : "Append"
            let partitionBy = "[" + partitionColumns.map { "\"\($0)\"" }.joined(separator: ",") + "]"
            lines.append(
                "{\"commitInfo\":{\"timestamp\":\(now),\"operation\":\(Self.json(operation)),\"operationParameters\":{\"mode\":\(Self.json(modeName)),"
                    + "\"partitionBy\":\(Self.json(partitionBy))},\"engineInfo\":\"Colonnade\",\"isBlindAppend\":\(mode != .overwrite)}}")
            var removed = 0
            if let snapshot = existing {
                if mode == .overwrite {
                    for f in snapshot.files {
                        // Unpartitioned: every file; partitioned: the files of the partitions written.
                        let key = Self.partitionKey(snapshot.partitionColumns.map { ($0, f.partitionValues[$0].flatMap { $0 } ?? "") })
                        guard snapshot.partitionColumns.isEmpty || touched.contains(key) else { continue }
                        let values = snapshot.partitionColumns.map { ($0, f.partitionValues[$0].flatMap { $0 } ?? "") }
                        lines.append(
                            "{\"remove\":{\"path\":\(Self.json(Self.encodePath(f.path))),\"deletionTimestamp\":\(now),\"dataChange\":true,"
                                + "\"extendedFileMetadata\":true,\"partitionValues\":\(Self.jsonObject(values)),\"size\":\(f.size)}}")
                        removed += 1
                    }
                }
            } else {
                lines.append("{\"protocol\":{\"minReaderVersion\":1,\"minWriterVersion\":2}}")
                let schemaString = Self.schemaString(schema + partitionColumns.map { ($0, "integer", true) })
                lines.append(
                    "{\"metaData\":{\"id\":\(Self.json(UUID().uuidString.lowercased())),\"format\":{\"provider\":\"parquet\",\"options\":{}},"
                        + "\"schemaString\":\(Self.json(schemaString)),\"partitionColumns\":\(partitionBy),\"configuration\":{},\"createdTime\":\(now)}}"
                )
            }
            lines += adds
            let text = lines.joined(separator: "\n") + "\n"
            if try commit(text, version: version, directory: directory) {
                return Outcome(version: version, added: files.map(\.relative), removed: removed, rows: table.rowCount)
            }
            attempt += 1
            guard attempt <= retries else { throw .conflict(path: directory, version: version) }
            // Another writer won: read what it committed and check the table again.
            existing = try currentSnapshot(directory)
            if let snapshot = existing, let mode { try checkWritable(snapshot, mode: mode, schema: schema, path: directory) }
        }
    }

    /// The latest snapshot, or nil for a directory without commits.
    func currentSnapshot(_ directory: String) throws(DeltaError) -> DeltaTable.Snapshot? {
        guard !(try DeltaTable.versions(at: directory)).isEmpty else { return nil }
        return try DeltaTable.snapshot(at: directory)
    }

    /// Refuses a table this writer cannot honour.
    func checkWritable(_ snapshot: DeltaTable.Snapshot, mode: Mode, schema: [(String, String, Bool)], path: String) throws(DeltaError) {
        if snapshot.minWriterVersion > 2 || !snapshot.writerFeatures.isEmpty || !snapshot.readerFeatures.isEmpty {
            let features = (snapshot.readerFeatures + snapshot.writerFeatures)
            throw .unsupportedProtocol(
                path: path,
                detail: "the table needs Delta writer version \(snapshot.minWriterVersion)"
                    + (features.isEmpty ? "" : " with features \(Set(features).sorted().joined(separator: ", "))")
                    + "; Colonnade writes writer version 2 tables without features")
        }
        try DeltaTable.checkReadable(snapshot, path: path)
        if mode == .overwrite && snapshot.configuration["delta.appendOnly"]?.lowercased() == "true" {
            throw .refused(path: path, detail: "the table is append-only (delta.appendOnly=true); overwriting would remove files")
        }
        if snapshot.schemaString.contains("delta.invariants") {
            throw .refused(path: path, detail: "the table has column invariants (delta.invariants), which Colonnade does not check")
        }
        let expectedPartitions = partitioning == nil ? [] : partitioning == .year ? ["year"] : ["year", "month"]
        guard snapshot.partitionColumns == expectedPartitions else {
            throw .refused(
                path: path,
                detail: "the table is partitioned by [\(snapshot.partitionColumns.joined(separator: ", "))], "
                    + "this export by [\(expectedPartitions.joined(separator: ", "))]")
        }
        let theirs = Self.fields(ofSchemaString: snapshot.schemaString).filter { !snapshot.partitionColumns.contains($0.0) }
        let ours = schema.map { ($0.0, $0.1) }
        guard theirs.count == ours.count, zip(theirs, ours).allSatisfy({ $0.0 == $1.0 && $0.1 == $1.1 }) else {
            throw .refused(
                path: path,
                detail: "the table's columns (\(theirs.map { "\($0.0) \($0.1)" }.joined(separator: ", "))) "
                    + "differ from this export's (\(ours.map { "\($0.0) \($0.1)" }.joined(separator: ", ")))")
        }
    }

    /// Writes the commit's temporary and links it to the version's name.
    /// - Returns: false when the version already exists (another writer won).
    func commit(_ text: String, version: Int, directory: String) throws(DeltaError) -> Bool {
        let log = DeltaTable.logDirectory(directory)
        let final = log + "/" + DeltaTable.commitName(version)
        let temporary = log + "/.\(DeltaTable.commitName(version)).\(getpid()).\(UInt32.random(in: 0 ... .max)).tmp"
        let fd = open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(file: temporary, operation: "create", errno: errno) }
        defer { unlink(temporary) }
        do throws(InteropError) {
            let out = try DescriptorInteropOutput(fd: fd, name: temporary)
            try out.write(Array(text.utf8))
            try out.flush()
        } catch {
            close(fd)
            throw .data(error)
        }
        if durable && fsync(fd) != 0 {
            let e = errno
            close(fd)
            throw .io(file: temporary, operation: "fsync", errno: e)
        }
        close(fd)
        step?("temporary")
        if link(temporary, final) != 0 {
            if errno == EEXIST { return false }
            throw .io(file: final, operation: "link", errno: errno)
        }
        step?("linked")
        if durable { Self.syncDirectory(log) }
        step?("synced")
        return true
    }

    /// Writes each data file, created exclusively under its new name and fsynced, several at once.
    /// - Returns: their sizes.
    func writeDataFiles(_ files: [(path: String, segments: [ParquetWriter.Segment])], writer: ParquetWriter) throws(DeltaError) -> [Int] {
        guard !files.isEmpty else { return [] }
        var inner = writer
        if files.count > 1 { inner.columnThreads = 1 }
        let results = UnsafeMutablePointer<Result<Int, DeltaError>?>.allocate(capacity: files.count)
        results.initialize(repeating: nil, count: files.count)
        defer {
            results.deinitialize(count: files.count)
            results.deallocate()
        }
        let shared = SharedPointer(base: results)
        let durable = durable
        forEachChunk(files.count, threads: threads ?? QueryOptions.availableCores) { i, _ in
            let path = files[i].path
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
            guard fd >= 0 else {
                // Safe: worker i alone writes slot i.
                shared.base[i] = .failure(.io(file: path, operation: "create", errno: errno))
                return
            }
            defer { close(fd) }
            do throws(InteropError) {
                let out = try DescriptorInteropOutput(fd: fd, name: path)
                try inner.write(segments: files[i].segments, to: out)
                try out.flush()
                if durable && fsync(fd) != 0 { throw .io(file: path, operation: "fsync", errno: errno) }
                shared.base[i] = .success(out.position)
            } catch {
                unlink(path)
                shared.base[i] = .failure(.data(error))
            }
        }
        var sizes: [Int] = []
        for i in files.indices {
            switch results[i] {
            case .success(let n): sizes.append(n)
            case .failure(let e): throw e
            case nil: throw .io(file: files[i].path, operation: "write", errno: EIO)
            }
        }
        if durable {
            for dir in Set(files.map { FileTarget.directory(of: $0.path) }) { Self.syncDirectory(dir) }
        }
        return sizes
    }

    static func lock(_ path: String) throws(DeltaError) -> Int32 {
        let fd = SystemCall.retryingOnInterrupt { open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o644) }
        guard fd >= 0 else { throw .io(file: path, operation: "open", errno: errno) }
        if SystemCall.retryingOnInterrupt({ flock(fd, LOCK_EX) }) != 0 {
            let e = errno
            close(fd)
            throw .io(file: path, operation: "lock", errno: e)
        }
        return fd
    }

    static func syncDirectory(_ path: String) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        fsync(fd)
        close(fd)
    }

    // MARK: Schema and stats

    /// (name, Delta type, nullable) of the data files' columns.
    func schemaFields() -> [(String, String, Bool)] {
        [("ticker", "string", false), ("date", "date", false)]
            + table.schema.map { d in
                let type =
                    switch d.type {
                    case .int32: "integer"
                    case .int64: "long"
                    case .float32: "float"
                    case .float64: "double"
                    }
                return (d.identifier, type, true)
            }
    }

    static func schemaString(_ fields: [(String, String, Bool)]) -> String {
        "{\"type\":\"struct\",\"fields\":["
            + fields.map { f in
                "{\"name\":\(json(f.0)),\"type\":\(json(f.1)),\"nullable\":\(f.2),\"metadata\":{}}"
            }.joined(separator: ",") + "]}"
    }

    /// (name, type) of a schema string's top-level fields.
    static func fields(ofSchemaString text: String) -> [(String, String)] {
        guard let d = text.data(using: .utf8), let o = try? JSONSerialization.jsonObject(with: d) as? [String: Any],
            let fields = o["fields"] as? [[String: Any]]
        else { return [] }
        return fields.map { ($0["name"] as? String ?? "", $0["type"] as? String ?? "?") }
    }

    /// The `stats` JSON of the rows `segments` (the ticker, date and every value column).
    static func stats(_ table: QuoteTable, _ segments: [ParquetWriter.Segment], schema: [ColumnDescriptor]) -> String {
        let rows = segments.reduce(0) { $0 + $1.rows.count }
        var minimums: [(String, String)] = [], maximums: [(String, String)] = [], nulls: [(String, String)] = []
        if let first = segments.first, let last = segments.last {
            minimums.append(("ticker", json(table.tickers[first.ticker].symbol)))
            maximums.append(("ticker", json(table.tickers[last.ticker].symbol)))
            var lo = Int32.max, hi = Int32.min
            table.dates.withUnsafeBufferPointer { d in
                for s in segments {
                    lo = min(lo, d[s.rows.lowerBound])
                    hi = max(hi, d[s.rows.upperBound - 1])
                }
            }
            minimums.append(("date", json(Day(daysSinceEpoch: lo).description)))
            maximums.append(("date", json(Day(daysSinceEpoch: hi).description)))
        }
        nulls.append(("ticker", "0"))
        nulls.append(("date", "0"))
        for (d, column) in zip(schema, table.columns) {
            let s: (min: String?, max: String?, nulls: Int) =
                switch column {
                case .int32(let c): columnStats(c, segments)
                case .int64(let c): columnStats(c, segments)
                case .float32(let c): columnStats(c, segments)
                case .float64(let c): columnStats(c, segments)
                }
            if let lo = s.min, let hi = s.max {
                minimums.append((d.identifier, lo))
                maximums.append((d.identifier, hi))
            }
            nulls.append((d.identifier, String(s.nulls)))
        }
        func object(_ pairs: [(String, String)]) -> String { "{" + pairs.map { "\(json($0.0)):\($0.1)" }.joined(separator: ",") + "}" }
        return "{\"numRecords\":\(rows),\"minValues\":\(object(minimums)),\"maxValues\":\(object(maximums)),\"nullCount\":\(object(nulls))}"
    }

    /// Min and max as JSON numbers (nil when there is no non-null value, or a NaN or ±infinity),
    /// and the null count, of `column`'s rows in `segments`.
    static func columnStats<T: ColumnElement>(
        _ column: Column<T>, _ segments: [ParquetWriter.Segment]
    ) -> (min: String?, max: String?, nulls: Int) {
        var lo = T.nullPlaceholder, hi = T.nullPlaceholder
        var any = false, unrepresentable = false
        var nulls = 0
        /// One non-null value: NaN and ±infinity cannot be JSON numbers, so they drop min and max.
        func observe(_ x: T) {
            if !x.doubleValue.isFinite {
                unrepresentable = true
            } else if !any {
                lo = x
                hi = x
                any = true
            } else {
                lo = x < lo ? x : lo
                hi = x > hi ? x : hi
            }
        }
        column.withUnsafeBufferPointer { v in
            for s in segments {
                let valid = column.validity?.nonzeroBitCount(in: s.rows) ?? s.rows.count
                nulls += s.rows.count - valid
                if valid < s.rows.count {
                    for r in s.rows where !column.isNull(r) { observe(v[r]) }
                } else {
                    for r in s.rows { observe(v[r]) }
                }
            }
        }
        guard any, !unrepresentable else { return (nil, nil, nulls) }
        return (jsonNumber(lo), jsonNumber(hi), nulls)
    }

    static func jsonNumber<T: ColumnElement>(_ v: T) -> String {
        if let d = v as? Double { return d == d.rounded() && abs(d) < 1e15 ? String(Int64(d)) : "\(d)" }
        if let f = v as? Float { return f == f.rounded() && abs(f) < 1e7 ? String(Int64(f)) : "\(f)" }
        return "\(v)"
    }

    // MARK: JSON

    /// `text` as a JSON string.
    static func json(_ text: String) -> String {
        var out = "\""
        for u in text.unicodeScalars {
            switch u {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            default:
                if u.value < 0x20 {
                    let hex = String(u.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(u)
                }
            }
        }
        return out + "\""
    }

    static func jsonObject(_ pairs: [(String, String)]) -> String {
        "{" + pairs.map { "\(json($0.0)):\(json($0.1))" }.joined(separator: ",") + "}"
    }

    static func partitionKey(_ pairs: [(String, String)]) -> String {
        pairs.map { "\($0.0)=\(Int($0.1).map(String.init) ?? $0.1)" }.joined(separator: "/")
    }

    /// A relative path as a URI path (percent-encoding what is not a plain path character).
    static func encodePath(_ path: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "/-_.=~")
        return path.addingPercentEncoding(withAllowedCharacters: allowed) ?? path
    }
}
