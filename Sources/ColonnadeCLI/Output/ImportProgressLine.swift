import ColonnadeIngest
import Dispatch
import Foundation

/// One self-rewriting line on standard error while an import runs: files, rows, MB read and
/// MB/s. Nothing is shown for an import that finishes within a second, nor when standard error
/// is not a terminal (`enabled` false); the line is erased when the import ends. The timer,
/// drawing and erasing are `ProgressLine`'s.
final class ImportProgressLine: Sendable {
    let counters = ImportProgress()
    private let line: ProgressLine

    /// How long an import runs before the line appears.
    static let defaultDelay = Duration.seconds(1)

    /// - Parameters:
    ///   - enabled: Whether to draw at all (standard error is a terminal, not quiet).
    ///   - total: The number of input files.
    ///   - delay: How long the import runs before the first line is drawn.
    init(enabled: Bool, total: Int, writer: any OutputWriter, delay: Duration = ImportProgressLine.defaultDelay) {
        let counters = self.counters
        line = ProgressLine(enabled: enabled, writer: writer, delay: delay) { _, seconds in
            let (files, rows, bytes) = counters.current
            let rate = seconds > 0 ? Double(bytes) / seconds / 1e6 : 0
            return String(
                format: "importing %d/%d files · %@ rows · %.0f MB · %.0f MB/s · %.1f s",
                files, total, rows.groupedText, Double(bytes) / 1e6, rate, seconds)
        }
    }

    /// Stops drawing and erases the line if one was drawn.
    func finish() { line.finish() }
}
