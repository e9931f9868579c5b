import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// Files written by pyarrow, Polars and DuckDB with their default and uncompressed settings
/// (Tests/Fixtures/interop, made once by make_fixtures.py there) import with exactly the rows the
/// script wrote (every codec but BROTLI and LZO: Snappy, GZIP, LZ4, ZSTD; LZ4_FRAME and ZSTD IPC
/// bodies); BROTLI, and columns it cannot map, fail with an error naming the codec or the column.
@Suite("Arrow IPC and Parquet files from pyarrow, Polars and DuckDB")
struct InteropFixtureTests {
    static func path(_ name: String) -> String {
        Fixtures.directory.appendingPathComponent("interop/\(name)").path
    }

    /// The rows make_fixtures.py writes into every file.
    static let symbols = ["AAA", "BBB", "CCC"]
    static let days: [Int32] = [(2014, 1, 2), (2014, 1, 3), (2014, 1, 6)].map { Day($0.0, $0.1, $0.2).daysSinceEpoch }
    static let open: [Double?] = [10.5, 11.25, 12.0, 200.0, 201.5, 199.75, 0.125, 0.25, 0.5]
    static let close: [Double?] = [10.75, nil, 12.5, 201.0, 202.25, 198.5, 0.1875, 0.3125, 0.625]
    static let volume: [Int64?] = [1000, 2000, nil, 30_000_000_000, 40, 50, 7, 8, 9]

    /// Checks `table` holds exactly the fixture rows, with `open` and `close` as float64 and
    /// `volume` as int64.
    static func expectFixtureRows(_ table: QuoteTable, _ name: String) {
        #expect(table.tickers.map(\.symbol) == symbols, "\(name)")
        #expect(table.tickers.map(\.rowCount) == [3, 3, 3], "\(name)")
        #expect(table.rowCount == 9, "\(name)")
        #expect((0 ..< table.rowCount).map { table.dates[$0] } == days + days + days, "\(name)")
        #expect(table.schema.map(\.identifier) == ["open", "close", "volume"], "\(name)")
        guard table.schema.count == 3 else { return }
        #expect(table.schema.map(\.type) == [.float64, .float64, .int64], "\(name)")
        guard case .float64(let o)? = table.column(named: "open"), case .float64(let c)? = table.column(named: "close"),
            case .int64(let v)? = table.column(named: "volume")
        else {
            Issue.record("\(name): column types \(table.schema.map(\.type))")
            return
        }
        #expect((0 ..< 9).map { o.value(at: $0) } == open, "\(name)")
        #expect((0 ..< 9).map { c.value(at: $0) } == close, "\(name)")
        #expect((0 ..< 9).map { v.value(at: $0) } == volume, "\(name)")
    }

    @Test(
        "Files each tool writes by default or uncompressed import with the exact rows",
        arguments: [
            "pyarrow.arrow", "pyarrow.arrows", "pyarrow-default.parquet", "pyarrow-uncompressed.parquet",
            "polars.arrow", "polars.arrows", "polars-uncompressed.parquet", "polars-snappy.parquet",
            "duckdb-default.parquet", "duckdb-uncompressed.parquet",
            // GZIP and LZ4 pages, LZ4_FRAME IPC bodies (make_fixtures.py --codecs).
            "pyarrow-gzip.parquet", "pyarrow-lz4.parquet", "pyarrow-lz4-v2pages.parquet", "pyarrow-lz4.arrows",
            "polars-gzip.parquet", "polars-lz4.parquet", "polars-lz4.arrow", "duckdb-gzip.parquet", "duckdb-lz4.parquet",
            // DELTA_BINARY_PACKED, DELTA_LENGTH_BYTE_ARRAY, DELTA_BYTE_ARRAY, BYTE_STREAM_SPLIT.
            "pyarrow-delta-split.parquet", "pyarrow-delta-length.parquet", "duckdb-v2.parquet",
            // DECIMAL on INT64 (prices to Float64 correctly rounded, DECIMAL(18,0) volume to Int64);
            // INT96 timestamps as the date (Spark's and Impala's).
            "pyarrow-decimal-int.parquet", "duckdb-decimal.parquet", "pyarrow-int96.parquet",
            // ZSTD: Polars' default Parquet, pyarrow (v1 and v2 pages), DuckDB; Arrow IPC bodies.
            "polars-default.parquet", "pyarrow-zstd.parquet", "pyarrow-zstd-v2pages.parquet", "duckdb-zstd.parquet",
            "pyarrow-feather-zstd.arrow", "polars-zstd.arrow",
        ])
    func importsExactly(_ name: String) throws {
        let table = try InteropReader.read(path: Self.path(name))
        Self.expectFixtureRows(table, name)
    }

    @Test(
        "Timestamp date columns (pyarrow and DuckDB Parquet, Polars IPC) become their days",
        arguments: [
            "pyarrow-timestamp.parquet", "duckdb-timestamp.parquet", "polars-timestamp.arrow",
        ])
    func timestampsBecomeDates(_ name: String) throws {
        Self.expectFixtureRows(try InteropReader.read(path: Self.path(name)), name)
    }

    @Test("Reading from memory gives the same table as reading the file")
    func bytesEntryPoint() throws {
        for name in ["pyarrow.arrow", "polars.arrows", "duckdb-default.parquet"] {
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.path(name))))
            let fromBytes = try bytes.withUnsafeBytes { try InteropReader.read($0, file: name) }
            #expect(fromBytes == (try InteropReader.read(path: Self.path(name))))
        }
    }

    @Test("BROTLI is refused with an error naming the codec and the column")
    func brotliRefused() {
        let file = Self.path("pyarrow-brotli.parquet")
        #expect(throws: InteropError.unsupportedCodec(file: file, codec: "BROTLI (Parquet column 'ticker')")) {
            try InteropReader.read(path: file)
        }
    }

    @Test("pyarrow's default Feather (LZ4_FRAME body compression) imports with the exact rows")
    func lz4FeatherImports() throws {
        let file = Self.path("pyarrow-feather-default.arrow")
        Self.expectFixtureRows(try InteropReader.read(path: file), file)
    }

    @Test("A file without a date column is refused naming the columns it has")
    func missingDate() {
        let file = Self.path("pyarrow-no-date.arrow")
        #expect(throws: InteropError.missingColumn(file: file, column: "date", available: ["ticker", "open", "close", "volume"])) {
            try InteropReader.read(path: file)
        }
    }

    @Test("A string value column is skipped and named; with strict it is refused naming the column and its type")
    func stringValueColumn() throws {
        let file = Self.path("pyarrow-string-value.parquet")
        var skipped: [InteropSkippedColumn] = []
        Self.expectFixtureRows(try InteropReader.read(path: file, strict: false, skipped: &skipped), file)
        #expect(skipped.map(\.column) == ["name"] && skipped.allSatisfy { $0.file == file }, "\(skipped)")
        do {
            _ = try InteropReader.read(path: file, strict: true, skipped: &skipped)
            Issue.record("read a table with a string value column, strictly")
        } catch {
            guard case let .unsupportedColumn(f, column, _) = error else {
                Issue.record("\(error)")
                return
            }
            #expect(f == file && column == "name")
            // One phrase, not "has type … (a date must be …), which is not … a date" as before.
            #expect(
                error.description.hasPrefix("\(file): column 'name': type byteArray")
                    && error.description.hasSuffix(", which is not a ticker, a date or a number"),
                "\(error)")
        }
    }

    @Test(
        "Strings, booleans and nested columns beside the quotes are skipped and named, or refused with strict",
        arguments: [
            ("pyarrow-extra-columns.parquet", ["exchange", "is_split_day", "tags.list.element"]),
            ("pyarrow-extra-columns.arrow", ["exchange", "is_split_day"]),
            ("polars-extra-columns.arrow", ["exchange", "is_split_day"]),
        ])
    func extraColumnsAreSkipped(_ name: String, _ expected: [String]) throws {
        let file = Self.path(name)
        var skipped: [InteropSkippedColumn] = []
        Self.expectFixtureRows(try InteropReader.read(path: file, strict: false, skipped: &skipped), name)
        #expect(skipped.map(\.column) == expected, "\(skipped)")
        var ignored: [InteropSkippedColumn] = []
        #expect(throws: InteropError.self) { try InteropReader.read(path: file, strict: true, skipped: &ignored) }
    }
}
