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

    /// How long an import runs before the line appears.
    static let defaultDelay = Duration.seconds(1)

    /// - Parameters:
    ///   - enabled: Whether to draw at all (standard error is a terminal, not quiet).
    ///   - total: The number of input files.
    ///   - delay: How long the import runs before the first line is drawn.
    init(enabled: Bool, total: Int, writer: any OutputWriter, delay: Duration = ImportProgressLine.defaultDelay) {
        self.writer = writer
        self.total = total
        timer = enabled ? DispatchSource.makeTimerSource(queue: queue) : nil
        guard let timer else { return }
        let (seconds, attoseconds) = delay.components
        let nanoseconds = max(0, Int(min(seconds, 86_400)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .milliseconds(250))
        timer.setEventHandler { [weak self] in self?.draw() }
        timer.resume()
        // No delay (only the tests' `$COLONNADE_PROGRESS_AFTER_MS=0`): the first line is drawn
        // before the import starts, so that even an import faster than the timer's first tick
        // shows it.
        if delay <= .zero { queue.sync { draw() } }
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

extension ImportProgressLine {
    /// The delay before the line appears: one second, or — for tests only, so that a pseudo-
    /// terminal test need not import for a whole second — `$COLONNADE_PROGRESS_AFTER_MS`
    /// milliseconds (0 to 60,000; anything else is ignored). Not documented for users.
    static func delay(environment: [String: String]) -> Duration {
        guard let text = environment["COLONNADE_PROGRESS_AFTER_MS"], let ms = Int(text), (0 ... 60_000).contains(ms) else {
            return defaultDelay
        }
        return .milliseconds(ms)
    }
}
