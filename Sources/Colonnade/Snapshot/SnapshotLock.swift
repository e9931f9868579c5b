#if canImport(Glibc)
import Glibc
#endif

/// The write lock of one snapshot: an exclusive `flock` on `NAME.lock` beside the snapshot file
/// (beside the link's target when the path is a symbolic link, so every path to one file shares
/// one lock). Writers hold it from before they load until after they rename the new file into
/// place, so two read-modify-write cycles never interleave and no update is lost. Readers never
/// take it: they map whichever whole file the path names.
///
///     let lock = try SnapshotLock(snapshotAt: "snapshots/quotes.snapshot")
///     var table = try QuoteTable.load(from: "snapshots/quotes.snapshot")
///     table.upsert(more)
///     try table.save(to: "snapshots/quotes.snapshot")
///     lock.release()
///
/// `QuoteTable.update(at:wait:verify:durable:whileWaiting:_:)` does exactly this. The holder's
/// PID is written into the lock file, so a waiting writer can say whom it waits for. The lock
/// file is left in place when released (removing it could let two writers lock two different
/// files); the kernel drops the lock when the holder exits, however it ends.
package final class SnapshotLock {
    /// The snapshot path as given.
    package let snapshotPath: String
    /// The lock file: the snapshot's resolved path with `.lock` appended.
    package let lockPath: String
    private(set) var descriptor: Int32

    /// Takes the lock for the snapshot at `path` (which need not exist yet).
    ///
    /// - Parameters:
    ///   - wait: when another process holds the lock, wait for it (`true`) or throw `locked` at
    ///     once (`false`).
    ///   - whileWaiting: called once, before waiting, with the holder's PID if known.
    /// - Throws: `SnapshotError`: `locked` (with `wait: false`), `danglingSymlink`,
    ///   `isADirectory`, `notARegularFile`, `noSuchFile` (no such directory), `permissionDenied`,
    ///   `ioError`.
    package init(
        snapshotAt path: String, wait: Bool = true,
        whileWaiting: (_ holder: Int32?) -> Void = { _ in }
    ) throws(SnapshotError) {
        let target: FileTarget
        do { target = try FileTarget(forWriting: path) } catch { throw SnapshotError(error, file: path) }
        snapshotPath = path
        lockPath = target.resolvedPath + ".lock"
        var announced = false
        while true {
            let fd = try Self.openLockFile(lockPath, file: path)
            if flock(fd, LOCK_EX | LOCK_NB) != 0 {
                guard errno == EWOULDBLOCK || errno == EINTR else {
                    let code = errno
                    close(fd)
                    throw SnapshotError.system(path, "flock", code)
                }
                let holder = Self.holder(fd)
                if !wait {
                    close(fd)
                    throw .locked(file: path, lockFile: lockPath, holder: holder)
                }
                if !announced {
                    whileWaiting(holder)
                    announced = true
                }
                if SystemCall.retryingOnInterrupt({ flock(fd, LOCK_EX) }) != 0 {
                    let code = errno
                    close(fd)
                    throw SnapshotError.system(path, "flock", code)
                }
            }
            // The lock counts only if the file we locked is still the one at lockPath (nobody
            // removed or replaced it meanwhile); otherwise lock the new one.
            var held = stat(), named = stat()
            if fstat(fd, &held) == 0, lstat(lockPath, &named) == 0, held.st_ino == named.st_ino, held.st_dev == named.st_dev {
                descriptor = fd
                break
            }
            close(fd)
        }
        let text = Array("\(getpid())\n".utf8)
        _ = ftruncate(descriptor, 0)
        _ = text.withUnsafeBytes { SystemCall.writeAll(descriptor, $0.baseAddress, $0.count, at: 0) }
    }

    deinit { release() }

    /// Releases the lock (also done when the lock is deinitialized or the process ends).
    package func release() {
        guard descriptor >= 0 else { return }
        _ = ftruncate(descriptor, 0)
        // Unlocked explicitly before the close: the lock belongs to the open file description,
        // which a child forked meanwhile (by this process, before its exec closes the
        // close-on-exec descriptor) also holds; closing ours alone would leave it locked until
        // that child's exec, and a writer right after this one would wait for it.
        _ = flock(descriptor, LOCK_UN)
        close(descriptor)
        descriptor = -1
    }

    /// Opens (creating if needed) the lock file: never through a symbolic link, never blocking
    /// on a FIFO; read-only when we may not write it (the lock works all the same, only the PID
    /// is not recorded).
    private static func openLockFile(_ lockPath: String, file: String) throws(SnapshotError) -> Int32 {
        var fd = open(lockPath, O_RDWR | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o644)
        if fd < 0 && errno == EACCES { fd = open(lockPath, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC) }
        if fd < 0 {
            if errno == ELOOP { throw .notARegularFile(file: lockPath, kind: "a symbolic link") }
            throw SnapshotError.system(file, "open lock file \(lockPath)", errno)
        }
        var st = stat()
        guard fstat(fd, &st) == 0 else {
            let code = errno
            close(fd)
            throw SnapshotError.system(file, "fstat lock file", code)
        }
        guard (st.st_mode & S_IFMT) == S_IFREG else {
            close(fd)
            throw .notARegularFile(file: lockPath, kind: FileTarget.kind(st.st_mode))
        }
        return fd
    }

    /// The PID written in the lock file, if there is one.
    private static func holder(_ fd: Int32) -> Int32? {
        var buffer = [UInt8](repeating: 0, count: 24)
        let n = buffer.withUnsafeMutableBytes { SystemCall.readFully(fd, $0.baseAddress!, $0.count, at: 0) }
        guard n > 0 else { return nil }
        let text = String(decoding: buffer.prefix(n), as: UTF8.self).trimmingSuffix("\n")
        return Int32(text).flatMap { $0 > 0 ? $0 : nil }
    }
}

private extension String {
    func trimmingSuffix(_ suffix: String) -> String { hasSuffix(suffix) ? String(dropLast(suffix.count)) : self }
}
