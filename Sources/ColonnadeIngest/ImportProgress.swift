import Colonnade
import DataLinkFormat
import Synchronization

/// Counts what an import has done so far, for a progress display on another thread: files
/// decoded, rows decoded and input bytes read. Updated by the decoding threads as each file (or
/// piece of a large file) finishes; read at any time with `current`.
public final class ImportProgress: Sendable {
    private let files = Atomic<Int>(0)
    private let rows = Atomic<Int>(0)
    private let bytes = Atomic<Int>(0)

    /// Progress at zero.
    public init() {}

    /// What has been done so far.
    public var current: (files: Int, rows: Int, bytes: Int) {
        (files.load(ordering: .relaxed), rows.load(ordering: .relaxed), bytes.load(ordering: .relaxed))
    }

    /// Adds finished work.
    func add(files: Int = 0, rows: Int = 0, bytes: Int = 0) {
        if files != 0 { self.files.add(files, ordering: .relaxed) }
        if rows != 0 { self.rows.add(rows, ordering: .relaxed) }
        if bytes != 0 { self.bytes.add(bytes, ordering: .relaxed) }
    }

    /// Takes back what `other` counted (a path that gave up, whose work the next path counts again).
    func takeBack(_ other: ImportProgress) {
        let (files, rows, bytes) = other.current
        add(files: -files, rows: -rows, bytes: -bytes)
    }
}
