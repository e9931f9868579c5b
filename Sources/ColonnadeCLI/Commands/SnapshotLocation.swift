import Foundation

/// Which snapshot file a command uses when `--snapshot` is not given.
///
/// Reading: `--snapshot`, else `$COLONNADE_SNAPSHOT`, else `snapshots/quotes.snapshot` when it
/// exists, else the bundled synthetic sample `snapshots/sample.snapshot` (with a note on stderr).
/// Writing: `--snapshot`, else `$COLONNADE_SNAPSHOT`, else `snapshots/quotes.snapshot` — never the
/// bundled sample by default.
struct SnapshotLocation {
    static let environmentVariable = "COLONNADE_SNAPSHOT"

    /// The path to read, and whether it is the bundled sample.
    ///
    /// - Parameter given: the `--snapshot` typed, if any.
    static func forReading(_ given: String?, context: CommandContext) throws -> (path: String, isSample: Bool) {
        if let given { return (context.resolve(given), false) }
        if let env = context.environment[environmentVariable], !env.isEmpty { return (context.resolve(env), false) }
        let quotes = context.resolve(CommandSpec.defaultWritableSnapshot)
        if FileManager.default.fileExists(atPath: quotes) { return (quotes, false) }
        for candidate in sampleCandidates(context) where FileManager.default.fileExists(atPath: candidate) {
            context.note("using the bundled synthetic sample \(CommandSpec.sampleSnapshot) (made-up quotes); "
                + "fetch real data with 'colonnade fetch AAPL MSFT' or import saved files with 'colonnade import FILE…'")
            return (candidate, true)
        }
        throw CommandFailure("no snapshot to read: \(CommandSpec.defaultWritableSnapshot) does not exist and the bundled sample is missing",
                             hint: "pass --snapshot PATH, set $\(environmentVariable), or create one with 'colonnade generate --tickers 10 --days 250 --snapshot \(CommandSpec.defaultWritableSnapshot)'")
    }

    /// The path to write.
    ///
    /// - Parameter given: the `--snapshot` typed, if any.
    static func forWriting(_ given: String?, context: CommandContext) -> String {
        if let given { return context.resolve(given) }
        if let env = context.environment[environmentVariable], !env.isEmpty { return context.resolve(env) }
        return context.resolve(CommandSpec.defaultWritableSnapshot)
    }

    /// The bundled sample relative to the working directory, then to the executable
    /// (`.build/<config>/colonnade` → `../../snapshots/sample.snapshot`).
    private static func sampleCandidates(_ context: CommandContext) -> [String] {
        var out = [context.resolve(CommandSpec.sampleSnapshot)]
        // The running executable: /proc/self/exe works however it was started (through PATH too).
        let selfPath = (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe"))
            ?? CommandLine.arguments.first ?? ""
        let executable = URL(fileURLWithPath: selfPath).resolvingSymlinksInPath()
        var directory = executable.deletingLastPathComponent()
        for _ in 0 ..< 4 {
            out.append(directory.appendingPathComponent(CommandSpec.sampleSnapshot).path)
            directory = directory.deletingLastPathComponent()
        }
        return out
    }
}

extension CommandContext {
    /// Writes `note: message` to standard error.
    func note(_ message: String) {
        try? standardError.writeLine("note: " + TerminalText.escaped(message))
    }
}
