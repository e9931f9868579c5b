#if canImport(Glibc)
import Glibc
#endif

/// What one commit to a store did.
public struct SnapshotCommit: Sendable, Equatable {
    /// The version it made (for a write to a path where nothing existed: 1, a single-file snapshot).
    public var version: SnapshotVersion
    /// Bytes written: the new data file and the new version log.
    public var writtenBytes: Int
}

/// What `gc` removed.
public struct SnapshotCollection: Sendable, Equatable {
    /// The versions removed from the log, oldest first.
    public var removedVersions: [Int]
    /// Data files removed (including leftovers of writers that were killed).
    public var removedFiles: Int
    /// Their bytes.
    public var freedBytes: Int
}

extension SnapshotStore {
    // MARK: Writes (each takes the write lock)

    /// Appends (upserts) `rows` as a new version that writes only them: one segment file and a
    /// new version log. Where nothing exists yet, writes a single-file snapshot (version 1).
    ///
    /// Rows of `rows` replace the stored rows of the same ticker and date, as
    /// `QuoteTable.upsert(_:)` does; new tickers and new columns are allowed.
    /// - Parameters:
    ///   - rows: the rows to add or replace.
    ///   - command: the command that made it (use ``commandText(_:)`` to redact credentials).
    ///   - durable: `fsync` the segment, the log and their directories before returning.
    ///   - wait: wait for another writer's lock (`false`: throw `SnapshotError.locked` instead).
    ///   - threads: threads for writing the segment; the file does not depend on it.
    /// - Throws: `SnapshotError`; on any error the current version is unchanged.
    @discardableResult
    public func append(
        _ rows: QuoteTable, command: String = "", durable: Bool = true, wait: Bool = true,
        threads: Int = QueryOptions.availableCores
    ) throws(SnapshotError) -> SnapshotCommit {
        let lock = try SnapshotLock(snapshotAt: path, wait: wait)
        defer { lock.release() }
        return try appendLocked(rows, command: command, durable: durable, threads: threads)
    }

    /// ``append(_:command:durable:wait:threads:)`` for a caller that holds the write lock.
    package func appendLocked(
        _ rows: QuoteTable, command: String, durable: Bool, threads: Int,
        now: Int64? = nil
    ) throws(SnapshotError) -> SnapshotCommit {
        guard var state = try prepare(durable: durable, threads: threads) else {
            return try writeSingleFile(rows, command: command, durable: durable, threads: threads)
        }
        let previous = state.log.current
        // Of the files already there, an append needs their schemas, symbols, row ranges and
        // dates: each is read to its footer's index (no block summaries, no ticker metadata),
        // checked as a non-verifying load checks it, and its dates are read where mapped. (A
        // ticker dictionary and index of the same bytes as the previous file's, as the day
        // segments of a store mostly have, are taken as decoded.) One file at a time: nothing
        // of it is kept.
        var identifiers = Set(rows.schema.map(\.identifier))
        var replaced = ReplacedRows(by: rows)
        var decoded: SnapshotFooter.DecodedTickers?
        for index in previous.files {
            let reader = try Self.checkedReader(
                state.log.files[index], directory: state.dataDirectory, extent: .index, reusing: decoded)
            replaced.find(in: reader.footer.tickers, dates: try reader.checkedDates())
            identifiers.formUnion(reader.footer.schema.map(\.identifier))
            decoded = reader.footer.decodedTickers
        }
        // The version must load as a table: refused before anything is written when the columns
        // of its files together pass the limit (as a rewrite's save refuses the merged table).
        if identifiers.count > QuoteTable.maximumColumnCount {
            throw .unsavable(
                file: path, reason: "\(identifiers.count) value columns; a table holds at most \(QuoteTable.maximumColumnCount)")
        }
        let file = try state.writeDataFile(rows, version: state.nextNumber, durable: durable, threads: threads)
        let rowCount = previous.rowCount + rows.rowCount - replaced.count
        state.log.files.append(file)
        let version = SnapshotVersion(
            number: state.nextNumber, millisecondsSince1970: now ?? Self.now(), kind: .append,
            command: command, rowCount: rowCount, writtenRows: rows.rowCount, writtenBytes: file.size,
            restoredFrom: nil, files: previous.files + [state.log.files.count - 1])
        return try state.commit(version, durable: durable, newBytes: file.size)
    }

    /// Writes `table` whole as a new version (a full rewrite: the history keeps every earlier
    /// version). Where nothing exists yet, writes a single-file snapshot (version 1).
    @discardableResult
    public func write(
        _ table: QuoteTable, command: String = "", durable: Bool = true, wait: Bool = true,
        threads: Int = QueryOptions.availableCores
    ) throws(SnapshotError) -> SnapshotCommit {
        let lock = try SnapshotLock(snapshotAt: path, wait: wait)
        defer { lock.release() }
        return try writeLocked(table, kind: .full, command: command, durable: durable, threads: threads)
    }

    /// ``write(_:command:durable:wait:threads:)`` for a caller that holds the write lock.
    package func writeLocked(
        _ table: QuoteTable, kind: SnapshotVersion.Kind = .full, command: String, durable: Bool,
        threads: Int, now: Int64? = nil
    ) throws(SnapshotError) -> SnapshotCommit {
        guard var state = try prepare(durable: durable, threads: threads) else {
            return try writeSingleFile(table, command: command, durable: durable, threads: threads)
        }
        let file = try state.writeDataFile(table, version: state.nextNumber, durable: durable, threads: threads)
        state.log.files.append(file)
        let version = SnapshotVersion(
            number: state.nextNumber, millisecondsSince1970: now ?? Self.now(), kind: kind,
            command: command, rowCount: table.rowCount, writtenRows: table.rowCount,
            writtenBytes: file.size, restoredFrom: nil, files: [state.log.files.count - 1])
        return try state.commit(version, durable: durable, newBytes: file.size)
    }

    /// Folds the current version's files into one, as a new version (the table is unchanged).
    /// - Returns: nil when the current version is one file already.
    @discardableResult
    public func compact(
        command: String = "", durable: Bool = true, wait: Bool = true,
        threads: Int = QueryOptions.availableCores
    ) throws(SnapshotError) -> SnapshotCommit? {
        let lock = try SnapshotLock(snapshotAt: path, wait: wait)
        defer { lock.release() }
        return try compactLocked(command: command, durable: durable, threads: threads)
    }

    /// ``compact(command:durable:wait:threads:)`` for a caller that holds the write lock.
    package func compactLocked(command: String, durable: Bool, threads: Int, now: Int64? = nil) throws(SnapshotError) -> SnapshotCommit? {
        let (log, resolved) = try readLog(path)
        guard !log.isSingleFile, log.current.files.count > 1 else { return nil }
        // Verified: compaction must not carry damage into the file every later version builds on.
        let table = try Self.merge(log.current, of: log, directory: dataDirectory(resolved, log), verify: true, threads: threads)
        return try writeLocked(table, kind: .compact, command: command, durable: durable, threads: threads, now: now)
    }

    /// Makes version `number` current again, as a new version naming its files (nothing is
    /// copied, nothing is lost: the versions after it stay in the log).
    /// - Throws: `versionUnavailable` for a version the log does not hold, or the current one.
    @discardableResult
    public func restore(
        _ number: Int, command: String = "", durable: Bool = true, wait: Bool = true
    ) throws(SnapshotError) -> SnapshotCommit {
        let lock = try SnapshotLock(snapshotAt: path, wait: wait)
        defer { lock.release() }
        return try restoreLocked(number, command: command, durable: durable)
    }

    /// ``restore(_:command:durable:wait:)`` for a caller that holds the write lock.
    package func restoreLocked(_ number: Int, command: String, durable: Bool, now: Int64? = nil) throws(SnapshotError) -> SnapshotCommit {
        let (log, _) = try readLog(path)
        guard let old = log.version(number) else { throw unavailable(number, log) }
        guard number != log.current.number else {
            throw .versionUnavailable(file: path, detail: "version \(number) is the current version; there is nothing to restore")
        }
        // Checked before anything is written: every file of the version must still be whole.
        guard var state = try prepare(durable: durable, threads: 1) else { throw .noSuchFile(file: path) }
        for i in old.files {
            _ = try Self.checkedReader(log.files[i], directory: state.dataDirectory)
        }
        let names = old.files.map { log.files[$0].name }
        let indices = names.map { name in state.log.files.firstIndex { $0.name == name } ?? -1 }
        guard !indices.contains(-1) else { throw unavailable(number, state.log) }
        let version = SnapshotVersion(
            number: state.nextNumber, millisecondsSince1970: now ?? Self.now(), kind: .restore,
            command: command, rowCount: old.rowCount, writtenRows: 0, writtenBytes: 0,
            restoredFrom: number, files: indices)
        return try state.commit(version, durable: durable, newBytes: 0)
    }

    /// Removes old versions and the data only they need. Keeps the current version always, the
    /// newest `keepLast` versions and those committed within `keepDays` days before `now`
    /// (both when both are given: a version is kept if either keeps it; neither: every version
    /// is kept and only leftovers of killed writers are removed). The only command that deletes
    /// versions. The new log is committed first, then the files are unlinked: a crash in
    /// between leaves files no version names, which the next write or gc removes.
    @discardableResult
    public func collectGarbage(
        keepLast: Int?, keepDays: Int?, now: Int64? = nil, durable: Bool = true,
        wait: Bool = true
    ) throws(SnapshotError) -> SnapshotCollection {
        let lock = try SnapshotLock(snapshotAt: path, wait: wait)
        defer { lock.release() }
        return try collectGarbageLocked(keepLast: keepLast, keepDays: keepDays, now: now, durable: durable)
    }

    /// ``collectGarbage(keepLast:keepDays:now:durable:wait:)`` for a caller that holds the lock.
    package func collectGarbageLocked(
        keepLast: Int?, keepDays: Int?, now: Int64? = nil, durable: Bool
    ) throws(SnapshotError) -> SnapshotCollection {
        let (log, resolved) = try readLog(path)
        guard !log.isSingleFile else { return SnapshotCollection(removedVersions: [], removedFiles: 0, freedBytes: 0) }
        let directory = dataDirectory(resolved, log)
        let cutoff = keepDays.map { (now ?? Self.now()) - Int64($0) * 86_400_000 }
        let count = log.versions.count
        var kept = [SnapshotVersion](), removed = [Int]()
        for (i, v) in log.versions.enumerated() {
            let keep =
                i == count - 1 || (keepLast.map { i >= count - $0 } ?? false)
                || (cutoff.map { v.millisecondsSince1970 >= $0 } ?? false) || (keepLast == nil && keepDays == nil)
            if keep { kept.append(v) } else { removed.append(v.number) }
        }
        // Renumber the file table to the files the kept versions name.
        var newFiles = [SnapshotDataFile](), newIndex = [Int: Int]()
        for v in kept {
            for i in v.files where newIndex[i] == nil {
                newIndex[i] = newFiles.count
                newFiles.append(log.files[i])
            }
        }
        var freed = 0, files = 0
        if !removed.isEmpty {
            var newLog = log
            newLog.files = newFiles
            newLog.versions = kept.map { v in
                var v = v
                v.files = v.files.map { newIndex[$0] ?? 0 }
                return v
            }
            try Self.writeLog(newLog, to: path, durable: durable)
        }
        // Unlink what no kept version names: the removed versions' files and any leftovers.
        let keptNames = Set(newFiles.map(\.name))
        for name in Self.dataFileNames(in: directory, temporaries: true) where !keptNames.contains(name) {
            var st = stat()
            let p = directory + "/" + name
            if stat(p, &st) == 0, unlink(p) == 0 {
                freed += Int(st.st_size)
                files += 1
            }
        }
        if files > 0, durable { Self.syncDirectory(directory) }
        return SnapshotCollection(removedVersions: removed, removedFiles: files, freedBytes: freed)
    }

    // MARK: Commit machinery

    /// A write in progress, under the lock: the log it builds on and where data files go.
    struct PendingCommit {
        let store: SnapshotStore
        var log: SnapshotLog
        let target: FileTarget
        let dataDirectory: String
        var nextNumber: Int { log.current.number + 1 }

        /// Writes `table` as a new data file (a whole 1.x snapshot, temporary + fsync + rename
        /// inside the data directory), with the log file's mode and, where allowed, its owner.
        func writeDataFile(_ table: QuoteTable, version: Int, durable: Bool, threads: Int) throws(SnapshotError) -> SnapshotDataFile {
            let name = SnapshotStore.dataFileName(version: version)
            let p = dataDirectory + "/" + name
            try table.save(to: p, durable: durable, threads: threads)
            if let st = target.status {
                _ = chmod(p, st.st_mode & 0o7777)
                _ = chown(p, st.st_uid, st.st_gid)
            }
            // Read back (header, trailer, footer checksum and index) for what the log records.
            let reader = try SnapshotReader(path: p, extent: .index)
            let size = reader.mapping.size
            let sum = UInt64(
                littleEndian: reader.mapping.bytes.loadUnaligned(fromByteOffset: size - SnapshotFormat.trailerSize, as: UInt64.self))
            return SnapshotDataFile(name: name, size: size, footerChecksum: sum, rowCount: table.rowCount)
        }

        /// Appends `version` to the log and replaces the log file atomically: the commit point.
        mutating func commit(_ version: SnapshotVersion, durable: Bool, newBytes: Int) throws(SnapshotError) -> SnapshotCommit {
            log.versions.append(version)
            let bytes = try SnapshotStore.writeLog(log, to: store.path, durable: durable)
            return SnapshotCommit(version: version, writtenBytes: newBytes + bytes)
        }
    }

    /// Under the lock: the log to build on, with a single-file snapshot upgraded (its file
    /// hard-linked into the new data directory as version 1) and leftovers of killed writers
    /// removed. nil when nothing exists at the path.
    func prepare(durable: Bool, threads: Int) throws(SnapshotError) -> PendingCommit? {
        let target: FileTarget
        do {
            target = try FileTarget(forWriting: path)
            try target.checkWritable()
        } catch {
            throw SnapshotError(error, file: path)
        }
        guard target.exists else { return nil }
        var (log, resolved) = try readLog(path)
        let parent = FileTarget.directory(of: resolved)
        if log.isSingleFile {
            let name = FileTarget.name(of: resolved) + ".data"
            let directory = parent + "/" + name
            if mkdir(directory, 0o755) != 0 && errno != EEXIST { throw SnapshotError.system(directory, "mkdir", errno) }
            var st = stat()
            guard stat(directory, &st) == 0, SnapshotFile.isDirectory(st) else { throw .isADirectory(file: directory) }
            Self.removeLeftovers(in: directory, keeping: [])
            let fileName = Self.dataFileName(version: 1)
            let linked = directory + "/" + fileName
            if link(resolved, linked) != 0 {
                // No hard links here (another filesystem, a FAT volume): copy it instead.
                try QuoteTable.load(from: resolved, verify: true, threads: threads).save(to: linked, durable: durable, threads: threads)
            } else if durable {
                Self.syncDirectory(directory)
            }
            log.dataDirectory = name
            log.files[0].name = fileName
        }
        let directory = parent + "/" + log.dataDirectory
        var st = stat()
        guard stat(directory, &st) == 0, SnapshotFile.isDirectory(st) else { throw .noSuchFile(file: directory) }
        Self.removeLeftovers(in: directory, keeping: Set(log.files.map(\.name)))
        return PendingCommit(store: self, log: log, target: target, dataDirectory: directory)
    }

    /// A single-file snapshot for the first write to a path where nothing exists.
    func writeSingleFile(_ table: QuoteTable, command: String, durable: Bool, threads: Int) throws(SnapshotError) -> SnapshotCommit {
        try table.save(to: path, durable: durable, threads: threads)
        let info = try QuoteTable.snapshotInfo(at: path)
        let version = SnapshotVersion(
            number: 1, millisecondsSince1970: Self.now(), kind: .single, command: command,
            rowCount: table.rowCount, writtenRows: table.rowCount, writtenBytes: info.fileSize,
            restoredFrom: nil, files: [0])
        return SnapshotCommit(version: version, writtenBytes: info.fileSize)
    }

    /// The rows of a segment that replace a stored row (same ticker and date), found file by
    /// file among the files of the version the segment is appended to; the others add a row.
    struct ReplacedRows {
        let segment: QuoteTable
        /// Per segment row; empty until a row is looked up.
        private var isReplaced = [Bool]()

        init(by segment: QuoteTable) { self.segment = segment }

        /// How many rows of the segment replace a stored row, of the files seen so far.
        var count: Int { isReplaced.count(where: { $0 }) }

        /// Finds the segment rows that one file holds, from its ticker index and dates.
        ///
        /// A row dated after its ticker's last date in the file or before its first (a new day:
        /// the usual append) is not in it, from the two dates; any other is looked up by binary
        /// search in the ticker's run (dates ascend within it).
        /// - Precondition: `tickers` tile the rows of `dates` (`checkedDates()` checked it).
        /// - Complexity: O(tickers) (a symbol lookup when the file's ticker order departs from
        ///   the segment's), plus O(log rows) per row dated within its ticker's run.
        mutating func find(in tickers: [TickerEntry], dates tickerDates: SnapshotReader.TickerDates) {
            tickerDates.column.withUnsafeBufferPointer { dates in
                segment.dates.withUnsafeBufferPointer { segmentDates in
                    // The files of a store mostly list the same tickers in the same order: the
                    // segment ticker after the one matched last is tried before the symbol is hashed.
                    var guess = 0
                    for (i, t) in tickers.enumerated() where t.rowCount > 0 {
                        let number: Int
                        if guess < segment.tickers.count, segment.tickers[guess].symbol == t.symbol {
                            number = guess
                        } else if let found = segment.tickerNumber(of: t.symbol) {
                            number = Int(found)
                        } else {
                            continue
                        }
                        guess = number + 1
                        let first = tickerDates.first[i], last = tickerDates.last[i]
                        for r in segment.tickers[number].rows where first <= segmentDates[r] && segmentDates[r] <= last {
                            if isReplaced.isEmpty { isReplaced = [Bool](repeating: false, count: segment.rowCount) }
                            guard !isReplaced[r] else { continue }
                            var lo = t.firstRow, hi = t.firstRow + t.rowCount
                            while lo < hi {
                                let mid = (lo + hi) / 2
                                if dates[mid] < segmentDates[r] { lo = mid + 1 } else { hi = mid }
                            }
                            // Safe: lo is within the run, or at its end (no match) if the run's
                            // last date were below `last`, read apart (precondition: the run
                            // lies within the file's rows).
                            isReplaced[r] = lo < t.firstRow + t.rowCount && dates[lo] == segmentDates[r]
                        }
                    }
                }
            }
        }
    }

    /// Writes `log` over the log file at `path` atomically (`ReplacementFile`: a symbolic link
    /// is written through, mode and owner are kept). Returns the bytes written.
    @discardableResult
    static func writeLog(_ log: SnapshotLog, to path: String, durable: Bool) throws(SnapshotError) -> Int {
        let bytes = log.encoded()
        do {
            let file = try ReplacementFile(replacing: path)
            do throws(SnapshotError) {
                try SnapshotFile.writeAll(file.fileDescriptor, bytes, at: 0, file: path)
            } catch {
                file.discard()
                throw error
            }
            try file.commit(durable: durable)
        } catch let error as SnapshotError {
            throw error
        } catch let error as ReplacementFileError {
            throw SnapshotError(error, file: path)
        } catch {
            throw .ioError(file: path, operation: "write version log", errno: EIO)
        }
        return bytes.count
    }

    /// `vNNNNNN-RANDOM.snapshot`: the version that first wrote it, and 64 random bits (so a
    /// leftover of a killed writer never collides with a new file).
    static func dataFileName(version: Int) -> String {
        var digits = String(version)
        if digits.count < 6 { digits = String(repeating: "0", count: 6 - digits.count) + digits }
        var hex = String(UInt64.random(in: 0 ... .max), radix: 16)
        if hex.count < 16 { hex = String(repeating: "0", count: 16 - hex.count) + hex }
        return "v\(digits)-\(hex).snapshot"
    }

    /// The data files in `directory` (names as ``dataFileName(version:)`` makes them).
    static func dataFileNames(in directory: String, temporaries: Bool = false) -> [String] {
        guard let dir = opendir(directory) else { return [] }
        defer { closedir(dir) }
        var names = [String]()
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name.hasPrefix("v"), name.hasSuffix(".snapshot") { names.append(name) }
            if temporaries, name.hasPrefix(".v"), name.contains(".snapshot.tmp-") { names.append(name) }
        }
        return names.sorted()
    }

    /// Removes data files no version names (a writer killed after writing its segment and
    /// before committing the log). Only under the write lock: no other writer is at work.
    /// Their temporaries (`.vNNNNNN-….snapshot.tmp-…`) go too: under the lock none is live.
    static func removeLeftovers(in directory: String, keeping names: Set<String>) {
        for name in dataFileNames(in: directory, temporaries: true) where !names.contains(name) { unlink(directory + "/" + name) }
    }

    static func syncDirectory(_ directory: String) {
        let fd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { return }
        _ = Glibc.fsync(fd)
        close(fd)
    }

    /// Now, in milliseconds since 1970-01-01 UTC.
    static func now() -> Int64 {
        var ts = timespec()
        clock_gettime(CLOCK_REALTIME, &ts)
        return Int64(ts.tv_sec) * 1000 + Int64(ts.tv_nsec / 1_000_000)
    }
}
