@testable import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// Dataset directories and zips (`make_fixtures.py --datasets`, Tests/Fixtures/interop/datasets):
/// Hive partition keys, non-data files, Delta tables refused, zips of Parquet and Arrow files.
@Suite("Parquet and Arrow datasets: directories, Hive keys, zips")
struct InteropDatasetTests {
    static func path(_ name: String) -> String { InteropFixtureTests.path("datasets/\(name)") }

    static func read(_ path: String, strict: Bool = false) throws -> (QuoteTable, [InteropSkippedColumn]) {
        var notes: [InteropSkippedColumn] = []
        let table = try InteropReader.read(path: path, strict: strict, skipped: &notes)
        return (table, notes)
    }

    @Test(
        "Directories partitioned by ticker (pyarrow, DuckDB with zstd, Spark's layout with _SUCCESS and .crc files) import exactly",
        arguments: ["pyarrow-by-ticker", "duckdb-by-ticker", "spark-by-ticker", "pyarrow-by-ticker.zip"])
    func partitionedByTicker(_ name: String) throws {
        let (table, notes) = try Self.read(Self.path(name))
        InteropFixtureTests.expectFixtureRows(table, name)
        #expect(notes.isEmpty, "\(notes)")
    }

    @Test("year= partitions are checked against the dates and not stored (DuckDB's PARTITION_BY year)")
    func partitionedByYear() throws {
        let (table, notes) = try Self.read(Self.path("duckdb-by-year"))
        InteropFixtureTests.expectFixtureRows(table, "duckdb-by-year")
        #expect(notes.isEmpty, "\(notes)")
    }

    @Test("Another partition key is noted as a column that is not a quote, or refused with strict")
    func otherKeysAreSkipped() throws {
        let (table, notes) = try Self.read(Self.path("pyarrow-by-exchange"))
        #expect(table.rowCount == 9)
        // exchange=NASDAQ (BBB) sorts before exchange=NYSE (AAA, CCC).
        #expect(table.tickers.map(\.symbol) == ["BBB", "AAA", "CCC"])
        #expect(notes.map(\.column) == ["exchange"], "\(notes)")
        #expect(throws: InteropError.self) { try Self.read(Self.path("pyarrow-by-exchange"), strict: true) }
    }

    @Test("Partition values are percent-decoded; __HIVE_DEFAULT_PARTITION__ is a null ticker, refused")
    func escapedAndNullKeys() throws {
        let (table, _) = try Self.read(Self.path("pyarrow-escaped-tickers"))
        #expect(Set(table.tickers.map(\.symbol)) == ["BRK/A", "A B", "X=Y%"])
        #expect(table.rowCount == 9)
        do {
            _ = try Self.read(Self.path("pyarrow-null-ticker"))
            Issue.record("a null ticker partition was accepted")
        } catch let error as InteropError {
            guard case .nullKey = error else {
                Issue.record("\(error)")
                return
            }
            #expect(error.description.contains("__HIVE_DEFAULT_PARTITION__"))
        }
    }

    @Test("A directory holding _delta_log/ is refused as a Delta table")
    func deltaTableRefused() throws {
        let dir = Self.path("delta-table")
        #expect(throws: InteropError.deltaTable(directory: dir)) { try Self.read(dir) }
        #expect(FileManager.default.fileExists(atPath: dir + "/_delta_log"))
    }

    @Test("Zips of Parquet and Arrow members import like files; a zip inside the zip is refused saying so")
    func zips() throws {
        for name in ["files.zip", "arrow.zip"] {
            #expect(InteropReader.handles(path: Self.path(name)))
            InteropFixtureTests.expectFixtureRows(try Self.read(Self.path(name)).0, name)
        }
        #expect(InteropReader.handles(path: Self.path("nested.zip")))
        do {
            _ = try Self.read(Self.path("nested.zip"))
            Issue.record("a nested zip was accepted")
        } catch let error as InteropError {
            #expect(error.description.contains("inner.zip"), "\(error)")
            #expect(error.description.contains("a zip archive inside the zip"), "\(error)")
        }
    }

    /// A temporary directory removed after `body`.
    static func withDirectory(_ body: (String) throws -> Void) throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-dataset-\(UUID().uuidString)").path
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        try body(dir)
    }

    @Test("A file under year= or month= whose dates disagree is refused naming the key, the file and the row")
    func disagreeingPartitionRefused() throws {
        try Self.withDirectory { dir in
            let source = InteropFixtureTests.path("pyarrow-zstd.parquet")
            for (sub, ok) in [
                ("year=2015", false), ("year=2014/month=1", true), ("year=2014/month=2", false), ("month=2014-01", true),
                ("date=2014-01-02", false),
            ] {
                let d = dir + "/" + sub
                try FileManager.default.createDirectory(atPath: d, withIntermediateDirectories: true)
                try FileManager.default.copyItem(atPath: source, toPath: d + "/part-0.parquet")
                if ok {
                    InteropFixtureTests.expectFixtureRows(try Self.read(dir).0, sub)
                } else {
                    do {
                        _ = try Self.read(dir)
                        Issue.record("\(sub) accepted")
                    } catch let error as InteropError {
                        guard case let .partitionMismatch(file, key, _, detail) = error else {
                            Issue.record("\(error)")
                            continue
                        }
                        #expect(file.hasSuffix(sub + "/part-0.parquet"))
                        #expect(sub.contains(key + "="))
                        #expect(detail.contains("row"), "\(detail)")
                    }
                }
                try FileManager.default.removeItem(atPath: dir + "/" + String(sub.prefix { $0 != "/" }))
            }
        }
    }

    @Test("Two files of a dataset holding one ticker on one date are an error, never an upsert; other files are ignored")
    func overlappingFilesRefused() throws {
        try Self.withDirectory { dir in
            let source = InteropFixtureTests.path("pyarrow-zstd.parquet")
            try FileManager.default.copyItem(atPath: source, toPath: dir + "/a.parquet")
            try "not data".write(toFile: dir + "/README.txt", atomically: true, encoding: .utf8)
            try "x".write(toFile: dir + "/_SUCCESS", atomically: true, encoding: .utf8)
            InteropFixtureTests.expectFixtureRows(try Self.read(dir).0, "one file")
            // A data file without an extension (Hive's 000000_0) is found by its magic.
            try FileManager.default.copyItem(atPath: source, toPath: dir + "/000000_0")
            #expect(throws: InteropError.self) { try Self.read(dir) }
        }
    }
    // Colonnade's own `--partition-by year` export round trip through the year= check:
    // InteropRoundTripTests.partitionedRoundTrip and partitionedExportKeepsTheEndsOfTheRangeAndOnlyTheYearsPresent.
}
