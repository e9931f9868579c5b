import Colonnade
import DataLink

/// One `colonnade` subcommand: a declaration the parser checks arguments against, and the work.
///
/// To implement a command, declare a type whose options are ``OptionKey``s in a nested
/// `Options` namespace, whose ``CommandSpec`` lists them (the declarations live in
/// `CommandSpec+Colonnade.swift`), and which does its work in ``run(_:context:)``, reading the
/// values through the same keys; then list it in ``CommandLineTool/colonnade``:
///
///     struct VerifyCommand: Command {
///         enum Options { static let snapshot = OptionKey.string("snapshot", value: "PATH", abstract: "…") }
///         var spec: CommandSpec { .verify }   // options: [Options.snapshot.spec]
///         func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32 {
///             let path = context.resolve(parsed[Options.snapshot] ?? "snapshots/sample.snapshot")
///             try context.standardOutput.writeLine("ok \(path)")
///             return ExitStatus.success
///         }
///     }
///
/// `run` only ever sees arguments that passed the spec's checks. Data goes to
/// `context.standardOutput`, messages to `context.standardError`. Throw rather than print on
/// failure: the top level turns any error into one `error:` line (and a `hint:` line) on
/// stderr and exit status 1, through ``ErrorReport`` — conform an error type to
/// ``CLIReportableError`` to choose its words; throw ``UsageError`` for a command-line mistake
/// the spec could not catch (exit status 2, with the usage line).
protocol Command {
    /// The declaration: name, help text, options, constraints.
    var spec: CommandSpec { get }

    /// Does the command's work.
    ///
    /// - Returns: The exit status, normally ``ExitStatus/success``.
    /// - Throws: Anything; see ``ErrorReport`` for how it is shown.
    func run(_ parsed: ParsedArguments, context: CommandContext) throws -> Int32
}

/// The exit statuses `colonnade` uses.
enum ExitStatus {
    /// The command did what was asked (also when a reader closed the output pipe early).
    static let success: Int32 = 0
    /// A runtime failure: a missing file, a corrupt snapshot, a network error.
    static let failure: Int32 = 1
    /// A command-line mistake: unknown option, bad value, missing argument.
    static let usage: Int32 = 2
    /// `verify --adjustments`: the file is whole, but some ticker's adjusted history breaks
    /// WIKI's rule (docs/ADJUSTMENTS.md).
    static let staleAdjustments: Int32 = 3
}

/// Knobs that only tests set, in process, on a ``CommandContext``: the shipped binary reads no
/// hidden test switch from its environment or its arguments.
struct TestTuning: Sendable {
    /// Import the ordinary way (decode, then upsert and save), never straight into a new snapshot
    /// file (`ImportOptions.ordinaryPathOnly`), so a test can compare the two.
    var ordinaryImport = false
    /// A smaller response limit than the client's default (512 MiB), so a test need not send
    /// half a gigabyte.
    var maximumResponseBytes: Int?
    /// A shorter first wait between a bulk export's status requests.
    var exportFirstPoll: Duration?
    /// How long work runs before its progress line appears (else ``ImportProgressLine/defaultDelay``,
    /// a second), so a test need not work for a whole second to see the line.
    var progressDelay: Duration?
    /// How `fetch` sends its requests when `COLONNADE_TRANSFER_EXECUTABLE` is set empty: the
    /// tests' `.urlSession`, in their own process. The `colonnade` executable has none (it does
    /// not link FoundationNetworking).
    var inProcessTransport: HTTPTransport?
}

/// What a command may touch of its process, passed in so tests can run commands in-process
/// with captured output, a chosen environment and a chosen working directory.
struct CommandContext {
    /// Where data goes (rows, help text, the version).
    var standardOutput: any OutputWriter
    /// Where messages go (errors, warnings, progress, `--timing`).
    var standardError: any OutputWriter
    /// Environment variables (for example an API key).
    var environment: [String: String]
    /// The directory relative paths are resolved against; absolute.
    var currentDirectory: String
    /// Knobs only in-process tests set (never the environment or a flag).
    var tuning = TestTuning()
    /// The command line's arguments (without the program name), for the version a write records.
    var arguments: [String] = []

    /// Creates a context.
    init(
        standardOutput: any OutputWriter,
        standardError: any OutputWriter,
        environment: [String: String],
        currentDirectory: String
    ) {
        self.standardOutput = standardOutput
        self.standardError = standardError
        self.environment = environment
        self.currentDirectory = currentDirectory
    }

    /// How long work runs before its progress line appears: a second, or a test's ``TestTuning/progressDelay``.
    var progressDelay: Duration { tuning.progressDelay ?? ImportProgressLine.defaultDelay }

    /// `path` made absolute against ``currentDirectory`` (unchanged when already absolute).
    /// `-` is returned as is: by convention it means standard input or output.
    func resolve(_ path: String) -> String {
        if path.hasPrefix("/") || path == "-" { return path }
        let base = currentDirectory.hasSuffix("/") ? currentDirectory : currentDirectory + "/"
        return base + path
    }

    /// Writes `warning: message` on its own line to standard error, ignoring failures to do so;
    /// the message quotes tickers and names, so it is escaped (`TerminalText`) and stays one line.
    func warn(_ message: String) {
        try? standardError.writeLine("warning: " + TerminalText.escaped(message))
    }
}
