#if canImport(Glibc)
import Glibc
#endif

/// Thin wrappers over the POSIX calls snapshots use, turning failures into `SnapshotError`.
/// `file` is always the path the user named (for messages).
enum SnapshotFile {
    /// `open(2)`, retried on EINTR.
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0, file: String, operation: String) throws(SnapshotError) -> Int32 {
        while true {
            let fd = Glibc.open(path, flags | O_CLOEXEC, mode)
            if fd >= 0 { return fd }
            if errno == EINTR { continue }
            throw SnapshotError.system(file, operation, errno)
        }
    }

    /// Writes all of `count` bytes at `base`, in calls of at most 1 GiB, retrying on EINTR.
    static func writeAll(_ fd: Int32, _ base: UnsafeRawPointer?, _ count: Int, file: String) throws(SnapshotError) {
        guard count > 0, var p = base else { return }
        var left = count
        while left > 0 {
            let n = Glibc.write(fd, p, min(left, 1 << 30))
            if n < 0 {
                if errno == EINTR { continue }
                throw SnapshotError.system(file, "write", errno)
            }
            if n == 0 { throw SnapshotError.ioError(file: file, operation: "write", errno: EIO) }
            p += n
            left -= n
        }
    }

    static func writeAll(_ fd: Int32, _ bytes: [UInt8], file: String) throws(SnapshotError) {
        let result: SnapshotError? = bytes.withUnsafeBytes { b in
            do throws(SnapshotError) { try writeAll(fd, b.baseAddress, b.count, file: file) } catch { return error }
            return nil
        }
        if let result { throw result }
    }

    static func fsync(_ fd: Int32, file: String, operation: String) throws(SnapshotError) {
        while Glibc.fsync(fd) != 0 {
            if errno == EINTR { continue }
            // Some filesystems cannot fsync directories; that is not a failure of the save.
            if operation == "fsync directory" && (errno == EINVAL || errno == EBADF) { return }
            throw SnapshotError.system(file, operation, errno)
        }
    }

    /// `stat(2)` of a path, nil when it does not exist.
    static func status(_ path: String) -> stat? {
        var st = stat()
        return stat(path, &st) == 0 ? st : nil
    }

    static func isDirectory(_ st: stat) -> Bool { (st.st_mode & S_IFMT) == S_IFDIR }

    /// The directory part of `path` (`.` when it has none) and the last component.
    static func split(_ path: String) -> (directory: String, name: String) {
        guard let slash = path.lastIndex(of: "/") else { return (".", path) }
        let dir = String(path[..<slash])
        return (dir.isEmpty ? "/" : dir, String(path[path.index(after: slash)...]))
    }
}
