import Colonnade
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// An ``OutputWriter`` on a file descriptor, with its own buffer and a `write(2)` loop.
///
///     let output = FileDescriptorWriter.standardOutput()
///     try output.writeLine("ticker,date,close")
///     try output.flush()
///
/// Partial writes and `EINTR` are retried; `EPIPE` becomes ``OutputError/brokenPipe`` (the
/// process must ignore `SIGPIPE` for `write(2)` to return it, which `runColonnade` arranges).
/// Not thread-safe: one writer per thread.
final class FileDescriptorWriter: OutputWriter {
    /// The descriptor written to.
    let fileDescriptor: Int32

    /// Whether the descriptor is a terminal (`isatty`).
    var isTerminal: Bool { isatty(fileDescriptor) == 1 }

    /// The terminal's height (`TIOCGWINSZ`), `nil` when it is not a terminal or does not say.
    var terminalRows: Int? {
        var size = winsize()
        guard ioctl(fileDescriptor, UInt(TIOCGWINSZ), &size) == 0, size.ws_row > 0 else { return nil }
        return Int(size.ws_row)
    }
    /// How the destination is named in error messages ("standard output", a path).
    let destination: String
    private let capacity: Int
    private let ownsDescriptor: Bool
    /// For a file this writer creates: the temporary that ``close()`` renames over the target.
    private let replacement: ReplacementFile?
    private var buffer: [UInt8] = []
    private var state = State.open

    private enum State {
        case open
        /// The reader went away; every write fails with `brokenPipe`.
        case broken
        /// ``close()`` was called.
        case closed
    }

    /// Wraps an open descriptor; the writer does not close it.
    ///
    /// - Parameters:
    ///   - bufferCapacity: Bytes collected before a `write(2)`; 0 writes every call through.
    convenience init(fileDescriptor: Int32, destination: String, bufferCapacity: Int = 64 * 1024) {
        self.init(fileDescriptor: fileDescriptor, destination: destination, bufferCapacity: bufferCapacity, owns: false)
    }

    private init(
        fileDescriptor: Int32, destination: String, bufferCapacity: Int, owns: Bool,
        replacement: ReplacementFile? = nil
    ) {
        self.fileDescriptor = fileDescriptor
        self.destination = destination
        self.capacity = bufferCapacity
        self.ownsDescriptor = owns
        self.replacement = replacement
        buffer.reserveCapacity(bufferCapacity)
    }

    /// Writes a new version of the file at `path`: into a temporary beside it (a
    /// `ReplacementFile`), which ``close()`` `fsync`s and renames over `path`. Until then `path`
    /// is untouched, so a failed write (a full disk), an error or Ctrl-C never leaves it truncated
    /// or half-written; a writer released without ``close()`` removes its temporary. The new file
    /// keeps the permissions of the one it replaces; a symbolic link is written through.
    ///
    /// - Throws: ``OutputError/cannotOpen(path:errno:)`` when the directory is missing or not
    ///   writable, ``OutputError/cannotReplace(_:)`` for a read-only file, a dangling link or a
    ///   non-regular file.
    convenience init(creatingFileAt path: String, bufferCapacity: Int = 64 * 1024) throws(OutputError) {
        let file: ReplacementFile
        do { file = try ReplacementFile(replacing: path) } catch { throw OutputError(error) }
        self.init(
            fileDescriptor: file.fileDescriptor, destination: path, bufferCapacity: bufferCapacity, owns: true,
            replacement: file)
    }

    /// Standard output, buffered in 64 KiB.
    static func standardOutput() -> FileDescriptorWriter {
        FileDescriptorWriter(fileDescriptor: STDOUT_FILENO, destination: "standard output")
    }

    /// Standard error, unbuffered so messages appear when they are written.
    static func standardError() -> FileDescriptorWriter {
        FileDescriptorWriter(fileDescriptor: STDERR_FILENO, destination: "standard error", bufferCapacity: 0)
    }

    deinit {
        if let replacement {
            // Not closed: the output is incomplete, so the target keeps its old contents.
            if state != .closed { replacement.discard() }
            return
        }
        if state == .open { try? flush() }
        if state != .closed, ownsDescriptor { _ = systemClose(fileDescriptor) }
    }

    func write(_ text: String) throws(OutputError) {
        try checkOpen()
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= capacity { try flush() }
    }

    func flush() throws(OutputError) {
        try checkOpen()
        defer { buffer.removeAll(keepingCapacity: true) }
        let failure = buffer.withUnsafeBytes { SystemCall.writeAll(fileDescriptor, $0.baseAddress, $0.count) }
        switch failure {
        case 0: return
        case EPIPE:
            state = .broken
            throw .brokenPipe
        default:
            throw .writeFailed(destination: destination, errno: failure)
        }
    }

    /// Flushes and, for a file this writer created, makes it the file at its path (`fsync`,
    /// rename) and closes it. If anything fails, the file at the path is left as it was.
    ///
    /// - Precondition: nothing is written after `close()`.
    func close() throws(OutputError) {
        guard state != .closed else { return }
        var failure: OutputError?
        do { try flush() } catch { failure = error }
        if let replacement {
            state = .closed
            if let failure {
                replacement.discard()
                throw failure
            }
            do { try replacement.commit() } catch { throw OutputError(error) }
            return
        }
        if ownsDescriptor, systemClose(fileDescriptor) != 0, failure == nil {
            failure = .writeFailed(destination: destination, errno: errno)
        }
        state = .closed
        if let failure { throw failure }
    }

    private func checkOpen() throws(OutputError) {
        switch state {
        case .open: return
        case .broken: throw .brokenPipe
        case .closed: preconditionFailure("write to \(destination) after close()")
        }
    }
}

private func systemClose(_ descriptor: Int32) -> Int32 {
    #if canImport(Glibc)
    Glibc.close(descriptor)
    #else
    Darwin.close(descriptor)
    #endif
}
