#if canImport(Glibc)
import Glibc
#endif

/// A snapshot store: a version log at the snapshot's path and immutable data files beside it
/// (docs/SNAPSHOT_FORMAT.md, *Stores: versions and appends*; ARCHITECTURE.md, *Versions and
/// appends*). An append writes one segment (a whole 1.x snapshot of the new rows, with its own
/// zone maps, ticker index and checksums) and a new log; every earlier version stays readable
/// until ``collectGarbage(keepLast:keepDays:now:durable:wait:)`` removes it.
///
///     let store = SnapshotStore(at: "snapshots/quotes.snapshot")
///     try store.append(newDay, command: "colonnade import day.csv")
///     let before = try store.table(atVersion: 3)
///     for v in try store.log().versions { print(v.number, v.kind.name, v.rowCount) }
///
/// A single-file (1.x) snapshot is a store of one version; it is left as it is until the first
/// write, which upgrades it (its file becomes version 1's data file, by a hard link: nothing is
/// copied). A path where nothing exists gets a single-file snapshot on its first write.
///
/// Readers never lock and are never disturbed: data files are never changed once a version names
/// them, the log is replaced atomically, and `gc` unlinks only files no kept version names (a
/// reader that mapped one keeps its pages). Writers hold the snapshot's `SnapshotLock`.
public struct SnapshotStore: Sendable {
    /// The store's path (the version log, or a single-file snapshot), as given.
    public let path: String

    /// The store at `path` (nothing is read until asked).
    public init(at path: String) { self.path = path }

    /// When an append leaves the current version with more segments than this, or with segments
    /// holding more rows than its base, the append compacts the store afterwards (see
    /// ``needsCompaction(_:)``).
    public static let compactionSegmentLimit = 30

    // MARK: Reading

    /// Whether the file at `path` is a 2.x store's version log (reads its first 12 bytes).
    public static func isStore(_ path: String) -> Bool {
        let fd = open(path, O_RDONLY | O_NONBLOCK | O_CLOEXEC)
        guard fd >= 0 else { return false }
        defer { close(fd) }
        var head = [UInt8](repeating: 0, count: 12)
        let n = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress, 12, 0) }
        guard n == 12 else { return false }
        return head.withUnsafeBytes { SnapshotLog.isLog($0) }
    }

    /// The store's versions. A single-file snapshot is one version (``SnapshotVersion/Kind/single``,
    /// timed by its modification time).
    /// - Throws: `SnapshotError` (`noSuchFile` when nothing is there, a damaged log, …).
    public func log() throws(SnapshotError) -> SnapshotLog {
        try readLog(path).log
    }

    /// The table at `version` (the current one when nil): its base with every segment upserted in
    /// order, as if each write had rewritten the whole snapshot.
    ///
    /// A version with one data file is returned as that file's mapping (no copy). One with
    /// segments maps each file and merges the ticker indexes at once; its columns are read where
    /// they lie while the version keeps every row of every file (an append: queries then read
    /// the files, stitched in the version's order), and are merged into fresh memory when first
    /// read otherwise (`upsert(contentsOf:)`: one pass, each ticker's rows copied in runs),
    /// O(rows) per column read. ARCHITECTURE.md, *Versions and appends*.
    /// - Parameters:
    ///   - version: the version's number (`SnapshotLog`); nil: the current version.
    ///   - verify: check every data file as `QuoteTable.load(from:verify:)` does.
    ///   - threads: threads for the checks and merges; the table does not depend on it.
    /// - Throws: `SnapshotError`: `versionUnavailable` for a version the log does not hold.
    public func table(
        atVersion version: Int? = nil, verify: Bool = true,
        threads: Int = QueryOptions.availableCores
    ) throws(SnapshotError) -> QuoteTable {
        var attempt = 0
        while true {
            attempt += 1
            let (log, resolved) = try readLog(path)
            if log.isSingleFile {
                if let version, version != 1 { throw unavailable(version, log) }
                return try QuoteTable.load(SnapshotReader(path: path), verify: verify, threads: threads)
            }
            let chosen: SnapshotVersion
            if let version {
                guard let v = log.version(version) else { throw unavailable(version, log) }
                chosen = v
            } else {
                chosen = log.current
            }
            do throws(SnapshotError) {
                return try Self.merge(
                    chosen, of: log, directory: dataDirectory(resolved, log), verify: verify, threads: threads, deferringColumns: true)
            } catch .noSuchFile(let file) {
                // A gc removed the files of the version read: read the log again (a few times,
                // as writers may keep committing); the version asked for may be gone for good.
                if attempt >= 4 { throw SnapshotError.noSuchFile(file: file) }
                if let version, (try? readLog(path).log.version(version)) == nil { throw unavailable(version, log) }
            }
        }
    }

    /// The version whose time is the latest at or before `millisecondsSince1970`.
    /// - Throws: `versionUnavailable` when every version is newer.
    public func version(atOrBefore millisecondsSince1970: Int64) throws(SnapshotError) -> SnapshotVersion {
        let log = try log()
        guard let v = log.version(atOrBefore: millisecondsSince1970) else {
            throw .versionUnavailable(
                file: path, detail: "no version was committed by then (the first is version \(log.versions[0].number))")
        }
        return v
    }

    func unavailable(_ version: Int, _ log: SnapshotLog) -> SnapshotError {
        let numbers = log.versions.map(\.number)
        let range = numbers.count == 1 ? "only version \(numbers[0])" : "versions \(numbers[0])–\(numbers[numbers.count - 1])"
        return .versionUnavailable(file: path, detail: "no version \(version) (the log holds \(range); gc removes old versions)")
    }

    /// Loads a version's files and merges them: base, then each segment upserted in order. With
    /// `deferringColumns`, the ticker index and dates are merged here and each value column when
    /// first read (`QuoteTable.upsert(contentsOf:threads:deferringColumns:)`): for readers, not
    /// for writers, which read every column anyway and merge them on `threads` threads.
    static func merge(
        _ version: SnapshotVersion, of log: SnapshotLog, directory: String,
        verify: Bool, threads: Int, deferringColumns: Bool = false
    ) throws(SnapshotError) -> QuoteTable {
        let files = version.files.map { log.files[$0] }
        var table = try loadDataFile(files[0], directory: directory, verify: verify, threads: threads).table
        guard files.count > 1 else { return table }
        // The first segment, then the others side by side, a thread each when there are enough
        // of them (30 days of appends are 29 small files), each taking the first's ticker
        // dictionary as decoded when its bytes are the same (the day segments mostly list the
        // same tickers); the first failure in file order is the error, as loading them one after
        // the other would report.
        let first = Result { () throws(SnapshotError) in
            try loadDataFile(files[1], directory: directory, verify: verify, threads: threads)
        }
        let decoded = try? first.get().decoded
        let rest = files.count - 2
        let threadsEach = rest >= threads ? 1 : threads
        var loaded = [Result<QuoteTable, SnapshotError>?](repeating: nil, count: rest)
        loaded.withUnsafeMutableBufferPointer { slots in
            let shared = SharedPointer(base: slots.baseAddress!)
            forEachChunk(rest, threads: threads) { i, _ in
                // Safe: each slot is written by the one worker that claimed its index.
                shared.base[i] = Result { () throws(SnapshotError) in
                    try loadDataFile(files[i + 2], directory: directory, verify: verify, threads: threadsEach, reusing: decoded).table
                }
            }
        }
        let tables = try ([first.map(\.table)] + loaded.map { $0! }).map { result throws(SnapshotError) in try result.get() }
        table.upsert(contentsOf: tables, threads: threads, deferringColumns: deferringColumns)
        return table
    }

    /// One data file, checked against what the log recorded of it (size and footer checksum:
    /// a file swapped, cut or rewritten since is refused), then loaded as any snapshot; with its
    /// decoded ticker dictionary, for the next file's load to reuse (`reusing`, as
    /// `SnapshotFooter.decode` takes it).
    static func loadDataFile(
        _ file: SnapshotDataFile, directory: String, verify: Bool, threads: Int,
        reusing: SnapshotFooter.DecodedTickers? = nil
    ) throws(SnapshotError) -> (table: QuoteTable, decoded: SnapshotFooter.DecodedTickers?) {
        let reader = try checkedReader(file, directory: directory, reusing: reusing)
        return (try QuoteTable.load(reader, verify: verify, threads: threads), reader.footer.decodedTickers)
    }

    /// A reader of one data file (its whole footer, or with `.index` what an append needs),
    /// refused when the file is not the one the log recorded (size and footer checksum).
    /// `reusing`: as `SnapshotFooter.decode` takes it.
    static func checkedReader(
        _ file: SnapshotDataFile, directory: String, extent: SnapshotFooter.Extent = .whole,
        reusing: SnapshotFooter.DecodedTickers? = nil
    ) throws(SnapshotError) -> SnapshotReader {
        let p = directory + "/" + file.name
        let reader = try SnapshotReader(path: p, extent: extent, reusing: reusing)
        guard reader.mapping.size == file.size else {
            throw .inconsistentData(
                file: p, section: "version log", detail: "the file has \(reader.mapping.size) bytes, the version log records \(file.size)")
        }
        let sum = UInt64(
            littleEndian: reader.mapping.bytes.loadUnaligned(fromByteOffset: file.size - SnapshotFormat.trailerSize, as: UInt64.self))
        guard sum == file.footerChecksum else {
            throw .checksumMismatch(
                file: p, section: "footer (against the version log)", column: nil, expected: file.footerChecksum, actual: sum)
        }
        return reader
    }

    /// The log at `path` and the path's resolved target (the log's directory holds the data).
    func readLog(_ path: String) throws(SnapshotError) -> (log: SnapshotLog, resolved: String) {
        let target: FileTarget
        do { target = try FileTarget(forWriting: path) } catch { throw SnapshotError(error, file: path) }
        guard let st = target.status else { throw .noSuchFile(file: path) }
        let fd = try SnapshotFile.open(target.resolvedPath, O_RDONLY | O_NONBLOCK, file: path, operation: "open")
        defer { close(fd) }
        var fst = stat()
        guard fstat(fd, &fst) == 0 else { throw SnapshotError.system(path, "fstat", errno) }
        guard (fst.st_mode & S_IFMT) == S_IFREG else { throw .notARegularFile(file: path, kind: FileTarget.kind(fst.st_mode)) }
        let size = Int(fst.st_size)
        var head = [UInt8](repeating: 0, count: min(size, SnapshotLog.maximumSize))
        var got = 0
        while got < head.count {
            let n = head.withUnsafeMutableBytes { pread(fd, $0.baseAddress! + got, $0.count - got, off_t(got)) }
            if n < 0 {
                if errno == EINTR { continue }
                throw SnapshotError.system(path, "read", errno)
            }
            if n == 0 { break }
            got += n
        }
        if got < head.count { head.removeLast(head.count - got) }
        let isLog = head.withUnsafeBytes { SnapshotLog.isLog($0) }
        if isLog {
            if size > SnapshotLog.maximumSize {
                throw .malformedHeader(file: path, detail: "a version log of \(size) bytes is larger than \(SnapshotLog.maximumSize)")
            }
            let decoded: Result<SnapshotLog, SnapshotError> = head.withUnsafeBytes { b in
                do throws(SnapshotError) { return .success(try SnapshotLog.decode(b, file: path)) } catch { return .failure(error) }
            }
            return (try decoded.get(), target.resolvedPath)
        }
        // A single-file snapshot: one version, timed by its modification time.
        let reader = try SnapshotReader(path: target.resolvedPath)
        let info = reader.info
        let sum = UInt64(
            littleEndian: reader.mapping.bytes.loadUnaligned(
                fromByteOffset: reader.mapping.size - SnapshotFormat.trailerSize, as: UInt64.self))
        let file = SnapshotDataFile(
            name: FileTarget.name(of: target.resolvedPath), size: info.fileSize, footerChecksum: sum, rowCount: info.rowCount)
        let millis = Int64(st.st_mtim.tv_sec) * 1000 + Int64(st.st_mtim.tv_nsec / 1_000_000)
        let version = SnapshotVersion(
            number: 1, millisecondsSince1970: millis, kind: .single, command: "", rowCount: info.rowCount,
            writtenRows: info.rowCount, writtenBytes: info.fileSize, restoredFrom: nil, files: [0])
        return (SnapshotLog(dataDirectory: "", files: [file], versions: [version]), target.resolvedPath)
    }

    /// The data directory of a store whose log is at `resolved`.
    func dataDirectory(_ resolved: String, _ log: SnapshotLog) -> String {
        FileTarget.directory(of: resolved) + "/" + log.dataDirectory
    }

    /// Whether `log`'s current version should be compacted: more than
    /// ``compactionSegmentLimit`` segments, or segments holding more rows than the base.
    public static func needsCompaction(_ log: SnapshotLog) -> Bool {
        let files = log.current.files
        guard files.count > 1 else { return false }
        let segmentRows = files.dropFirst().reduce(0) { $0 + log.files[$1].rowCount }
        return files.count - 1 > compactionSegmentLimit || segmentRows > log.files[files[0]].rowCount
    }

    // MARK: Command text

    /// The command line as a version records it: arguments joined by spaces (quoted where they
    /// hold spaces or quotes), with credentials removed — the value after `--api-key` (or in
    /// `--api-key=…`, and any option naming a key, token, password or secret), the password of
    /// any URL's `user:password@`, and in every argument that is not a file path, every key-like
    /// token or `api_key=`/`token=` value (`CredentialRedaction`).
    public static func commandText(_ arguments: [String]) -> String {
        var out = [String]()
        var hideNext = false
        for argument in arguments {
            var a = argument
            if hideNext {
                a = "<redacted>"
                hideNext = false
            } else if a.hasPrefix("--"), let eq = a.firstIndex(of: "="), isSecretOption(String(a[..<eq])) {
                a = String(a[...eq]) + "<redacted>"
            } else if a.hasPrefix("--"), isSecretOption(a) {
                hideNext = true
            }
            a = redactingUserInfo(a)
            // A path is kept as typed (its random-looking names would read as keys); a URL or
            // any other argument goes through the token redaction.
            if a.contains("://") || !a.contains("/") { a = CredentialRedaction.redacting(a) }
            out.append(
                a.contains(where: { $0 == " " || $0 == "'" || $0 == "\"" || $0 == "\n" })
                    ? "'" + a.replacing("'", with: "'\\''") + "'" : a)
        }
        return out.joined(separator: " ")
    }

    static func isSecretOption(_ option: String) -> Bool {
        let o = option.lowercased()
        return o.contains("key") || o.contains("token") || o.contains("password") || o.contains("secret")
    }

    /// `scheme://user:password@host…` → `scheme://<redacted>@host…` (anywhere in the text).
    static func redactingUserInfo(_ text: String) -> String {
        var result = ""
        var rest = Substring(text)
        while let scheme = rest.firstRange(of: "://") {
            result += rest[..<scheme.upperBound]
            rest = rest[scheme.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" || $0 == "#" || $0 == " " }) ?? rest.endIndex
            if let at = rest[..<authorityEnd].lastIndex(of: "@") {
                result += "<redacted>@"
                rest = rest[rest.index(after: at)...]
            }
        }
        return result + rest
    }
}
