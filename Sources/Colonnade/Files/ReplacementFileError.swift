#if canImport(Glibc)
import Glibc
#endif

/// Why a file could not be replaced (or created) safely. Every case names the path as the caller
/// gave it; the file there is untouched whenever one of these is thrown.
public enum ReplacementFileError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The directory the file would go in does not exist.
    case noSuchDirectory(path: String)
    /// The path names a directory.
    case isADirectory(path: String)
    /// The path names something other than a regular file (a FIFO, a socket, a device); `kind`
    /// says what, e.g. "a FIFO (named pipe)".
    case notARegularFile(path: String, kind: String)
    /// The path is a symbolic link (possibly through others) to `target`, which does not exist.
    case danglingSymlink(path: String, target: String)
    /// The file exists and we may not write it (for root: no write bit is set at all); `mode`
    /// is its permission bits, e.g. 0o444. The directory would allow replacing it, but its
    /// owner marked it read-only.
    case readOnly(path: String, mode: UInt32)
    /// The process may not create files in the directory (or search the path).
    case permissionDenied(path: String, operation: String)
    /// A system call failed: its name and `errno`.
    case ioError(path: String, operation: String, errno: Int32)

    /// The path as given.
    public var path: String {
        switch self {
        case let .noSuchDirectory(p), let .isADirectory(p), let .notARegularFile(p, _), let .danglingSymlink(p, _),
            let .readOnly(p, _), let .permissionDenied(p, _), let .ioError(p, _, _):
            p
        }
    }

    /// One line, naming the path and what is wrong.
    public var description: String {
        switch self {
        case let .noSuchDirectory(p):
            "\(p): no such directory"
        case let .isADirectory(p):
            "\(p): is a directory"
        case let .notARegularFile(p, kind):
            "\(p): is \(kind), not a regular file"
        case let .danglingSymlink(p, target):
            "\(p): is a symbolic link to \(target), which does not exist"
        case let .readOnly(p, mode):
            "\(p): is read-only (mode \(FileTarget.octal(mode))); not replacing it"
        case let .permissionDenied(p, op):
            "\(p): permission denied (\(op))"
        case let .ioError(p, op, e):
            "\(p): \(op) failed: \(FileTarget.errnoText(e)) (errno \(e))"
        }
    }

    /// The error for a failed system call on `path`, mapping the errno values users meet to cases.
    static func system(_ path: String, _ operation: String, _ code: Int32) -> ReplacementFileError {
        switch code {
        case ENOENT, ENOTDIR: .noSuchDirectory(path: path)
        case EACCES, EPERM, EROFS: .permissionDenied(path: path, operation: operation)
        case EISDIR: .isADirectory(path: path)
        default: .ioError(path: path, operation: operation, errno: code)
        }
    }
}
