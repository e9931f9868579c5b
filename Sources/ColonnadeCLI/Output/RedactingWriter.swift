import DataLink
import Synchronization

/// Standard error as every command sees it: each write passes through the API keys it knows
/// (``APIKey/redact(_:)``) before it reaches the destination — the CLI's one redaction point,
/// behind the client's own (which already removes the key from its errors, logs and bodies).
///
/// `runColonnade` wraps standard error with the key the environment or `~/.nasdaq` provides;
/// `fetch` adds a key from `--api-key-file`. Each `write` is redacted whole: commands write
/// whole lines, so a key is never split across two writes.
final class RedactingWriter: OutputWriter, @unchecked Sendable {
    /// The writer the redacted text goes to.
    let destination: any OutputWriter
    // Safe: the keys are behind a mutex; writes to `destination` are serialized by the callers
    // that share it (`SynchronizedWriter`), as for any other writer.
    private let keys: Mutex<[APIKey]>

    /// A writer that removes `keys` from everything written to `destination`.
    init(_ destination: any OutputWriter, keys: [APIKey] = []) {
        self.destination = destination
        self.keys = Mutex(keys)
    }

    /// Adds a key to remove from now on.
    func add(_ key: APIKey) {
        keys.withLock { if !$0.contains(key) { $0.append(key) } }
    }

    func write(_ text: String) throws(OutputError) {
        let redacted = keys.withLock { keys in keys.reduce(text) { $1.redact($0) } }
        try destination.write(redacted)
    }

    var isTerminal: Bool { destination.isTerminal }

    func flush() throws(OutputError) {
        try destination.flush()
    }
}
