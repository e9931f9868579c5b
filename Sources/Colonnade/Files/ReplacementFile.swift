#if canImport(Glibc)
import Glibc
#endif

/// A new version of a file, written to a temporary beside it and renamed over it only when
/// complete, so that the file at the path is always either the old one, whole, or the new one,
/// whole — whatever happens meanwhile (a full disk, a crash, Ctrl-C, a power loss with `durable`).
///
///     let file = try ReplacementFile(replacing: "out/quotes.csv")
///     try write(file.fileDescriptor, …)
///     try file.commit()          // fsync, rename over out/quotes.csv, fsync the directory
///
/// What it guarantees:
/// - **The target**: resolved with ``FileTarget`` (a symbolic link is written through to its
///   target and stays a link; a dangling link, a directory or a FIFO is refused). An existing
///   target that is read-only for us is refused (``ReplacementFileError/readOnly(path:mode:)``)
///   before anything is written.
/// - **Permissions**: the new file gets the replaced file's mode and, where the process may
///   (root, or a group it belongs to), its owner and group; otherwise it belongs to us. A new
///   file is created with `defaultMode` (less the umask).
/// - **The temporary**: `.NAME.tmp-PID-RANDOM` in the target's directory, created with `O_EXCL`
///   and holding an exclusive `flock` until it is renamed or removed. Temporaries left by savers
///   that died (Ctrl-C, a crash) are removed by the next replacement of the same target — only
///   those whose lock can be taken, so a live saver's temporary is never touched, whatever its
///   PID says (PIDs are not unique across PID namespaces).
/// - **Released without ``commit(durable:)``** (an error was thrown while writing), the temporary
///   is removed and the target is untouched.
///
/// Not thread-safe; one writer per instance.
package final class ReplacementFile {
    /// The path as given.
    package let path: String
    /// What is replaced (see ``FileTarget``).
    package let target: FileTarget
    /// The temporary being written.
    package let temporaryPath: String
    /// The temporary's descriptor, open for writing.
    package let fileDescriptor: Int32
    private var finished = false

    /// Creates the temporary beside `path`'s target (after removing stale temporaries of it).
    ///
    /// - Parameters:
    ///   - defaultMode: permission bits of a new file (the umask applies); a replaced file's bits
    ///     are carried over instead.
    ///   - readable: open the temporary for reading too (`O_RDWR`), as a shared writable
    ///     `mmap` of it needs (`SnapshotDraft`).
    /// - Throws: `ReplacementFileError`; nothing was created then.
    package init(replacing path: String, defaultMode: mode_t = 0o644, readable: Bool = false) throws(ReplacementFileError) {
        if path.isEmpty || path.hasSuffix("/") { throw .isADirectory(path: path) }
        let target = try FileTarget(forWriting: path)
        try target.checkWritable()
        let directory = FileTarget.directory(of: target.resolvedPath)
        let name = FileTarget.name(of: target.resolvedPath)
        var st = stat()
        guard stat(directory, &st) == 0 else { throw .system(path, "stat directory", errno) }
        guard (st.st_mode & S_IFMT) == S_IFDIR else { throw .noSuchDirectory(path: path) }
        Self.removeStaleTemporaries(directory: directory, name: name)

        var created: (String, Int32)?
        for _ in 0 ..< 8 {
            let candidate = directory + "/." + name + ".tmp-\(getpid())-" + SystemRandomNumberGenerator().nextHex()
            let fd = SystemCall.retryingOnInterrupt {
                Glibc.open(candidate, (readable ? O_RDWR : O_WRONLY) | O_CREAT | O_EXCL | O_CLOEXEC | O_NOFOLLOW, defaultMode)
            }
            if fd < 0 {
                if errno == EEXIST { continue }
                throw .system(path, "create temporary file", errno)
            }
            // Between open and flock another saver's cleanup may have taken the lock and removed
            // the name; then this inode is unlinked (or about to be) and we start again.
            var linked = stat()
            if flock(fd, LOCK_EX | LOCK_NB) == 0, fstat(fd, &linked) == 0, linked.st_nlink > 0 {
                created = (candidate, fd)
                break
            }
            close(fd)
        }
        guard let (temporary, fd) = created else { throw .ioError(path: path, operation: "create temporary file", errno: EEXIST) }
        self.path = path
        self.target = target
        self.temporaryPath = temporary
        self.fileDescriptor = fd
        if let old = target.status {
            // Owner first: fchown clears set-user-ID bits, fchmod then sets the final mode.
            if old.st_uid != geteuid() || old.st_gid != getegid() {
                if fchown(fd, old.st_uid, old.st_gid) != 0 && errno != EPERM {
                    let code = errno
                    discard()
                    throw .system(path, "fchown temporary file", code)
                }
            }
            if fchmod(fd, old.st_mode & 0o7777) != 0 {
                let code = errno
                discard()
                throw .system(path, "fchmod temporary file", code)
            }
        }
    }

    deinit { discard() }

    /// Makes the new file the target: `fsync` (with `durable`), rename over the target, `fsync`
    /// the directory (with `durable`), close. Once it returns, the new contents are in place.
    ///
    /// - Parameter durable: `false` skips both `fsync` calls: the rename is still atomic for other
    ///   processes, but a power loss may lose the new file.
    /// - Throws: `ReplacementFileError`; the temporary is removed and the target untouched then.
    package func commit(durable: Bool = true) throws(ReplacementFileError) {
        precondition(!finished, "commit() after commit() or discard()")
        if durable {
            if SystemCall.retryingOnInterrupt({ fsync(fileDescriptor) }) != 0 {
                let code = errno
                discard()
                throw .system(path, "fsync", code)
            }
        }
        // The descriptor (and its lock) stays open across the rename, so no cleanup can remove
        // the temporary before it becomes the target.
        if rename(temporaryPath, target.resolvedPath) != 0 {
            let code = errno
            discard()
            throw .system(path, "rename", code)
        }
        finished = true
        let closed = close(fileDescriptor)
        let closeError = errno
        if durable {
            let directory = FileTarget.directory(of: target.resolvedPath)
            let dfd = SystemCall.retryingOnInterrupt { Glibc.open(directory, O_RDONLY | O_DIRECTORY | O_CLOEXEC) }
            guard dfd >= 0 else { throw .system(path, "open directory", errno) }
            defer { close(dfd) }
            // Some filesystems cannot fsync directories (EINVAL, EBADF); that is not a failure of the save.
            if SystemCall.retryingOnInterrupt({ fsync(dfd) }) != 0 && errno != EINVAL && errno != EBADF {
                throw .system(path, "fsync directory", errno)
            }
        }
        if closed != 0 && closeError != EINTR { throw .system(path, "close", closeError) }
    }

    /// Removes the temporary; the target is untouched. Does nothing after ``commit(durable:)``.
    package func discard() {
        guard !finished else { return }
        finished = true
        unlink(temporaryPath)
        close(fileDescriptor)
    }

    /// Removes `.NAME.tmp-*` files in `directory` that no live writer holds: each is opened
    /// (never following links, never blocking) and removed only if its `flock` can be taken.
    static func removeStaleTemporaries(directory: String, name: String) {
        guard let dir = opendir(directory) else { return }
        defer { closedir(dir) }
        let prefix = "." + name + ".tmp-"
        var candidates = [String]()
        while let entry = readdir(dir) {
            let entryName = DirectoryEntry.name(entry)
            if entryName.hasPrefix(prefix) { candidates.append(entryName) }
        }
        for candidate in candidates {
            let full = directory + "/" + candidate
            let fd = Glibc.open(full, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC)
            guard fd >= 0 else { continue }
            defer { close(fd) }
            var st = stat()
            guard fstat(fd, &st) == 0, (st.st_mode & S_IFMT) == S_IFREG else { continue }
            guard flock(fd, LOCK_EX | LOCK_NB) == 0 else { continue }  // a live writer holds it
            // Remove the name only if it still names the file we locked.
            var now = stat()
            if lstat(full, &now) == 0, now.st_ino == st.st_ino, now.st_dev == st.st_dev { unlink(full) }
        }
    }
}

extension SystemRandomNumberGenerator {
    /// 16 random hexadecimal digits.
    func nextHex() -> String {
        var g = self
        let digits = String(g.next() as UInt64, radix: 16)
        return String(repeating: "0", count: 16 - digits.count) + digits
    }
}
