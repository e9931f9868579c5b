import Foundation

/// A Delta Lake table read through its transaction log (the Delta protocol's `_delta_log/`, JSON
/// commits `00000000000000000000.json`, …): which data files make up a version, never a listing
/// of the directory (which holds removed files too). ARCHITECTURE.md, Interop.
///
///     let files = try DeltaTable.files(at: "quotes_delta", version: 3)   // the Parquet files of version 3
///     let table = try DeltaTable.read(at: "quotes_delta")                // the current version as a QuoteTable
///
/// Reader protocol version 1 only: a table that needs more (column mapping, deletion vectors,
/// reader features) is refused, naming what it needs. Commits are replayed from version 0, so a
/// log whose early commits were cleaned up after a checkpoint is refused too (Colonnade reads no
/// checkpoints).
public enum DeltaTable {
    /// One data file of a version.
    public struct File: Sendable, Equatable {
        /// The path relative to the table directory (percent-decoded).
        public var path: String
        /// Partition column → value (nil: null).
        public var partitionValues: [String: String?]
        public var size: Int
        /// The `numRecords` of its stats, when it has them.
        public var records: Int?
    }

    /// The state of the table at one version.
    public struct Snapshot: Sendable {
        public var version: Int
        public var minReaderVersion = 1
        public var minWriterVersion = 2
        public var readerFeatures: [String] = []
        public var writerFeatures: [String] = []
        public var tableID = ""
        public var schemaString = ""
        public var partitionColumns: [String] = []
        public var configuration: [String: String] = [:]
        /// The live files, by path.
        public var files: [File] = []
    }

    /// The log directory of the table at `directory`.
    static func logDirectory(_ directory: String) -> String { directory + "/_delta_log" }

    /// The commit file of `version`: twenty digits.
    static func commitName(_ version: Int) -> String {
        let digits = String(version)
        return String(repeating: "0", count: max(0, 20 - digits.count)) + digits + ".json"
    }

    /// Whether `path` is a directory with a `_delta_log/` directory (the hook `import` uses to
    /// choose this reader over a Hive-dataset listing).
    public static func isTable(_ path: String) -> Bool {
        var isDirectory: ObjCBool = false
        return FileManager.default.fileExists(atPath: logDirectory(path), isDirectory: &isDirectory) && isDirectory.boolValue
    }

    /// The versions whose commit files are in the log, ascending (a listing of `_delta_log/`
    /// only: commit files are never removed while the table is read from version 0).
    public static func versions(at directory: String) throws(DeltaError) -> [Int] {
        let log = logDirectory(directory)
        let names: [String]
        do { names = try FileManager.default.contentsOfDirectory(atPath: log) } catch {
            if !FileManager.default.fileExists(atPath: log) { return [] }
            throw .io(file: log, operation: "list", errno: EIO)
        }
        return names.compactMap { name -> Int? in
            guard name.count == 25, name.hasSuffix(".json") else { return nil }
            let digits = name.prefix(20)
            guard digits.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
            return Int(digits)
        }.sorted()
    }

    /// The table at `version` (nil: the latest), replayed from version 0.
    /// - Throws: `notATable`, `noSuchVersion`, `malformed` (a commit that is not JSON lines of
    ///   actions, a gap in the versions), `unsupportedProtocol` (a log that starts after a checkpoint).
    public static func snapshot(at directory: String, version: Int? = nil) throws(DeltaError) -> Snapshot {
        let all = try versions(at: directory)
        guard let latest = all.last else { throw .notATable(path: directory) }
        let target = version ?? latest
        guard target >= 0, target <= latest else { throw .noSuchVersion(path: directory, version: target, latest: latest) }
        guard all.first == 0 else {
            throw .unsupportedProtocol(
                path: directory,
                detail:
                    "the log starts at version \(all[0]) (earlier commits were cleaned up after a checkpoint); Colonnade replays commits from version 0 and reads no checkpoints"
            )
        }
        var snapshot = Snapshot(version: target)
        var live: [String: File] = [:]
        for v in 0 ... target {
            guard v < all.count, all[v] == v else {
                throw .malformed(file: logDirectory(directory), line: 0, detail: "the log has no commit for version \(v)")
            }
            try apply(commit: logDirectory(directory) + "/" + commitName(v), to: &snapshot, files: &live)
        }
        snapshot.files = live.values.sorted { $0.path < $1.path }
        return snapshot
    }

    /// The absolute paths of the data files of `version` (nil: the latest), sorted.
    /// - Throws: as `snapshot(at:version:)`, and `unsupportedProtocol` for a table that needs a
    ///   reader version above 1.
    public static func files(at directory: String, version: Int? = nil) throws(DeltaError) -> [String] {
        let snapshot = try snapshot(at: directory, version: version)
        try checkReadable(snapshot, path: directory)
        return snapshot.files.map { $0.path.hasPrefix("/") ? $0.path : directory + "/" + $0.path }
    }

    /// Refuses a table Colonnade cannot read correctly.
    static func checkReadable(_ snapshot: Snapshot, path: String) throws(DeltaError) {
        if snapshot.minReaderVersion > 1 || !snapshot.readerFeatures.isEmpty {
            let features = snapshot.readerFeatures.isEmpty ? "" : " (reader features: \(snapshot.readerFeatures.joined(separator: ", ")))"
            let meaning = snapshot.minReaderVersion == 2 ? " — column mapping" : snapshot.readerFeatures.isEmpty ? "" : ""
            throw .unsupportedProtocol(
                path: path,
                detail: "the table needs Delta reader version \(snapshot.minReaderVersion)\(meaning)\(features); "
                    + "Colonnade reads reader version 1 tables (no deletion vectors, no column mapping)")
        }
    }

    /// The current version (or `version`) as one table: every data file read as Parquet and
    /// merged (`year`/`month` partition columns are not in the files, so they are not imported).
    public static func read(
        at directory: String, version: Int? = nil, ticker: String? = nil, strict: Bool,
        skipped: inout [InteropSkippedColumn]
    ) throws(DeltaError) -> QuoteTable {
        let paths = try files(at: directory, version: version)
        guard !paths.isEmpty else {
            throw .data(.missingColumn(file: directory, column: "data file (the version has no files)", available: []))
        }
        var parts: [QuoteTable] = []
        do throws(InteropError) {
            for p in paths { parts.append(try InteropReader.read(path: p, ticker: ticker, strict: strict, skipped: &skipped)) }
        } catch {
            throw .data(error)
        }
        var first = parts.removeFirst()
        if !parts.isEmpty { first.upsert(contentsOf: parts) }
        return first
    }

    // MARK: Replay

    static func apply(commit path: String, to snapshot: inout Snapshot, files: inout [String: File]) throws(DeltaError) {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw .io(file: path, operation: "read", errno: errno == 0 ? EIO : errno)
        }
        var lineNumber = 0
        for line in data.split(separator: UInt8(ascii: "\n"), omittingEmptySubsequences: false) {
            lineNumber += 1
            if line.allSatisfy({ $0 == 32 || $0 == 13 || $0 == 9 }) { continue }
            let object: Any
            do { object = try JSONSerialization.jsonObject(with: Data(line)) } catch {
                throw .malformed(file: path, line: lineNumber, detail: "not JSON")
            }
            guard let action = object as? [String: Any] else {
                throw .malformed(file: path, line: lineNumber, detail: "an action must be a JSON object")
            }
            if let p = action["protocol"] as? [String: Any] {
                snapshot.minReaderVersion = p["minReaderVersion"] as? Int ?? 1
                snapshot.minWriterVersion = p["minWriterVersion"] as? Int ?? 2
                snapshot.readerFeatures = p["readerFeatures"] as? [String] ?? []
                snapshot.writerFeatures = p["writerFeatures"] as? [String] ?? []
            }
            if let m = action["metaData"] as? [String: Any] {
                snapshot.tableID = m["id"] as? String ?? ""
                snapshot.schemaString = m["schemaString"] as? String ?? ""
                snapshot.partitionColumns = m["partitionColumns"] as? [String] ?? []
                snapshot.configuration = (m["configuration"] as? [String: Any] ?? [:]).compactMapValues { $0 as? String }
            }
            if let a = action["add"] as? [String: Any] {
                guard let raw = a["path"] as? String, let p = decodePath(raw) else {
                    throw .malformed(file: path, line: lineNumber, detail: "an add action without a readable path")
                }
                var records: Int?
                if let stats = a["stats"] as? String, let d = stats.data(using: .utf8),
                    let s = try? JSONSerialization.jsonObject(with: d) as? [String: Any]
                {
                    records = s["numRecords"] as? Int
                }
                let values = (a["partitionValues"] as? [String: Any] ?? [:]).mapValues { $0 as? String }
                files[p] = File(path: p, partitionValues: values, size: a["size"] as? Int ?? 0, records: records)
            }
            if let r = action["remove"] as? [String: Any] {
                guard let raw = r["path"] as? String, let p = decodePath(raw) else {
                    throw .malformed(file: path, line: lineNumber, detail: "a remove action without a readable path")
                }
                files.removeValue(forKey: p)
            }
        }
    }

    /// A data file's path from the log: a relative URI (percent-encoded) or a `file:` URI.
    static func decodePath(_ raw: String) -> String? {
        var text = raw
        if text.hasPrefix("file://") {
            text = String(text.dropFirst(7))
        } else if text.hasPrefix("file:") {
            text = String(text.dropFirst(5))
        }
        if text.contains("://") { return nil }
        return text.removingPercentEncoding
    }
}
