import Colonnade
import DataLinkFormat

/// A bad `--where` expression: the message, then the expression with a caret under the problem.
struct ExpressionError: CLIReportableError {
    let error: QueryError
    let expression: String
    let option: String

    var message: String { "\(option): \(error)" }

    var excerpt: [String] {
        guard let line = error.line, let column = error.column else { return [] }
        let lines = expression.split(separator: "\n", omittingEmptySubsequences: false)
        guard line >= 1 && line <= lines.count else { return [] }
        return ["  " + lines[line - 1], "  " + String(repeating: " ", count: max(0, column - 1)) + "^"]
    }

    var hint: String? {
        if error.kind == .unknownColumn { return "'colonnade info' lists the columns; quote source names like \"Adj. Close\"" }
        return nil
    }

    /// A bad expression is a usage mistake.
    var exitStatus: Int32 { ExitStatus.usage }
}

extension TableError: CLIReportableError {
    var message: String { description }
}

extension SnapshotError: CLIReportableError {
    var message: String { description }

    var hint: String? {
        switch self {
        case .noSuchFile:
            "create one with 'colonnade generate', 'colonnade import' or 'colonnade fetch', or pass --snapshot PATH"
        case .checksumMismatch, .truncated, .offsetOutOfRange, .malformedFooter, .malformedHeader, .inconsistentData:
            "the file is damaged; 'colonnade verify --snapshot \(file)' lists every problem. Restore it or re-create it"
        case .unsupportedVersion, .unsupportedSection:
            "upgrade Colonnade to read this file"
        case .notASnapshot:
            "to read Nasdaq Data Link JSON or CSV responses, use 'colonnade import FILE'"
        case .notARegularFile:
            "a snapshot is a regular file; pass its path with --snapshot PATH"
        case .danglingSymlink:
            "create the link's target (or remove the link) first; colonnade does not start a new snapshot behind a broken link"
        case let .readOnly(f, _):
            "make it writable ('chmod u+w \(f)') to replace it, or write to another --snapshot"
        case .unsavable:
            "nothing was written; a snapshot holds at most \(QuoteTable.maximumColumnCount) value columns: import the columns you need "
                + "into a snapshot of their own (--snapshot PATH)"
        case let .locked(_, lockFile, _):
            "wait for that process to finish (leave out --no-wait to wait for it); if no such process runs, \(lockFile) is not locked and this cannot happen"
        default:
            nil
        }
    }
}

extension QuoteGenerator.WriteError: CLIReportableError {
    var message: String { description }
}

extension DeltaError: CLIReportableError {
    var message: String { description }

    var hint: String? {
        switch self {
        case .refused(_, let detail) where detail.contains("already there"):
            "pass --mode append to add the rows, or --mode overwrite to replace the partitions they fall in"
        case .refused(_, let detail) where detail.contains("partitioned by"):
            "pass the table's --partition-by, or export to a new directory"
        case .unsupportedProtocol:
            "export the table from its engine as plain Parquet, or without deletion vectors and column mapping"
        case .conflict:
            "run the export again"
        default:
            nil
        }
    }
}
