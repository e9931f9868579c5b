import Colonnade
#if canImport(Glibc)
import Glibc
#endif

/// A destination for text: standard output or error, a file, or memory in tests.
///
/// Writers buffer; call ``flush()`` at the end (the top level does so for standard output).
/// Once a write has failed with ``OutputError/brokenPipe`` every later write fails the same way
/// at once, so a command streaming rows stops at its next write.
protocol OutputWriter: AnyObject {
    /// Appends `text` as UTF-8.
    func write(_ text: String) throws(OutputError)
    /// Hands everything buffered to the destination.
    func flush() throws(OutputError)
    /// Whether the destination is a terminal (data formats then escape control characters, as
    /// `ls` does for names; files and pipes get the exact bytes). False by default.
    var isTerminal: Bool { get }
    /// The terminal's height in lines, when the destination is a terminal that says; `nil` by default.
    var terminalRows: Int? { get }
}

extension OutputWriter {
    var isTerminal: Bool { false }
    var terminalRows: Int? { nil }

    /// Appends `text` and a line feed, in one write.
    func writeLine(_ text: String) throws(OutputError) {
        try write(text + "\n")
    }
}

/// Why output could not be written.
enum OutputError: Error, Equatable, Sendable {
    /// The reader closed its end of the pipe (`EPIPE`), as `head` does once it has enough.
    /// Not a failure: the top level stops quietly with exit status 0.
    case brokenPipe
    /// `write(2)` failed with `errno` (for example `ENOSPC`) on `destination`.
    case writeFailed(destination: String, errno: Int32)
    /// The file at `path` could not be created (or its replacement renamed into place).
    case cannotOpen(path: String, errno: Int32)
    /// The file may not be replaced: it is read-only, a dangling symbolic link, or not a regular
    /// file.
    case cannotReplace(ReplacementFileError)

    /// A replacement failure as an output error: system failures as ``cannotOpen(path:errno:)``.
    init(_ error: ReplacementFileError) {
        switch error {
        case let .noSuchDirectory(p): self = .cannotOpen(path: p, errno: ENOENT)
        case let .isADirectory(p): self = .cannotOpen(path: p, errno: EISDIR)
        case let .permissionDenied(p, _): self = .cannotOpen(path: p, errno: EACCES)
        case let .ioError(p, _, code): self = .cannotOpen(path: p, errno: code)
        case .notARegularFile, .danglingSymlink, .readOnly: self = .cannotReplace(error)
        }
    }
}

/// An ``OutputWriter`` that keeps everything in memory: for tests, and for output that must be
/// complete before it is shown.
final class MemoryOutputWriter: OutputWriter {
    /// Everything written so far.
    private(set) var text = ""
    /// What ``isTerminal`` answers: tests set it to see what a terminal would get.
    var isTerminal = false
    private let limit: Int?
    private var isBroken = false

    /// Creates an empty writer.
    ///
    /// - Parameter limit: When set, a write that would take the total past `limit` UTF-8 bytes
    ///   keeps what fits and throws ``OutputError/brokenPipe``, as if the reader had closed the
    ///   pipe (for testing early exits in-process).
    init(limit: Int? = nil) {
        self.limit = limit
    }

    func write(_ text: String) throws(OutputError) {
        guard !isBroken else { throw .brokenPipe }
        if let limit, self.text.utf8.count + text.utf8.count > limit {
            isBroken = true
            let room = limit - self.text.utf8.count
            self.text += String(decoding: text.utf8.prefix(room), as: UTF8.self)
            throw .brokenPipe
        }
        self.text += text
    }

    func flush() throws(OutputError) {
        if isBroken { throw .brokenPipe }
    }
}
