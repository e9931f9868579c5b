import Colonnade
import Foundation

/// How commands that write a snapshot take its write lock (`SnapshotLock`): waiting for another
/// writer with a note naming it, or with `--no-wait` failing at once.
extension SnapshotLocation {
    /// Takes the write lock of the snapshot at `path`.
    ///
    /// - Parameter wait: whether to wait for another writer (else fail at once; `--no-wait`).
    static func lock(_ path: String, wait: Bool, context: CommandContext) throws -> SnapshotLock {
        try requireWritableDirectory(of: path)
        return try SnapshotLock(snapshotAt: path, wait: wait) { holder in
            context.note(waitingNote(path: path, holder: holder))
        }
    }

    /// `QuoteTable.update(at:…)` for a command that rewrites the table itself (`adjust`): lock (as
    /// ``lock(_:wait:context:)``), load or start empty, `body`, save (on at most `threads` threads),
    /// unlock. Imports and fetches go through ColonnadeIngest's `QuoteStore` instead.
    @discardableResult
    static func update(
        _ path: String, wait: Bool, threads: Int = QueryOptions.availableCores, context: CommandContext,
        _ body: (inout QuoteTable) throws -> Void
    ) throws -> QuoteTable {
        try requireWritableDirectory(of: path)
        return try QuoteTable.update(
            at: path, wait: wait, threads: threads, command: context.commandText,
            whileWaiting: { holder in
                context.note(waitingNote(path: path, holder: holder))
            }
        ) { table in
            try body(&table)
        }
    }

    /// Refuses a snapshot whose directory this process may not create files in (the lock file
    /// and the replacement go beside it), saying so, before anything is decoded or downloaded.
    static func requireWritableDirectory(of path: String) throws {
        let directory = directory(of: path)
        guard access(directory, W_OK | X_OK) != 0, errno == EACCES || errno == EROFS else { return }
        let why = errno == EROFS ? "a read-only file system" : "permission denied"
        throw CommandFailure(
            "cannot write \(path): \(why) (no new files may be created in \(directory))",
            hint: "choose a directory you may write with --snapshot PATH or $\(environmentVariable)")
    }

    static func waitingNote(path: String, holder: Int32?) -> String {
        "waiting for \(holder.map { "process \($0)" } ?? "another process"), which is writing \(path)"
    }
}
