import Dispatch
import Foundation
import Synchronization

/// One self-rewriting line on standard error while a long piece of work runs, drawn from
/// counters the work advances: `exporting 1,234,567 of 2,500,000 rows · 120 MB · 85 MB/s ·
/// 1.4 s`. Nothing is shown for work that ends within the delay (a second), nor when standard
/// error is not a terminal; the line is erased when the work ends. (`import` draws its own text,
/// counting files, through ``ImportProgressLine``.)
final class ProgressLine: @unchecked Sendable {
    // Safe: `shown` is touched only on `queue` and, after the timer is cancelled, in `finish`
    // through `queue.sync`; the counters are atomic.
    private let rows = Atomic<Int>(0)
    private let bytes = Atomic<Int>(0)
    private let writer: any OutputWriter
    private let start = ContinuousClock.now
    private let queue = DispatchQueue(label: "colonnade.progress")
    private let timer: DispatchSourceTimer?
    private var shown = false
    /// The line's text from the elapsed seconds (without the leading erase).
    private var text: (Double) -> String = { _ in "" }

    /// - Parameters:
    ///   - verb: what is happening (`exporting`).
    ///   - total: the rows the work will do, when known.
    ///   - enabled: whether to draw at all (standard error is a terminal).
    ///   - delay: how long the work runs before the first line (``CommandContext/progressDelay``: a second).
    convenience init(_ verb: String, total: Int?, enabled: Bool, writer: any OutputWriter, delay: Duration) {
        self.init(enabled: enabled, writer: writer, delay: delay) { line, seconds in
            let done = line.rows.load(ordering: .relaxed), written = line.bytes.load(ordering: .relaxed)
            let rate = seconds > 0 ? Double(written) / seconds / 1e6 : 0
            let of = total.map { " of \($0.groupedText)" } ?? ""
            return "\(verb) \(done.groupedText)\(of) rows · \(Int(Double(written) / 1e6)) MB · "
                + "\(Int(rate)) MB/s · \(String(format: "%.1f", seconds)) s"
        }
    }

    /// A line whose text `text(self, elapsed seconds)` gives, drawn every 250 ms after `delay`.
    init(enabled: Bool, writer: any OutputWriter, delay: Duration, text: @escaping (ProgressLine, Double) -> String) {
        self.writer = writer
        timer = enabled ? DispatchSource.makeTimerSource(queue: queue) : nil
        self.text = { [unowned self] seconds in text(self, seconds) }
        guard let timer else { return }
        let (seconds, attoseconds) = delay.components
        let nanoseconds = max(0, Int(min(seconds, 86_400)) * 1_000_000_000 + Int(attoseconds / 1_000_000_000))
        timer.schedule(deadline: .now() + .nanoseconds(nanoseconds), repeating: .milliseconds(250))
        timer.setEventHandler { [weak self] in self?.draw() }
        timer.resume()
        // No delay (only in-process tests set one, `TestTuning.progressDelay`): the first line is drawn
        // before the work starts, so that even work faster than the timer's first tick shows it.
        if delay <= .zero { queue.sync { draw() } }
    }

    /// Counts `rows` more rows and `bytes` more bytes done.
    func advance(rows: Int = 0, bytes: Int = 0) {
        if rows != 0 { self.rows.add(rows, ordering: .relaxed) }
        if bytes != 0 { self.bytes.add(bytes, ordering: .relaxed) }
    }

    private func draw() {
        let elapsed = ContinuousClock.now - start
        let seconds = Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18
        try? writer.write("\r\u{1B}[K" + text(seconds))
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
