/// What can go wrong reading or writing a Delta Lake table. ARCHITECTURE.md, Interop.
public enum DeltaError: Error, CustomStringConvertible {
    /// The directory has no `_delta_log/` with a commit.
    case notATable(path: String)
    /// The table needs a protocol version or feature Colonnade does not implement.
    case unsupportedProtocol(path: String, detail: String)
    /// The table's settings forbid the operation (appendOnly, invariants, another schema).
    case refused(path: String, detail: String)
    /// A commit file that is not valid: the file, its line (1-based), what is wrong.
    case malformed(file: String, line: Int, detail: String)
    /// `--delta-version` names a version the log does not have.
    case noSuchVersion(path: String, version: Int, latest: Int)
    /// Another writer committed the version first, every retry.
    case conflict(path: String, version: Int)
    /// A system call failed.
    case io(file: String, operation: String, errno: Int32)
    /// Writing or reading a data file failed.
    case data(InteropError)

    public var description: String {
        switch self {
        case .notATable(let path):
            "\(path): not a Delta table (no commits in \(path)/_delta_log)"
        case .unsupportedProtocol(let path, let detail):
            "\(path): \(detail)"
        case .refused(let path, let detail):
            "\(path): \(detail)"
        case .malformed(let file, let line, let detail):
            "\(file):\(line): \(detail)"
        case .noSuchVersion(let path, let version, let latest):
            "\(path): the table has no version \(version) (versions 0 to \(latest))"
        case .conflict(let path, let version):
            "\(path): another writer committed version \(version) at the same time, and again on every retry; nothing of this export is in the table"
        case .io(let file, let operation, let code):
            "\(file): \(operation) failed: \(FileTarget.errnoText(code))"
        case .data(let error):
            error.description
        }
    }
}
