import Colonnade
import DataLink
import DataLinkFormat
import Dispatch
import Foundation

/// `colonnade fetch --table T --bulk`: one export zip instead of pages (see
/// `DataLinkClient.downloadTableExport`). The zip is streamed to a temporary file beside the
/// snapshot — beside `--keep-zip`'s path when given — (never held in memory), inflated and
/// decoded at the same time (`ArchiveImporter`), and removed afterwards unless `--keep-zip`
/// names a place for it.
///
/// The temporary, `.NAME.export-PID-RANDOM.zip`, holds an exclusive `flock` for as long as this
/// run uses it. One left by a run that was killed (gigabytes for a whole table) is removed by
/// the next bulk fetch beside the same snapshot or `--keep-zip` path, as snapshot temporaries
/// are (`ReplacementFile`): any such file whose lock can be taken — a live run's never is.
struct BulkFetch {
    let table: String
    let tickers: [String]
    let from: Int32?
    let to: Int32?
    let columns: [String]?
    let polling: ExportPolling
    let archiveOptions: ArchiveImporter.Options
    let keepZip: String?
    let snapshotPath: String

    /// Downloads, imports and returns the rows; nothing is saved here.
    func run(client: DataLinkClient, progress: BulkProgress) async throws -> QuoteTable {
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
            to: temporary, polling: polling, events: { progress.report($0) })
        progress.finish()
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
            let fd = open(candidate, O_RDWR | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, 0o600)
            if fd < 0 {
                lastError = errno
                if errno == EEXIST || errno == EINTR { continue }
                break
            }
            // Between open and flock another run's cleanup may have taken the lock and removed
            // the name; then this inode is unlinked and we start again.
            var linked = stat()
            if flock(fd, LOCK_EX | LOCK_NB) == 0, fstat(fd, &linked) == 0, linked.st_nlink > 0 { return (candidate, fd) }
            close(fd)
        }
        throw CommandFailure("cannot create the temporary export file in \(directory): \(String(cString: strerror(lastError)))")
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
            throw CommandFailure("cannot keep the export zip at \(to): \(String(cString: strerror(reason)))")
        }
        do {
            if FileManager.default.fileExists(atPath: to) { try FileManager.default.removeItem(atPath: to) }
            try FileManager.default.copyItem(atPath: from, toPath: to)
        } catch {
            throw CommandFailure("cannot keep the export zip at \(to): \(error.localizedDescription)")
        }
    }

    /// `d` as a Dispatch interval (durations here are at most the week `parseDuration` allows).
    static func dispatchInterval(_ d: Duration) -> DispatchTimeInterval {
        let (seconds, attoseconds) = d.components
        if seconds < 0 { return .nanoseconds(0) }
        return .nanoseconds(Int(min(seconds, 30 * 86_400)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
    }

    /// `6 h`, `30 min`, `90 s`, `1.5 s`: a duration as `--deadline` and `--bulk-timeout` take it.
    static func format(_ d: Duration) -> String {
        let seconds = Double(d.components.seconds) + Double(d.components.attoseconds) / 1e18
        if seconds >= 3600, seconds.truncatingRemainder(dividingBy: 3600) == 0 { return "\(Int(seconds / 3600)) h" }
        if seconds >= 60, seconds.truncatingRemainder(dividingBy: 60) == 0 { return "\(Int(seconds / 60)) min" }
        if seconds == seconds.rounded() { return "\(Int(seconds)) s" }
        return "\(seconds) s"
    }

    /// `90`, `90s`, `1.5s`, `10m`, `1h`: seconds unless suffixed.
    static func parseDuration(_ text: String) -> Duration? {
        var number = Substring(text.trimmingCharacters(in: .whitespaces))
        var scale = 1.0
        if let last = number.last, "smh".contains(last) {
            scale = last == "s" ? 1 : last == "m" ? 60 : 3600
            number = number.dropLast()
        }
        guard let value = Double(number), value.isFinite, value > 0, value * scale <= 7 * 86_400 else { return nil }
        return .milliseconds(Int64((value * scale * 1000).rounded()))
    }
}

/// The export's progress line on a terminal: `waiting for the export: creating, 0:45`, then
/// `downloading the export from HOST`.
final class BulkProgress: @unchecked Sendable {
    // Safe: all state behind `lock`.
    private let lock = NSLock()
    private let enabled: Bool
    private let writer: any OutputWriter
    private var shown = false

    init(enabled: Bool, writer: any OutputWriter) {
        self.enabled = enabled
        self.writer = writer
    }

    func report(_ event: ExportEvent) {
        lock.withLock {
            guard enabled else { return }
            let line: String
            switch event {
            case let .waiting(status, elapsed, _):
                let seconds = Int(elapsed.components.seconds)
                line = "waiting for the export: \(status), \(seconds / 60):\(String(format: "%02d", seconds % 60))"
            case let .downloading(host, offset):
                line = offset > 0 ? "downloading the export from \(host), resuming at byte \(offset.groupedText)"
                    : "downloading the export from \(host)"
            case let .linkRefused(status):
                line = "the download link was refused (HTTP \(status)); asking for a fresh one"
            }
            try? writer.write("\r\u{1B}[K" + line)
            try? writer.flush()
            shown = true
        }
    }

    func finish() {
        lock.withLock {
            guard enabled, shown else { return }
            try? writer.write("\r\u{1B}[K")
            try? writer.flush()
            shown = false
        }
    }
}
