import Synchronization

/// An ``OutputWriter`` that stops passing text on once cancelled: every later write or flush
/// throws ``OutputError/brokenPipe``, so a command streaming rows stops at its next write. Used for the
/// answer of a shell query that Ctrl-C cancelled.
final class CancellableOutputWriter: OutputWriter, @unchecked Sendable {
    // @unchecked: `base` is used only by the thread answering the query; the flag is atomic.
    private let base: any OutputWriter
    private let cancelled = Atomic<Bool>(false)

    init(_ base: any OutputWriter) {
        self.base = base
    }

    /// Stops all further output (from any thread).
    func cancel() { cancelled.store(true, ordering: .releasing) }

    var isTerminal: Bool { base.isTerminal }
    var terminalRows: Int? { base.terminalRows }

    /// Whether ``cancel()`` was called.
    var isCancelled: Bool { cancelled.load(ordering: .acquiring) }

    func write(_ text: String) throws(OutputError) {
        guard !isCancelled else { throw .brokenPipe }
        try base.write(text)
    }

    func flush() throws(OutputError) {
        guard !isCancelled else { throw .brokenPipe }
        try base.flush()
    }
}
