import DataLinkFormat
import Dispatch
import Foundation

/// One self-rewriting line on standard error while an import runs: files, rows, MB read and
/// MB/s. Nothing is shown for an import that finishes within a second, nor when standard error
/// is not a terminal (`enabled` false); the line is erased when the import ends.
final class ImportProgressLine: @unchecked Sendable {
    // Safe: `shown` is touched only on `queue` and, after the timer is cancelled and drained,
    // in `finish`.
    let counters = ImportProgress()
    private let writer: any OutputWriter
    private let total: Int
    private let start = ContinuousClock.now
    private let queue = DispatchQueue(label: "colonnade.import-progress")
    private let timer: DispatchSourceTimer?
    private var shown = false

    /// - Parameters:
    ///   - enabled: Whether to draw at all (standard error is a terminal, not quiet).
    ///   - total: The number of input files.
    init(enabled: Bool, total: Int, writer: any OutputWriter) {
        self.writer = writer
        self.total = total
        timer = enabled ? DispatchSource.makeTimerSource(queue: queue) : nil
        guard let timer else { return }
        timer.schedule(deadline: .now() + 1, repeating: .milliseconds(250))
        timer.setEventHandler { [weak self] in self?.draw() }
        timer.resume()
    }

    private func draw() {
        let (files, rows, bytes) = counters.current
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        let rate = seconds > 0 ? Double(bytes) / seconds / 1e6 : 0
        try? writer.write(String(format: "\r\u{1B}[Kimporting %d/%d files · %@ rows · %.0f MB · %.0f MB/s · %.1f s",
                                 files, total, rows.groupedText, Double(bytes) / 1e6, rate, seconds))
        try? writer.flush()
        shown = true
    }

    /// Stops drawing and erases the line if one was drawn.
    func finish() {
        guard let timer else { return }
        timer.cancel()
        queue.sync {
            if shown {
                try? writer.write("\r\u{1B}[K")
                try? writer.flush()
            }
            shown = false
        }
    }
}
