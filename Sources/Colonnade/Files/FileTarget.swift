#if canImport(Glibc)
import Glibc
#endif

/// The file a write to a path really replaces, found before anything is written.
///
/// - A path that does not exist (`lstat` says ENOENT) is a new file at that path.
/// - A symbolic link is followed, through any chain of links, to its final target, and the write
///   replaces that target: the link stays a link. A link whose final target does not exist (a
///   dangling link) is an error, never a reason to start afresh: it usually means a moved file or
///   an unmounted disk, and replacing the link would hide that.
/// - A regular file is replaced; a directory, FIFO, socket or device is refused at once (nothing
///   is opened, so nothing can block).
///
/// Only the last component is resolved; directories in the path may be links (the kernel follows
/// them as usual).
public struct FileTarget: Sendable {
    /// The path as given (for messages).
    public let path: String
    /// The path of the file that is replaced: `path`, or the final target of the link at `path`.
    public let resolvedPath: String
    /// The target's status, nil when it does not exist yet.
    public let status: stat?

    /// Whether the target exists.
    public var exists: Bool { status != nil }

    /// Resolves `path` as described above.
    /// - Throws: `danglingSymlink`, `isADirectory`, `notARegularFile`, or `ioError` (with ELOOP
    ///   for a chain of more than 40 links, or any other `lstat` failure but ENOENT).
    public init(forWriting path: String) throws(ReplacementFileError) {
        self.path = path
        var current = path
        var followed = 0
        while true {
            var st = stat()
            if lstat(current, &st) != 0 {
                let code = errno
                guard code == ENOENT else { throw .system(path, "lstat", code) }
                if followed > 0 { throw .danglingSymlink(path: path, target: current) }
                resolvedPath = current
                status = nil
                return
            }
            switch st.st_mode & S_IFMT {
            case S_IFREG:
                resolvedPath = current
                status = st
                return
            case S_IFLNK:
                followed += 1
                if followed > 40 { throw .ioError(path: path, operation: "resolve symbolic link", errno: ELOOP) }
                guard let destination = Self.readLink(current) else { throw .system(path, "readlink", errno) }
                current = destination.hasPrefix("/") ? destination : Self.directory(of: current) + "/" + destination
            case S_IFDIR:
                throw .isADirectory(path: path)
            default:
                throw .notARegularFile(path: path, kind: Self.kind(st.st_mode))
            }
        }
    }

    /// Throws `readOnly` when the target exists and we may not write it: for an unprivileged
    /// process, when `faccessat(W_OK, AT_EACCESS)` refuses (mode bits, ACLs); for root, which
    /// the kernel lets write anything, when no write bit is set at all (its owner marked it
    /// read-only). Replacing goes through the directory, so without this check a read-only
    /// file would be replaced silently.
    public func checkWritable() throws(ReplacementFileError) {
        guard let st = status else { return }
        let mode = UInt32(st.st_mode & 0o7777)
        if geteuid() == 0 {
            if st.st_mode & (S_IWUSR | S_IWGRP | S_IWOTH) == 0 { throw .readOnly(path: path, mode: mode) }
        } else if faccessat(AT_FDCWD, resolvedPath, W_OK, AT_EACCESS) != 0 && errno == EACCES {
            throw .readOnly(path: path, mode: mode)
        }
    }

    /// The directory part of `path` (`.` when it has none, `/` for a file at the root).
    static func directory(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return "." }
        let dir = String(path[..<slash])
        return dir.isEmpty ? "/" : dir
    }

    /// The last component of `path`.
    static func name(of path: String) -> String {
        guard let slash = path.lastIndex(of: "/") else { return path }
        return String(path[path.index(after: slash)...])
    }

    /// What a file of this mode is, for messages: "a FIFO (named pipe)", "a socket", ….
    public static func kind(_ mode: mode_t) -> String {
        switch mode & S_IFMT {
        case S_IFREG: "a regular file"
        case S_IFDIR: "a directory"
        case S_IFIFO: "a FIFO (named pipe)"
        case S_IFSOCK: "a socket"
        case S_IFCHR: "a character device"
        case S_IFBLK: "a block device"
        case S_IFLNK: "a symbolic link"
        default: "a special file"
        }
    }

    static func readLink(_ path: String) -> String? {
        var buffer = [UInt8](repeating: 0, count: Int(PATH_MAX) + 1)
        let n = buffer.withUnsafeMutableBufferPointer { b in
            // Safe: at most b.count - 1 bytes are written.
            readlink(path, UnsafeMutableRawPointer(b.baseAddress!).assumingMemoryBound(to: CChar.self), b.count - 1)
        }
        guard n >= 0 else { return nil }
        return String(decoding: buffer.prefix(n), as: UTF8.self)
    }

    /// `0644`-style text of permission bits.
    static func octal(_ mode: UInt32) -> String {
        let digits = String(mode, radix: 8)
        return "0" + String(repeating: "0", count: max(0, 3 - digits.count)) + digits
    }

    static func errnoText(_ code: Int32) -> String {
        guard let s = strerror(code) else { return "error" }
        return String(cString: s)
    }
}
