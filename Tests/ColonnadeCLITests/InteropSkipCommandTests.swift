import ColonnadeTestSupport
import Foundation
import Testing

/// `import` of an Arrow or Parquet file with columns that are not quotes: skipped with one note
/// naming them (exit 0); `--strict` refuses the file (exit 1) and writes nothing.
@Suite struct InteropSkipCommandTests {
    @Test func importSkipsColumnsThatAreNotQuotesWithANoteAndStrictRefuses() throws {
        let dir = NSTemporaryDirectory() + "/colonnade-skip-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let file = Fixtures.directory.appendingPathComponent("interop/pyarrow-extra-columns.parquet").path
        let strict = colonnade("import", file, "--strict", "--snapshot", dir + "/q.snapshot")
        #expect(strict.status == 1, "\(strict)")
        #expect(strict.standardError.contains("column 'exchange'"), "\(strict.standardError)")
        #expect(!FileManager.default.fileExists(atPath: dir + "/q.snapshot"))
        let run = colonnade("import", file, "--snapshot", dir + "/q.snapshot")
        #expect(run.status == 0, "\(run)")
        #expect(
            run.standardError.contains(
                "note: \(file): skipped 3 columns that are not numbers: exchange (byteArray (converted type #0)), is_split_day (boolean), tags.list.element (a nested column (inside a group)) (--strict refuses such a file)"
            ),
            "\(run.standardError)")
        #expect(run.standardOutput.contains("imported 9 rows for 3 tickers"), "\(run.standardOutput)")
    }
}
