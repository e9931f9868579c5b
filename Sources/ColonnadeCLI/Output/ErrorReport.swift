import Colonnade
import Foundation

/// An error that knows how `colonnade` should show it: conform an error type to choose its
/// words and exit status.
///
///     extension SnapshotError: CLIReportableError {
///         var message: String { "snapshot '\(path)' is truncated: expected \(expected) bytes, found \(actual)" }
///         var hint: String? { "run 'colonnade verify --snapshot \(path)' for details" }
///     }
protocol CLIReportableError: Error {
    /// One line saying what went wrong and where, without the `error: ` prefix.
    var message: String { get }
    /// The obvious next step, if there is one; `nil` by default.
    var hint: String? { get }
    /// The exit status; ``ExitStatus/failure`` (1) by default.
    var exitStatus: Int32 { get }
    /// Lines shown verbatim under the message (an expression with a caret); none by default.
    var excerpt: [String] { get }
}

extension CLIReportableError {
    var hint: String? { nil }
    var exitStatus: Int32 { ExitStatus.failure }
    var excerpt: [String] { [] }
}

/// What the user sees for an error: `error: message`, maybe `hint: …`, and the exit status.
/// The single place errors from commands are turned into words; anything that does not
/// conform to ``CLIReportableError`` still gets one line, never a stack trace.
struct ErrorReport: Sendable, Equatable {
    /// One line, without the `error: ` prefix.
    var message: String
    /// One line, without the `hint: ` prefix.
    var hint: String?
    /// The process's exit status.
    var exitStatus: Int32
    /// Lines shown verbatim under the message, for example an expression with a caret under the
    /// problem.
    var excerpt: [String]

    /// Describes `error`.
    init(_ error: any Error) {
        switch error {
        case let error as any CLIReportableError:
            self.init(message: error.message, hint: error.hint, exitStatus: error.exitStatus, excerpt: error.excerpt)
        case let error as CocoaError:
            // Foundation's file errors carry a readable description (with the path).
            self.init(message: error.localizedDescription, hint: nil, exitStatus: ExitStatus.failure)
        default:
            self.init(message: String(describing: error), hint: nil, exitStatus: ExitStatus.failure)
        }
    }

    private init(message: String, hint: String?, exitStatus: Int32, excerpt: [String] = []) {
        self.message = singleLine(message)
        self.hint = hint.map(singleLine)
        self.exitStatus = exitStatus
        self.excerpt = excerpt.map(singleLine)
    }

    /// Writes the report to `writer` (standard error), ignoring failures to do so: there is
    /// nowhere left to report them.
    func write(to writer: any OutputWriter) {
        try? writer.writeLine("error: " + message)
        for line in excerpt { try? writer.writeLine(line) }
        if let hint { try? writer.writeLine("hint: " + hint) }
    }
}

extension OutputError: CLIReportableError {
    var message: String {
        switch self {
        case .brokenPipe:
            "cannot write: the reader closed the pipe"
        case .writeFailed(let destination, let code):
            "cannot write to \(destination): \(systemMessage(code))"
        case .cannotOpen(let path, let code):
            "cannot create '\(path)': \(systemMessage(code))"
        case .cannotReplace(let reason):
            "cannot write \(reason)"
        }
    }

    var hint: String? {
        switch self {
        case .cannotReplace(.readOnly(let path, _)):
            "make it writable ('chmod u+w \(path)') to replace it, or write to another file"
        case .cannotReplace(.danglingSymlink):
            "create the link's target, or write to another file"
        default:
            nil
        }
    }
}

/// `strerror(code)`, for messages.
func systemMessage(_ code: Int32) -> String {
    String(cString: strerror(code))
}

/// `text` with line breaks turned into spaces, so a report stays one line per part, and every
/// other terminal control character escaped (`TerminalText`): messages quote file names,
/// tickers, column names and server text.
private func singleLine(_ text: String) -> String {
    TerminalText.escaped(text, lineBreaks: .spaces)
}
