import Colonnade
import DataLink
import DataLinkFormat
import Dispatch
import Foundation

/// A bulk fetch (`colonnade fetch --table T --bulk`): one export zip instead of pages (see
/// `DataLinkClient.downloadTableExport`). The zip is streamed to a temporary file beside the
/// snapshot — beside `--keep-zip`'s path when given — (never held in memory), inflated and
/// decoded at the same time (`ArchiveImporter`), and removed afterwards unless `--keep-zip`
/// names a place for it.
///
/// The temporary, `.NAME.export-PID-RANDOM.zip`, holds an exclusive `flock` for as long as this
/// run uses it. One left by a run that was killed (gigabytes for a whole table) is removed by
/// the next bulk fetch beside the same snapshot or `--keep-zip` path, as snapshot temporaries
/// are (`ReplacementFile`): any such file whose lock can be taken — a live run's never is.
package struct BulkFetch {
    package let table: String
    package let tickers: [String]
    package let from: Int32?
    package let to: Int32?
    package let columns: [String]?
    package let polling: ExportPolling
    package let archiveOptions: ArchiveImporter.Options
    package let keepZip: String?
    package let snapshotPath: String

    package init(
        table: String, tickers: [String], from: Int32?, to: Int32?, columns: [String]?, polling: ExportPolling,
        archiveOptions: ArchiveImporter.Options, keepZip: String?, snapshotPath: String
    ) {
        self.table = table
        self.tickers = tickers
        self.from = from
        self.to = to
        self.columns = columns
        self.polling = polling
        self.archiveOptions = archiveOptions
        self.keepZip = keepZip
        self.snapshotPath = snapshotPath
    }

    /// Downloads, imports and returns the rows; nothing is saved here.
    package func run(
        client: DataLinkClient, events: @escaping @Sendable (ExportEvent) -> Void,
        downloaded: () -> Void = {}
    ) async throws -> QuoteTable {
        let beside = keepZip ?? snapshotPath
        Self.removeStaleTemporaries(beside: snapshotPath)
        if let keepZip { Self.removeStaleTemporaries(beside: keepZip) }
        let (temporary, lock) = try Self.createTemporary(beside: beside)
        var kept = false
        defer {
            if !kept { unlink(temporary) }
            close(lock)
        }
        _ = try await client.downloadTableExport(
            table, tickers: tickers, from: FetchPlan.date(from), to: FetchPlan.date(to), columns: columns,
            to: temporary, polling: polling, events: events)
        downloaded()
        if let keepZip {
            try Self.move(temporary, to: keepZip)
            kept = true
        }
        let archive: ZipArchive
        do {
            archive = try ZipArchive(contentsOfFile: keepZip ?? temporary, name: "\(table) export")
        } catch {
            throw ResponseError.archive(error)
        }
        return try ArchiveImporter.importArchive(archive, options: archiveOptions)
    }

    /// The directory a temporary beside `path` goes in: `path`'s (when it exists, else the
    /// temporary directory), so the download lands on that file system.
    static func temporaryDirectory(beside path: String) -> String {
        let directory = URL(fileURLWithPath: path).deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) || !isDirectory.boolValue {
            return FileManager.default.temporaryDirectory.path
        }
        return directory
    }

    /// `.<name>.export-` for the file at `path`: the start of its temporaries' names.
    static func temporaryPrefix(beside path: String) -> String {
        ".\(URL(fileURLWithPath: path).lastPathComponent).export-"
    }

    /// `.<name>.export-<pid>-<random>.zip` beside `path`, created (`O_EXCL`, mode 0600) and
    /// locked (`flock`, exclusive) before it is returned: the path and the descriptor holding
    /// the lock, which the caller closes after removing or keeping the file.
    static func createTemporary(beside path: String) throws -> (String, Int32) {
        let directory = temporaryDirectory(beside: path)
        var lastError: Int32 = EEXIST
        for _ in 0 ..< 8 {
            let candidate = directory + "/" + temporaryPrefix(beside: path) + "\(getpid())-\(UInt32.random(in: 0 ... .max)).zip"
            let fd = SystemCall.retryingOnInterrupt { open(candidate, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600) }
            if fd < 0 {
                lastError = errno
                if errno == EEXIST { continue }
                break
            }
            // Between open and flock another run's cleanup may have taken the lock and removed
            // the name; then this inode is unlinked and we start again.
            var linked = stat()
            if flock(fd, LOCK_EX | LOCK_NB) == 0, fstat(fd, &linked) == 0, linked.st_nlink > 0 { return (candidate, fd) }
            close(fd)
        }
        throw IngestFailure("cannot create the temporary export file in \(directory): \(String(cString: strerror(lastError)))")
    }

    /// Removes `.<name>.export-*.zip` beside `path` that no live run holds: each is opened (never
    /// following links, never blocking) and removed only if its `flock` can be taken and the
    /// name still names the file locked.
    static func removeStaleTemporaries(beside path: String) {
        let directory = temporaryDirectory(beside: path)
        let prefix = temporaryPrefix(beside: path)
        guard let names = try? FileManager.default.contentsOfDirectory(atPath: directory) else { return }
        for name in names where name.hasPrefix(prefix) && name.hasSuffix(".zip") {
            let full = directory + "/" + name
            let fd = open(full, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var locked = stat()
            guard fstat(fd, &locked) == 0, (locked.st_mode & S_IFMT) == S_IFREG else { continue }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }  // a live run holds it
            var now = stat()
            if lstat(full, &now) == 0, now.st_ino == locked.st_ino, now.st_dev == locked.st_dev { unlink(full) }
        }
    }

    /// Renames `from` to `to` (copies across file systems).
    static func move(_ from: String, to: String) throws {
        if rename(from, to) == 0 { return }
        let reason = errno
        guard reason == EXDEV else {
            throw IngestFailure("cannot keep the export zip at \(to): \(String(cString: strerror(reason)))")
        }
        do {
            if FileManager.default.fileExists(atPath: to) { try FileManager.default.removeItem(atPath: to) }
            try FileManager.default.copyItem(atPath: from, toPath: to)
        } catch {
            throw IngestFailure("cannot keep the export zip at \(to): \(error.localizedDescription)")
        }
    }
}
