import Colonnade
import DataLink
import DataLinkFormat
import Foundation

/// `colonnade fetch --table T --bulk`: one export zip instead of pages (see
/// `DataLinkClient.downloadTableExport`). The zip is streamed to a temporary file beside the
/// snapshot (never held in memory), inflated and decoded at the same time (`ArchiveImporter`),
/// and removed afterwards unless `--keep-zip` names a place for it.
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
        let temporary = Self.temporaryPath(beside: snapshotPath)
        var kept = false
        defer { if !kept { unlink(temporary) } }
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

    /// `.<snapshot>.export-<pid>-<random>.zip` in the snapshot's directory (when it exists, else
    /// the temporary directory), so the download lands on the snapshot's file system.
    static func temporaryPath(beside snapshot: String) -> String {
        let url = URL(fileURLWithPath: snapshot)
        var directory = url.deletingLastPathComponent().path
        var isDirectory: ObjCBool = false
        if !FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) || !isDirectory.boolValue {
            directory = FileManager.default.temporaryDirectory.path
        }
        return directory + "/.\(url.lastPathComponent).export-\(getpid())-\(UInt32.random(in: 0 ... .max)).zip"
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
                // The status and the link's host are the server's words.
                line = "waiting for the export: \(TerminalText.escaped(status)), \(seconds / 60):\(String(format: "%02d", seconds % 60))"
            case let .downloading(host, offset):
                line = offset > 0 ? "downloading the export from \(TerminalText.escaped(host)), resuming at byte \(offset.groupedText)"
                    : "downloading the export from \(TerminalText.escaped(host))"
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
