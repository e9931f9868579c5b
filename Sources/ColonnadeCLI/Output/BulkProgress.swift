import Colonnade
import DataLink
import Foundation

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
                line =
                    offset > 0
                    ? "downloading the export from \(TerminalText.escaped(host)), resuming at byte \(offset.groupedText)"
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
