#if canImport(Glibc)
import Glibc
#endif

extension ReplacementFile {
    /// Writes the file at `path` through a `ReplacementFile` — the one way Colonnade replaces a
    /// file: a locked temporary beside the target, renamed over it only when `body` has returned
    /// and the bytes are flushed (and, with `durable`, `fsync`ed). The new file keeps the mode
    /// and owner of the one it replaces, a symbolic link is written through, and a read-only
    /// file, a dangling link or a FIFO is refused before anything is written. If `body` or a
    /// write throws, the temporary is removed and the file at `path` is untouched.
    ///
    ///     try ReplacementFile.write(to: "out.parquet") { output throws(InteropError) in try writer.write(to: output) }
    ///
    /// - Throws: `InteropError.cannotReplace` for the replacement's own failures, `InteropError.io`
    ///   for a failed write, and whatever `body` throws.
    static func write(
        to path: String, durable: Bool,
        _ body: (DescriptorInteropOutput) throws(InteropError) -> Void
    ) throws(InteropError) {
        let file: ReplacementFile
        do { file = try ReplacementFile(replacing: path) } catch { throw .cannotReplace(error) }
        do throws(InteropError) {
            let output = try DescriptorInteropOutput(fd: file.fileDescriptor, name: path)
            try body(output)
            try output.flush()
        } catch {
            file.discard()
            throw error
        }
        do { try file.commit(durable: durable) } catch { throw .cannotReplace(error) }
    }

    /// Creates `path` and its missing parents (as `mkdir -p`); with `durable`, `fsync`s the parent
    /// of every directory it creates, so a partition directory survives a power loss with its file.
    static func makeDirectories(_ path: String, durable: Bool) throws(InteropError) {
        var prefix = path.hasPrefix("/") ? "/" : ""
        for part in path.split(separator: "/") {
            let parent = prefix.isEmpty ? "." : prefix
            prefix += part
            if mkdir(prefix, 0o755) == 0 {
                if durable { syncDirectory(parent) }
            } else if errno != EEXIST {
                throw .io(file: prefix, operation: "create directory", errno: errno)
            }
            var st = stat()
            guard stat(prefix, &st) == 0, (st.st_mode & S_IFMT) == S_IFDIR else {
                throw .io(file: prefix, operation: "create directory", errno: ENOTDIR)
            }
            prefix += "/"
        }
    }

    /// `fsync` of a directory, ignoring filesystems that cannot.
    private static func syncDirectory(_ directory: String) {
        let dfd = Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard dfd >= 0 else { return }
        _ = fsync(dfd)
        close(dfd)
    }
}
