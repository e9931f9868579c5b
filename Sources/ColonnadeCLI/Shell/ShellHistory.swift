import Colonnade
import Foundation

/// `~/.colonnade_history`: the lines typed at `colonnade shell`'s prompt, one per line, oldest
/// first. Each line is appended as it is entered (so a killed session keeps its history); the
/// file is created private (0600) and rewritten to its last `limit` lines when it grows past
/// twice that.
struct ShellHistory {
    /// The file name in the home directory.
    static let fileName = ".colonnade_history"
    /// The file, or nil when there is no home directory.
    let path: String?
    /// Lines kept.
    let limit: Int

    /// The history of the user whose environment is `environment` (`$HOME`).
    init(environment: [String: String], limit: Int = 1_000) {
        if let home = environment["HOME"], !home.isEmpty {
            path = (home.hasSuffix("/") ? home : home + "/") + Self.fileName
        } else {
            path = nil
        }
        self.limit = limit
    }

    /// The saved lines, oldest first; empty when there is no file or it cannot be read.
    func load() -> [String] {
        guard let path, let data = FileManager.default.contents(atPath: path) else { return [] }
        let lines = String(decoding: data, as: UTF8.self).split(separator: "\n").map(String.init)
        if lines.count > 2 * limit { rewrite(Array(lines.suffix(limit))) }
        return Array(lines.suffix(limit))
    }

    /// Appends `line`; failures are ignored (history is a convenience, never a reason to stop).
    func append(_ line: String) {
        guard let path, !line.contains("\n") else { return }
        let fd = open(path, O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0o600)
        guard fd >= 0 else { return }
        defer { close(fd) }
        let bytes = Array((line + "\n").utf8)
        _ = bytes.withUnsafeBytes { SystemCall.writeAll(fd, $0.baseAddress, $0.count) }
    }

    private func rewrite(_ lines: [String]) {
        guard let path else { return }
        let text = lines.map { $0 + "\n" }.joined()
        try? Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
        chmod(path, 0o600)
    }
}
