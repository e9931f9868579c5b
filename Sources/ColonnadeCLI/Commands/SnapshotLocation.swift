import Colonnade
import Foundation

/// Which snapshot a command uses when `--snapshot` is not given, from whatever directory it runs.
///
/// Reading: `--snapshot`, else `$COLONNADE_SNAPSHOT`, else `./snapshots/quotes.snapshot` if it
/// exists, else `${XDG_DATA_HOME:-~/.local/share}/colonnade/quotes.snapshot` if it exists, else
/// the built-in synthetic sample, generated in memory (``SnapshotSource/sample``), with a note
/// when standard error is a terminal.
///
/// Writing: the same order without the sample: `--snapshot`, else `$COLONNADE_SNAPSHOT`, else
/// `./snapshots/quotes.snapshot` if it exists, else the data-home file, its directory created
/// (mode 0700, as the XDG specification asks); with neither `$XDG_DATA_HOME` nor `$HOME`,
/// `./snapshots/quotes.snapshot`, creating `./snapshots/`. A path the user named (the option or
/// the variable) is never created: if its directory does not exist the write is refused, naming
/// the directory.
struct SnapshotLocation {
    static let environmentVariable = "COLONNADE_SNAPSHOT"
    /// The snapshot in the working directory, when it exists.
    static let localSnapshot = "snapshots/quotes.snapshot"
    /// The snapshot under the data home (`~/.local/share/colonnade/quotes.snapshot`).
    static let dataHomeSnapshot = "colonnade/quotes.snapshot"

    /// The order both lookups follow, for `colonnade help` and option descriptions.
    static let readOrder =
        "--snapshot, else $COLONNADE_SNAPSHOT, else ./snapshots/quotes.snapshot if it exists, "
        + "else ${XDG_DATA_HOME:-~/.local/share}/colonnade/quotes.snapshot if it exists, else the built-in synthetic sample"
    static let writeOrder =
        "--snapshot, else $COLONNADE_SNAPSHOT, else ./snapshots/quotes.snapshot if it exists, "
        + "else ${XDG_DATA_HOME:-~/.local/share}/colonnade/quotes.snapshot (its directory is created)"

    /// What to read.
    ///
    /// - Parameter given: the `--snapshot` typed, if any.
    static func forReading(_ given: String?, context: CommandContext) throws -> SnapshotSource {
        if let named = named(given, context: context) { return .file(named) }
        let local = context.resolve(localSnapshot)
        if FileManager.default.fileExists(atPath: local) { return .file(local) }
        if let home = dataHome(context) {
            let stored = home + "/" + dataHomeSnapshot
            if FileManager.default.fileExists(atPath: stored) { return .file(stored) }
        }
        if context.standardError.isTerminal {
            context.note(
                "no snapshot yet: using the built-in synthetic sample (made-up quotes); "
                    + "add real data with 'colonnade fetch' or 'colonnade import' (see 'colonnade help')")
        }
        return .sample
    }

    /// The path to write; creates the data-home directory (or `./snapshots/`) when that is where
    /// it goes.
    ///
    /// - Parameter given: the `--snapshot` typed, if any.
    /// - Throws: ``CommandFailure`` naming the directory when a named path's directory does not
    ///   exist, or when the default directory cannot be created.
    static func forWriting(_ given: String?, context: CommandContext) throws -> String {
        if let named = named(given, context: context) {
            try requireDirectory(of: named)
            return named
        }
        let local = context.resolve(localSnapshot)
        if FileManager.default.fileExists(atPath: local) { return local }
        if let home = dataHome(context) {
            let path = home + "/" + dataHomeSnapshot
            try createDirectory(of: path)
            return path
        }
        try createDirectory(of: local)
        return local
    }

    /// A path the user named: `--snapshot`, else a non-empty `$COLONNADE_SNAPSHOT`.
    private static func named(_ given: String?, context: CommandContext) -> String? {
        if let given { return context.resolve(given) }
        if let env = context.environment[environmentVariable], !env.isEmpty { return context.resolve(env) }
        return nil
    }

    /// `$XDG_DATA_HOME` when set to an absolute path (the specification ignores relative ones),
    /// else `$HOME/.local/share`, else `nil`.
    static func dataHome(_ context: CommandContext) -> String? {
        if let xdg = context.environment["XDG_DATA_HOME"], xdg.hasPrefix("/") { return trimmingSlash(xdg) }
        if let home = context.environment["HOME"], !home.isEmpty { return trimmingSlash(home) + "/.local/share" }
        return nil
    }

    private static func trimmingSlash(_ path: String) -> String {
        path.count > 1 && path.hasSuffix("/") ? String(path.dropLast()) : path
    }

    /// The directory `path` would be written in.
    static func directory(of path: String) -> String {
        let directory = (path as NSString).deletingLastPathComponent
        return directory.isEmpty ? "." : directory
    }

    /// Refuses `path` when its directory does not exist (or is not a directory), naming it.
    static func requireDirectory(of path: String) throws {
        let directory = directory(of: path)
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            guard isDirectory.boolValue else {
                throw CommandFailure("cannot write \(path): \(directory) is not a directory", hint: "choose another path")
            }
            return
        }
        throw CommandFailure(
            "cannot write \(path): the directory \(directory) does not exist",
            hint: "create it first ('mkdir -p \(directory)') or choose another path")
    }

    /// Creates `path`'s directory and its missing parents (mode 0700) if they do not exist.
    private static func createDirectory(of path: String) throws {
        let directory = directory(of: path)
        if let code = makeDirectories(directory) {
            throw CommandFailure(
                "cannot create the directory \(directory) for \(path): \(systemMessage(code))",
                hint: "pass --snapshot PATH or set $\(environmentVariable) to a writable place")
        }
    }

    /// `mkdir -p -m 0700 directory`: `nil` on success (also when it exists), else the `errno`.
    private static func makeDirectories(_ directory: String) -> Int32? {
        var isDirectory: ObjCBool = false
        if FileManager.default.fileExists(atPath: directory, isDirectory: &isDirectory) {
            return isDirectory.boolValue ? nil : ENOTDIR
        }
        let parent = (directory as NSString).deletingLastPathComponent
        if !parent.isEmpty, parent != directory, let code = makeDirectories(parent) { return code }
        if mkdir(directory, 0o700) != 0 && errno != EEXIST { return errno }
        return nil
    }
}

extension CommandContext {
    /// Writes `note: message` to standard error.
    func note(_ message: String) {
        try? standardError.writeLine("note: " + TerminalText.escaped(message))
    }

    /// Writes the note that another process holds the write lock of the snapshot at `path`, from
    /// any thread (the ingest layer's lock callback).
    func waitingNoter(path: String) -> @Sendable (Int32?) -> Void {
        let log = SynchronizedWriter(standardError)
        return { holder in log.writeLine("note: " + TerminalText.escaped(SnapshotLocation.waitingNote(path: path, holder: holder))) }
    }
}
