import DataLinkFormat
import Foundation

/// A Nasdaq Data Link API key that never shows itself.
///
/// `print`, string interpolation, `String(reflecting:)`, `dump` and mirrors all render it as
/// `APIKey(redacted)`. The client sends it only in the `X-Api-Token` request header, never in
/// a URL, and removes it from every error message and log line (servers echo unknown keys
/// back: QEAx01 "We could not recognize your API key: '…'").
///
/// ```swift
/// let key = APIKey("sk-…")!        // trims whitespace; nil when empty or multi-line
/// print(key)                        // APIKey(redacted)
/// ```
public struct APIKey: Sendable, Hashable, CustomStringConvertible, CustomDebugStringConvertible, CustomReflectable {
    /// The key itself; internal so that only the request builder and the redactor read it.
    let value: String

    /// A key from text: surrounding whitespace is removed; nil when nothing is left or when it
    /// contains control characters (a CR/LF would let the key inject request headers).
    public init?(_ text: String) {
        let trimmed = text.trimmingASCIIWhitespace()
        guard !trimmed.isEmpty, !trimmed.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            return nil
        }
        value = trimmed
    }

    /// Always `APIKey(redacted)`.
    public var description: String { "APIKey(redacted)" }
    /// Always `APIKey(redacted)`.
    public var debugDescription: String { "APIKey(redacted)" }
    /// A mirror that hides the key.
    public var customMirror: Mirror { Mirror(self, children: ["key": "<redacted>"], displayStyle: .struct) }

    /// `text` with every occurrence of this key replaced by `<redacted>`: for a caller's own
    /// last line of defence on everything it prints (the CLI passes all of standard error
    /// through it). The client already removes the key from its errors, logs and bodies.
    public func redact(_ text: String) -> String { Redactor(key: self)(text) }
}

/// Why a key source that was asked for could not give a key.
public enum APIKeyError: Error, Equatable, CustomStringConvertible {
    /// The file could not be read (missing, a directory, no permission).
    case unreadableFile(path: String)
    /// The file has no non-empty line, or its first non-empty line is not a usable key.
    case noKeyInFile(path: String)

    public var description: String {
        switch self {
        case .unreadableFile(let path): "cannot read API key file \(path)"
        case .noKeyInFile(let path): "API key file \(path) has no usable key on its first non-empty line"
        }
    }
}

extension APIKey {
    /// Environment variables consulted, in order.
    public static let environmentVariables = ["NASDAQ_DATA_LINK_API_KEY", "QUANDL_API_KEY"]
    /// The key file the official Python client uses, relative to the home directory.
    public static let defaultKeyFile = ".nasdaq/data_link_apikey"

    /// Finds the key the user configured, or nil for anonymous access.
    ///
    /// Order:
    /// 1. `explicitKeyFile` (the CLI's `--api-key-file PATH`) when given: the user named it, so it
    ///    wins, and a missing or empty file is an error rather than a silent fallback;
    /// 2. `NASDAQ_DATA_LINK_API_KEY`, then `QUANDL_API_KEY` (empty or blank values are ignored);
    /// 3. the first non-empty (trimmed) line of `<home>/.nasdaq/data_link_apikey`, if that file
    ///    exists (an existing file without a key is an error).
    ///
    /// - Parameters:
    ///   - environment: usually `ProcessInfo.processInfo.environment`.
    ///   - homeDirectory: usually `FileManager.default.homeDirectoryForCurrentUser`; nil skips step 3.
    ///   - explicitKeyFile: a path given on the command line, or nil.
    /// - Returns: the key, or nil when no source provides one.
    /// - Throws: ``APIKeyError`` when a file that must hold a key does not.
    public static func resolve(
        environment: [String: String],
        homeDirectory: URL?,
        explicitKeyFile: String? = nil
    ) throws(APIKeyError) -> APIKey? {
        if let explicitKeyFile {
            return try readKeyFile(URL(fileURLWithPath: explicitKeyFile), mustExist: true)
        }
        for name in environmentVariables {
            if let text = environment[name], let key = APIKey(text) { return key }
        }
        if let homeDirectory {
            return try readKeyFile(homeDirectory.appendingPathComponent(defaultKeyFile), mustExist: false)
        }
        return nil
    }

    private static func readKeyFile(_ url: URL, mustExist: Bool) throws(APIKeyError) -> APIKey? {
        let path = url.path
        guard FileManager.default.fileExists(atPath: path) else {
            if mustExist { throw .unreadableFile(path: path) }
            return nil
        }
        // Only a regular file is read: reading a FIFO would wait for a writer forever.
        var status = stat()
        guard stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG else { throw .unreadableFile(path: path) }
        guard let data = try? Data(contentsOf: url) else { throw .unreadableFile(path: path) }
        let text = String(decoding: data, as: UTF8.self)
        let firstLine = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
            .map { $0.trimmingASCIIWhitespace() }
            .first { !$0.isEmpty }
        guard let firstLine, let key = APIKey(firstLine) else { throw .noKeyInFile(path: path) }
        return key
    }
}
