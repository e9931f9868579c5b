import Colonnade
import Foundation

/// What a reading command reads: a snapshot file, or the built-in synthetic sample.
///
/// The sample is deterministic (`QuoteGenerator`, 20 tickers × 2,520 trading days from
/// 2000-01-03, seed 42: 50,400 rows of made-up quotes), so it is generated in memory when no
/// snapshot exists rather than looked for on disk: a binary copied anywhere has it. It equals
/// `snapshots/sample.snapshot` in the repository row for row and byte for byte once saved
/// (`SnapshotGoldenTests`).
enum SnapshotSource: Equatable, Sendable {
    /// A snapshot file at this absolute path.
    case file(String)
    /// An earlier version of the store at this absolute path (`--at-version`, `--at-time`).
    case version(String, Int)
    /// The built-in sample.
    case sample

    /// The sample's generator: the parameters of `snapshots/sample.snapshot`.
    static let sampleGenerator = QuoteGenerator(tickers: 20, days: 2_520, seed: 42)

    /// How messages name it: the path, or `the built-in sample`.
    var displayName: String {
        switch self {
        case .file(let path): path
        case let .version(path, n): "\(path) at version \(n)"
        case .sample: "the built-in sample"
        }
    }

    /// The file's path; `nil` for the sample.
    var path: String? {
        switch self {
        case .file(let path), .version(let path, _): path
        case .sample: nil
        }
    }

    /// The table: the file memory-mapped (checksums verified unless `verify` is false), or the
    /// sample generated.
    func load(verify: Bool = true) throws -> QuoteTable {
        switch self {
        case .file(let path): try QuoteTable.load(from: path, verify: verify)
        case let .version(path, n): try SnapshotStore(at: path).table(atVersion: n, verify: verify)
        case .sample: Self.sampleGenerator.makeTable()
        }
    }

    /// Calls `body` with a snapshot file holding this source: the file itself, or for the sample
    /// a temporary file it is saved to (and removed after), so that what reads files (`info`,
    /// `verify`) reads the sample as it would be stored.
    func withFile<Result>(_ body: (String) throws -> Result) throws -> Result {
        switch self {
        case .file(let path):
            return try body(path)
        case .version, .sample:
            let directory = FileManager.default.temporaryDirectory
                .appendingPathComponent("colonnade-sample-\(getpid())-\(UInt32.random(in: 0 ... .max))", isDirectory: true)
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
            defer { try? FileManager.default.removeItem(at: directory) }
            let path = directory.appendingPathComponent("sample.snapshot").path
            try load().save(to: path, durable: false)
            return try body(path)
        }
    }
}
