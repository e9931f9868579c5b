#if canImport(Glibc)
import Glibc
#endif

/// Thin wrappers over the POSIX calls snapshots use, turning failures into `SnapshotError`.
/// `file` is always the path the user named (for messages).
enum SnapshotFile {
    /// `open(2)` through `SystemCall` (retried on EINTR).
    static func open(_ path: String, _ flags: Int32, mode: mode_t = 0, file: String, operation: String) throws(SnapshotError) -> Int32 {
        let fd = SystemCall.retryingOnInterrupt { Glibc.open(path, flags | O_CLOEXEC, mode) }
        if fd < 0 { throw SnapshotError.system(file, operation, errno) }
        return fd
    }

    /// Writes all of `count` bytes at `base` (`SystemCall.writeAll`): at file offset `offset` when
    /// given (`pwrite(2)`: the file position does not move, so several threads may write disjoint
    /// ranges of one file), else at the file position.
    static func writeAll(_ fd: Int32, _ base: UnsafeRawPointer?, _ count: Int, at offset: Int? = nil, file: String) throws(SnapshotError) {
        guard count > 0, base != nil else { return }
        let failure = SystemCall.writeAll(fd, base, count, at: offset)
        if failure != 0 { throw SnapshotError.system(file, "write", failure) }
    }

    /// Reserves `length` bytes of disk for the file up front (`fallocate(2)`), so its blocks are
    /// allocated in one go and a full disk fails before any payload is written. Filesystems
    /// without it (EOPNOTSUPP, ENOSYS) are fine: the writes allocate as they go.
    /// - Returns: Whether the blocks are reserved (false where the filesystem cannot).
    @discardableResult
    static func reserve(_ fd: Int32, length: Int, file: String) throws(SnapshotError) -> Bool {
        #if os(Linux)
        if SystemCall.retryingOnInterrupt({ linuxFallocate(fd, 0, off_t(0), off_t(length)) }) == 0 { return true }
        if errno == ENOSPC || errno == EFBIG || errno == EDQUOT { throw SnapshotError.system(file, "write", errno) }
        return false
        #else
        return false
        #endif
    }

    /// Starts writing `count` bytes at `offset` back to disk without waiting for them
    /// (`sync_file_range(SYNC_FILE_RANGE_WRITE)`), so the disk works while later payloads are
    /// still copied into the page cache and the final `fsync` has less left to wait for. Only a
    /// hint: it promises no durability (the `fsync` does) and its failures are ignored.
    static func startWriteback(_ fd: Int32, offset: Int, count: Int) {
        #if os(Linux)
        _ = linuxSyncFileRange(fd, off_t(offset), off_t(count), 2 /* SYNC_FILE_RANGE_WRITE */)
        #endif
    }

    /// Writes all of `bytes` (at file offset `offset` when given), as the pointer form does.
    static func writeAll(_ fd: Int32, _ bytes: [UInt8], at offset: Int? = nil, file: String) throws(SnapshotError) {
        let failure = bytes.withUnsafeBytes { SystemCall.writeAll(fd, $0.baseAddress, $0.count, at: offset) }
        if failure != 0 { throw SnapshotError.system(file, "write", failure) }
    }

    static func fsync(_ fd: Int32, file: String, operation: String) throws(SnapshotError) {
        if SystemCall.retryingOnInterrupt({ Glibc.fsync(fd) }) == 0 { return }
        // Some filesystems cannot fsync directories; that is not a failure of the save.
        if operation == "fsync directory" && (errno == EINVAL || errno == EBADF) { return }
        throw SnapshotError.system(file, operation, errno)
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

#if os(Linux)
/// glibc's `fallocate(2)` wrapper, which the Glibc module does not import (it is declared only
/// under `_GNU_SOURCE`); `posix_fallocate` is no substitute, as it falls back to writing blocks.
@_silgen_name("fallocate")
func linuxFallocate(_ fd: Int32, _ mode: Int32, _ offset: off_t, _ length: off_t) -> Int32

/// glibc's `sync_file_range(2)` wrapper, likewise declared only under `_GNU_SOURCE`.
@_silgen_name("sync_file_range")
private func linuxSyncFileRange(_ fd: Int32, _ offset: off_t, _ count: off_t, _ flags: UInt32) -> Int32
#endif
