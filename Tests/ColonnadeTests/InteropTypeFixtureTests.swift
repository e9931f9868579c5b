@testable import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// The type fixtures (`make_fixtures.py --types`, Tests/Fixtures/interop/SOURCES.md): decimals on
/// FIXED_LEN_BYTE_ARRAY (pyarrow, Polars, DuckDB), BYTE_STREAM_SPLIT on FIXED_LEN_BYTE_ARRAY,
/// float16, integers of every width, timestamps in every unit and time zone, times of day other
/// than midnight, ticker encodings and nested Arrow columns: each imports to exactly the rows
/// the script wrote.
@Suite("Arrow and Parquet types from pyarrow, Polars and DuckDB")
struct InteropTypeFixtureTests {
    static func path(_ name: String) -> String { InteropFixtureTests.path(name) }

    static func read(_ name: String) throws -> (QuoteTable, [InteropSkippedColumn]) {
        var notes: [InteropSkippedColumn] = []
        let table = try InteropReader.read(path: path(name), strict: false, skipped: &notes)
        return (table, notes)
    }

    @Test(
        "DECIMAL on FIXED_LEN_BYTE_ARRAY (128 and 256 bits, split or dictionary pages) imports exactly: prices Float64, DECIMAL(18,0) Int64",
        arguments: [
            "pyarrow-decimal-flba.parquet", "pyarrow-decimal-flba-split.parquet", "pyarrow-decimal256.parquet",
            "polars-decimal.parquet", "duckdb-decimal-wide.parquet",
        ])
    func decimalsOnFixedLengthByteArrays(_ name: String) throws {
        let (table, notes) = try Self.read(name)
        InteropFixtureTests.expectFixtureRows(table, name)
        #expect(notes.isEmpty, "\(notes)")
    }

    @Test(
        "Float16 prices (Parquet FLOAT16, plain, dictionary and BYTE_STREAM_SPLIT; Arrow halffloat) become exact Float32",
        arguments: ["pyarrow-float16.parquet", "pyarrow-float16-split.parquet", "pyarrow-float16.arrow"])
    func float16(_ name: String) throws {
        let (table, _) = try Self.read(name)
        #expect(table.schema.map(\.type) == [.float32, .float32, .int64], "\(name)")
        guard case .float32(let o)? = table.column(named: "open"), case .float32(let c)? = table.column(named: "close") else {
            Issue.record("\(name): \(table.schema)")
            return
        }
        #expect((0 ..< 9).map { o.value(at: $0).map(Double.init) } == InteropFixtureTests.open, "\(name)")
        #expect((0 ..< 9).map { c.value(at: $0).map(Double.init) } == InteropFixtureTests.close, "\(name)")
        #expect((0 ..< 9).map { table.dates[$0] } == InteropFixtureTests.days + InteropFixtureTests.days + InteropFixtureTests.days)
    }

    @Test(
        "Integers of every width and signedness keep their values (narrow ones as int32, uint32 and wider as int64)",
        arguments: ["pyarrow-integers.parquet", "pyarrow-integers.arrow", "polars-integers.parquet", "polars-integers.arrow"])
    func integersOfEveryWidth(_ name: String) throws {
        let (table, _) = try Self.read(name)
        let expected: [(String, ElementType, [Int64])] = [
            ("i8", .int32, [-128, -1, 0, 1, 127, 5, 6, 7]), ("u8", .int32, [0, 1, 2, 3, 255, 5, 6, 7]),
            ("i16", .int32, [-32768, -1, 0, 1, 32767, 5, 6, 7]), ("u16", .int32, [0, 1, 2, 3, 65535, 5, 6, 7]),
            ("i32", .int32, [-(1 << 31), -1, 0, 1, (1 << 31) - 1, 5, 6, 7]), ("u32", .int64, [0, 1, 2, 3, (1 << 32) - 1, 5, 6, 7]),
            ("i64", .int64, [Int64.min, -1, 0, 1, Int64.max, 5, 6, 7]), ("u64", .int64, [0, 1, 2, 3, Int64.max, 5, 6, 7]),
        ]
        #expect(table.schema.map(\.identifier) == expected.map(\.0), "\(name)")
        for (column, type, values) in expected {
            let got: [Int64?]
            switch table.column(named: column) {
            case .int32(let c)?: got = (0 ..< 9).map { c.value(at: $0).map(Int64.init) }
            case .int64(let c)?: got = (0 ..< 9).map { c.value(at: $0) }
            default:
                Issue.record("\(name): \(column) is \(String(describing: table.column(named: column)))")
                continue
            }
            #expect(table.schema.first { $0.identifier == column }?.type == type, "\(name) \(column)")
            #expect(got == values.map { Optional($0) } + [nil], "\(name) \(column)")
        }
    }

    @Test(
        "Timestamps in s, ms, µs and ns, naive, UTC-adjusted or in a named zone, become the day where they were taken",
        arguments: [
            "pyarrow-timestamp-s.arrow", "pyarrow-timestamp-ms.arrow", "pyarrow-timestamp-us.arrow", "pyarrow-timestamp-ns.arrow",
            "pyarrow-timestamp-America-New_York.arrow", "pyarrow-timestamp-Asia-Tokyo.arrow", "pyarrow-timestamp-plus0530.arrow",
            "polars-timestamp-tokyo.arrow", "pyarrow-timestamp-utc-ms.parquet", "pyarrow-timestamp-ns.parquet",
        ])
    func timestampsBecomeTheirDays(_ name: String) throws {
        let (table, notes) = try Self.read(name)
        InteropFixtureTests.expectFixtureRows(table, name)
        // Midnight where they were taken (Tokyo's midnight is 15:00 UTC the day before).
        #expect(notes.isEmpty, "\(name): \(notes)")
    }

    @Test(
        "A time of day other than midnight keeps each row's day, with one note naming the column and the first such time",
        arguments: [
            ("pyarrow-timestamp-close.arrow", "row 0: 16:00:00 in America/New_York"),
            ("pyarrow-timestamp-close.parquet", "row 0: 16:00:00"), ("duckdb-timestamp-close.parquet", "row 0: 16:00:00"),
        ])
    func timeOfDayIsNoted(_ name: String, _ first: String) throws {
        let (table, notes) = try Self.read(name)
        InteropFixtureTests.expectFixtureRows(table, name)
        #expect(notes.count == 1, "\(notes)")
        #expect(notes.first?.kind == .timeOfDay)
        #expect(notes.first?.column == "date")
        #expect(notes.first?.type == first)
    }

    @Test("Two rows of one ticker on one day at different times are an error naming the ticker, day and rows, never an upsert")
    func twoTimesOnOneDayAreRefused() {
        var notes: [InteropSkippedColumn] = []
        #expect(
            throws: InteropError.timesOnOneDay(
                file: Self.path("pyarrow-timestamp-twice.parquet"), column: "date", ticker: "AAA",
                day: Day(2014, 1, 2).daysSinceEpoch, rows: [0, 9])
        ) {
            try InteropReader.read(path: Self.path("pyarrow-timestamp-twice.parquet"), strict: false, skipped: &notes)
        }
    }

    @Test(
        "Tickers as large_string, string_view and dictionaries (Arrow, Parquet) import exactly",
        arguments: [
            "pyarrow-ticker-large-string.arrow", "pyarrow-ticker-string-view.arrow", "pyarrow-ticker-dictionary.arrow",
            "pyarrow-ticker-dictionary.parquet",
        ])
    func tickerEncodings(_ name: String) throws {
        let (table, notes) = try Self.read(name)
        InteropFixtureTests.expectFixtureRows(table, name)
        #expect(notes.isEmpty)
    }

    @Test(
        "Nested Arrow columns (list, struct, fixed-size list) are skipped with the note, or refused with strict",
        arguments: [("pyarrow-nested.arrow", ["tags", "meta", "sizes"]), ("polars-nested.arrow", ["tags", "meta"])])
    func nestedArrowColumnsAreSkipped(_ name: String, _ expected: [String]) throws {
        let (table, notes) = try Self.read(name)
        InteropFixtureTests.expectFixtureRows(table, name)
        #expect(notes.map(\.column) == expected)
        #expect(notes.allSatisfy { $0.kind == .notAQuote })
        var ignored: [InteropSkippedColumn] = []
        #expect(throws: InteropError.self) { try InteropReader.read(path: Self.path(name), strict: true, skipped: &ignored) }
    }

    @Test("A time zone the system does not know is refused naming the column and the zone")
    func unknownTimeZoneIsRefused() throws {
        // The Tokyo fixture with its zone name's bytes changed to one of the same length.
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: Self.path("pyarrow-timestamp-Asia-Tokyo.arrow"))))
        let from = Array("Asia/Tokyo".utf8), to = Array("Xsia/Tokyo".utf8)
        var replaced = 0
        var i = 0
        while i + from.count <= bytes.count {
            if Array(bytes[i ..< i + from.count]) == from {
                bytes.replaceSubrange(i ..< i + from.count, with: to)
                replaced += 1
            }
            i += 1
        }
        #expect(replaced >= 1)
        do {
            _ = try bytes.withUnsafeBytes { try InteropReader.read($0, file: "tz.arrow") }
            Issue.record("an unknown zone was accepted")
        } catch let error as InteropError {
            #expect(error.description.contains("Xsia/Tokyo"), "\(error)")
            #expect(error.description.contains("'date'"), "\(error)")
        }
    }
}

/// DECIMAL conversion against decimal text read by `Double(String)` (correctly rounded), on
/// integers of every byte width in both byte orders, including the edges of each width.
@Suite("Decimals of any width to Float64 and Int64")
struct InteropDecimalTests {
    /// The bytes of `value` (as a sign and a magnitude below 2^(8·width − 1)) in two's complement.
    static func twosComplement(negative: Bool, magnitude: [UInt8], width: Int, bigEndian: Bool) -> [UInt8] {
        var le = magnitude + [UInt8](repeating: 0, count: width - magnitude.count)
        if negative {
            var carry = 1
            for i in 0 ..< width {
                let v = Int(~le[i]) + carry
                le[i] = UInt8(v & 0xFF)
                carry = v >> 8
            }
        }
        return bigEndian ? le.reversed() : le
    }

    /// The decimal digits of a little-endian magnitude.
    static func digits(_ magnitude: [UInt8]) -> String {
        var m = magnitude
        var out: [Character] = []
        while m.contains(where: { $0 != 0 }) {
            var r = 0
            for i in stride(from: m.count - 1, through: 0, by: -1) {
                let cur = r << 8 | Int(m[i])
                m[i] = UInt8(cur / 10)
                r = cur % 10
            }
            out.append(Character(String(r)))
        }
        return out.isEmpty ? "0" : String(out.reversed())
    }

    @Test("Float64 of unscaled × 10^−scale equals Double(String) of its decimal text, for widths 1–32 bytes, both byte orders")
    func matchesDoubleOfText() throws {
        var rng = SplitMix64(seed: 32)
        for width in [1, 2, 3, 4, 5, 8, 9, 12, 16, 17, 24, 32] {
            for _ in 0 ..< 200 {
                let bytes = Int.random(in: 0 ... width, using: &rng)
                var magnitude = (0 ..< bytes).map { _ in UInt8.random(in: 0 ... 255, using: &rng) }
                if bytes == width, !magnitude.isEmpty { magnitude[bytes - 1] &= 0x7F }  // below 2^(8w−1)
                let negative = Bool.random(using: &rng)
                let scale = [0, 1, 2, 3, 4, 6, 10, 18, 22, 23, 30, 38][Int.random(in: 0 ..< 12, using: &rng)]
                let text = (negative ? "-" : "") + Self.digits(magnitude) + "e-\(scale)"
                let expected = try #require(Double(text))
                for bigEndian in [false, true] {
                    let encoded = Self.twosComplement(negative: negative, magnitude: magnitude, width: width, bigEndian: bigEndian)
                    let got = encoded.withUnsafeBytes { InteropDecimal.double($0, bigEndian: bigEndian, scale: scale) }
                    #expect(got.bitPattern == expected.bitPattern || (got == 0 && expected == 0), "\(text) width \(width)")
                }
            }
        }
    }

    @Test("Int64 of whole decimals at the edges of Int64, and nil past them")
    func wholeDecimalsToInt64() {
        func le(_ v: Int64, width: Int) -> [UInt8] {
            (0 ..< width).map { i in i < 8 ? UInt8(truncatingIfNeeded: v >> (8 * Int64(i))) : (v < 0 ? 0xFF : 0) }
        }
        for v: Int64 in [0, 1, -1, 127, -128, 255, Int64.max, Int64.min, 999_999_999_999_999_999, -999_999_999_999_999_999] {
            for width in [8, 9, 16, 32] {
                #expect(le(v, width: width).withUnsafeBytes { InteropDecimal.int64($0, bigEndian: false) } == v)
                #expect(Array(le(v, width: width).reversed()).withUnsafeBytes { InteropDecimal.int64($0, bigEndian: true) } == v)
            }
        }
        // 2^63 and −2^63 − 1 do not fit.
        let twoTo63: [UInt8] = [0, 0, 0, 0, 0, 0, 0, 0x80, 0]
        #expect(twoTo63.withUnsafeBytes { InteropDecimal.int64($0, bigEndian: false) } == nil)
        let belowMin: [UInt8] = [0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0xFF, 0x7F, 0xFF]
        #expect(belowMin.withUnsafeBytes { InteropDecimal.int64($0, bigEndian: false) } == nil)
    }
}
