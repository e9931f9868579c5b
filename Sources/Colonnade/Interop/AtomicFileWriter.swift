#if canImport(Glibc)
import Glibc
#endif

/// Writes one file the way every Colonnade output is written: into a new temporary beside the
/// target (`.NAME.tmp-PID-RANDOM`), `fsync`ed, renamed over the target, and the directory
/// `fsync`ed. A failure or a kill at any instant leaves the old file (or none), never half of one.
///
///     try AtomicFileWriter.write(to: "out.parquet") { output in try writer.write(to: output) }
enum AtomicFileWriter {
    /// Calls `body` with an output to a temporary file, then renames it to `path`.
    /// - Throws: `InteropError.io` naming `path`; whatever `body` throws. The temporary is removed then.
    static func write(to path: String, durable: Bool = true,
                      _ body: (DescriptorInteropOutput) throws(InteropError) -> Void) throws(InteropError) {
        let (directory, name) = split(path)
        if name.isEmpty { throw .io(file: path, operation: "create", errno: EISDIR) }
        var random = SystemRandomNumberGenerator()
        let suffix = String(random.next() & 0xFFFF_FFFF, radix: 16)
        let temporary = directory + "/.\(name).tmp-\(getpid())-\(suffix)"
        let fd = Glibc.open(temporary, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw .io(file: path, operation: "create", errno: errno) }
        var closed = false
        do throws(InteropError) {
            let output = DescriptorInteropOutput(fd: fd, name: path)
            try body(output)
            try output.flush()
            if durable && fsync(fd) != 0 { throw .io(file: path, operation: "fsync", errno: errno) }
            closed = true
            if close(fd) != 0 { throw .io(file: path, operation: "close", errno: errno) }
            if rename(temporary, path) != 0 { throw .io(file: path, operation: "rename", errno: errno) }
        } catch {
            if !closed { close(fd) }
            unlink(temporary)
            throw error
        }
        if durable { syncDirectory(directory) }
    }

    /// Creates `path` and its missing parents (as `mkdir -p`).
    static func makeDirectories(_ path: String) throws(InteropError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            prefix += part
            if mkdir(prefix, 0o755) != 0 && errno != EEXIST {
                throw .io(file: prefix, operation: "create directory", errno: errno)
            }
            prefix += "/"
        }
    }

    /// `fsync` of a directory, ignoring filesystems that cannot.
    static func syncDirectory(_ directory: String) {
        let dfd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dfd >= 0 else { return }
        _ = fsync(dfd)
        close(dfd)
    }

    /// The directory part of `path` (`.` when it has none) and the last component.
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let directory = slash == path.startIndex ? "/" : String(path[..<slash])
        return (directory, String(path[path.index(after: slash)...]))
    }
}
