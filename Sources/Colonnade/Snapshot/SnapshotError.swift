#if canImport(Glibc)
import Glibc
#endif

/// Why a snapshot could not be saved, loaded or verified. Every case names the file; those about
/// the file's contents also name the part of it (a section of the format, or a column).
///
/// Sections are named as in `docs/SNAPSHOT_FORMAT.md`: `header`, `trailer`, `footer`, a footer
/// section by its tag (`SCHM`, `TDIC`, `TIDX`, `COLS`, `SUMM`, `META`), or `payload`.
public enum SnapshotError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file (or, when saving, its directory) does not exist.
    case noSuchFile(file: String)
    /// The process may not read the file or write its directory.
    case permissionDenied(file: String, operation: String)
    /// The path names a directory where a file was expected.
    case isADirectory(file: String)
    /// A system call failed; `errno` and the call's name.
    case ioError(file: String, operation: String, errno: Int32)
    /// The file does not start with the snapshot magic.
    case notASnapshot(file: String)
    /// The file's major version is not the one this build reads.
    case unsupportedVersion(file: String, found: String, supported: String)
    /// The file is shorter than its header says (or than any snapshot can be).
    case truncated(file: String, expected: Int, actual: Int)
    /// A stored checksum does not match the bytes. `column` names the payload's column
    /// (`close`, `close.validity`, or the date column) for payloads, and is nil otherwise.
    case checksumMismatch(file: String, section: String, column: String?, expected: UInt64, actual: UInt64)
    /// An offset or length points outside its region, is misaligned, or overlaps another.
    case offsetOutOfRange(file: String, section: String, detail: String)
    /// The header is damaged in a way its checksum does not explain.
    case malformedHeader(file: String, detail: String)
    /// The footer (or trailer) cannot be decoded, or contradicts itself.
    case malformedFooter(file: String, section: String, detail: String)
    /// A section this build does not know and may not skip.
    case unsupportedSection(file: String, tag: String)
    /// The data breaks an invariant of tables (dates out of order, validity padding set, …).
    case inconsistentData(file: String, section: String, detail: String)
    /// The path names something other than a regular file or a directory (a FIFO, a socket, a
    /// device); `kind` says what. Refused at once, without blocking.
    case notARegularFile(file: String, kind: String)
    /// The path is a symbolic link to `target`, which does not exist. Saving does not start a
    /// new table there (see `FileTarget`).
    case danglingSymlink(file: String, target: String)
    /// The snapshot is read-only for us (its permission bits, `mode`); saving would replace it.
    case readOnly(file: String, mode: UInt32)
    /// Another process holds the snapshot's write lock (`lockFile`) and the caller chose not to
    /// wait; `holder` is its PID when the lock file names one.
    case locked(file: String, lockFile: String, holder: Int32?)
    /// The table cannot be saved as a snapshot (`reason`: more value columns than a snapshot holds,
    /// an unusable column name); nothing was written and the file at `file` is unchanged.
    case unsavable(file: String, reason: String)
    /// A store's version that cannot be read: not in its log (never made, or removed by gc), or
    /// not restorable (the current one).
    case versionUnavailable(file: String, detail: String)

    /// The file the error is about.
    public var file: String {
        switch self {
        case let .noSuchFile(f), let .permissionDenied(f, _), let .isADirectory(f), let .ioError(f, _, _),
            let .notASnapshot(f), let .unsupportedVersion(f, _, _), let .truncated(f, _, _),
            let .checksumMismatch(f, _, _, _, _), let .offsetOutOfRange(f, _, _), let .malformedHeader(f, _),
            let .malformedFooter(f, _, _), let .unsupportedSection(f, _), let .inconsistentData(f, _, _),
            let .notARegularFile(f, _), let .danglingSymlink(f, _), let .readOnly(f, _), let .locked(f, _, _),
            let .unsavable(f, _), let .versionUnavailable(f, _):
            f
        }
    }

    /// One line, naming the file and what is wrong.
    public var description: String {
        switch self {
        case let .noSuchFile(f):
            "\(f): no such file or directory"
        case let .permissionDenied(f, op):
            "\(f): permission denied (\(op))"
        case let .isADirectory(f):
            "\(f): is a directory, not a snapshot file"
        case let .ioError(f, op, e):
            "\(f): \(op) failed: \(SnapshotError.errnoText(e)) (errno \(e))"
        case let .notASnapshot(f):
            "\(f): not a Colonnade snapshot (no COLNSNAP magic)"
        case let .unsupportedVersion(f, found, supported):
            "\(f): snapshot format version \(found) is not supported; this build reads version \(supported)"
        case let .truncated(f, expected, actual):
            "\(f): truncated snapshot: \(actual) bytes, expected \(expected)"
        case let .checksumMismatch(f, section, column, expected, actual):
            "\(f): checksum mismatch in \(section)\(column.map { " (column \($0))" } ?? ""): stored \(hex(expected)), computed \(hex(actual))"
        case let .offsetOutOfRange(f, section, detail):
            "\(f): bad offset in \(section): \(detail)"
        case let .malformedHeader(f, detail):
            "\(f): malformed header: \(detail)"
        case let .malformedFooter(f, section, detail):
            "\(f): malformed footer section \(section): \(detail)"
        case let .unsupportedSection(f, tag):
            "\(f): required footer section '\(tag)' is not known to this build; a newer Colonnade wrote it"
        case let .inconsistentData(f, section, detail):
            "\(f): inconsistent data in \(section): \(detail)"
        case let .notARegularFile(f, kind):
            "\(f): is \(kind), not a regular file"
        case let .danglingSymlink(f, target):
            "\(f): is a symbolic link to \(target), which does not exist"
        case let .readOnly(f, mode):
            "\(f): is read-only (mode \(FileTarget.octal(mode))); not replacing it"
        case let .locked(f, lockFile, holder):
            "\(f): another process\(holder.map { " (PID \($0))" } ?? "") is writing it (lock file \(lockFile))"
        case let .unsavable(f, reason):
            "\(f): not saved: \(reason); the snapshot there is unchanged"
        case let .versionUnavailable(f, detail):
            "\(f): \(detail)"
        }
    }

    /// The error for a failed system call on `file`, mapping the errno values users meet to cases.
    static func system(_ file: String, _ operation: String, _ code: Int32) -> SnapshotError {
        switch code {
        case ENOENT: .noSuchFile(file: file)
        case EACCES, EPERM, EROFS: .permissionDenied(file: file, operation: operation)
        case EISDIR: .isADirectory(file: file)
        default: .ioError(file: file, operation: operation, errno: code)
        }
    }

    /// The same problem as a snapshot error, naming `file`.
    init(_ error: ReplacementFileError, file: String) {
        switch error {
        case .noSuchDirectory: self = .noSuchFile(file: file)
        case .isADirectory: self = .isADirectory(file: file)
        case let .notARegularFile(_, kind): self = .notARegularFile(file: file, kind: kind)
        case let .danglingSymlink(_, target): self = .danglingSymlink(file: file, target: target)
        case let .readOnly(_, mode): self = .readOnly(file: file, mode: mode)
        case let .permissionDenied(_, op): self = .permissionDenied(file: file, operation: op)
        case let .ioError(_, op, code): self = .ioError(file: file, operation: op, errno: code)
        }
    }

    static func errnoText(_ code: Int32) -> String {
        guard let s = strerror(code) else { return "error" }
        return String(cString: s)
    }
}

private func hex(_ x: UInt64) -> String {
    let digits = String(x, radix: 16)
    return "0x" + String(repeating: "0", count: 16 - digits.count) + digits
}
