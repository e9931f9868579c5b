/// An ``OutputWriter`` that counts the bytes and lines passing through it into a ``ProgressLine``.
/// Every line is a row except the first `headerLines` (a CSV header).
final class CountingOutputWriter: OutputWriter {
    private let base: any OutputWriter
    private let progress: ProgressLine
    private var headerLines: Int

    init(_ base: any OutputWriter, progress: ProgressLine, headerLines: Int = 0) {
        self.base = base
        self.progress = progress
        self.headerLines = headerLines
    }

    var isTerminal: Bool { base.isTerminal }
    var terminalRows: Int? { base.terminalRows }

    func write(_ text: String) throws(OutputError) {
        try base.write(text)
        var lines = 0
        for byte in text.utf8 where byte == 0x0A { lines += 1 }
        let header = min(lines, headerLines)
        headerLines -= header
        progress.advance(rows: lines - header, bytes: text.utf8.count)
    }

    func flush() throws(OutputError) { try base.flush() }
}
