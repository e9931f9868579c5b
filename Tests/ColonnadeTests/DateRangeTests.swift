@testable import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// One date range for the whole product: 0001-01-01 … 9999-12-31 (`Day.storableDayNumbers`), the
/// days the four-digit `YYYY-MM-DD` of the text formats can carry. Every way into a table enforces
/// it with an error naming the row, so whatever a table holds can be exported and imported again
/// (a hostile-input probe found `10000-01-03` and `-5877641-06-23` written by export and refused
/// by import).
@Suite("Dates a table holds: 0001-01-01 … 9999-12-31")
struct DateRangeTests {
    static let first = Day(1, 1, 1).daysSinceEpoch, last = Day(9999, 12, 31).daysSinceEpoch

    @Test func theRangeIsTheFourDigitYears() {
        #expect(Day.storableDayNumbers == Self.first ... Self.last)
        #expect(Day(daysSinceEpoch: Self.first).description == "0001-01-01")
        #expect(Day(daysSinceEpoch: Self.last).description == "9999-12-31")
        #expect(!Day(daysSinceEpoch: Self.first - 1).isStorable && Day(daysSinceEpoch: Self.first).isStorable)
        #expect(!Day(daysSinceEpoch: Self.last + 1).isStorable && Day(daysSinceEpoch: Self.last).isStorable)
        #expect(Day("0000-12-31") == nil && Day("0001-01-01") != nil && Day("9999-12-31") != nil)
    }

    /// One ticker, `dates` as given, one Float64 column.
    static func table(_ dates: [Int32], check: Bool = true) throws(TableError) -> QuoteTable {
        let values = Column<Double>(dates.indices.map { Double($0) + 0.5 })
        return try QuoteTable(
            schema: [ColumnDescriptor(name: "Close", type: .float64)], columns: [.float64(values)],
            dates: Column(dates), tickers: [TickerEntry(symbol: "AAA", firstRow: 0, rowCount: dates.count)],
            checkDates: check)
    }

    @Test(arguments: [Int32.min, first - 1, last + 1, Int32.max])
    func tablesRefuseADayOutsideTheRangeNamingTheRow(bad: Int32) throws {
        // Last row (dates ascending), and first row.
        for (dates, row) in [([Self.last - 1, bad], 1), ([bad, 0], 0)] where dates[0] < dates[1] || row == 1 {
            for check in [true, false] where !(check && dates[0] >= dates[1]) {
                #expect(throws: TableError.dateOutOfRange(ticker: "AAA", row: row, day: bad)) { try Self.table(dates, check: check) }
            }
        }
        // The sorting initializer too (rows in any order).
        let values = Column<Double>([1, 2, 3])
        #expect(throws: TableError.self) {
            try QuoteTable(
                sortingRows: [TickerEntry(symbol: "AAA", firstRow: 0, rowCount: 0)], rowTickers: [0, 0, 0],
                dates: Column([5, bad, 7]), schema: [ColumnDescriptor(name: "Close", type: .float64)],
                columns: [.float64(values)])
        }
        // The edges themselves are fine.
        #expect(try Self.table([Self.first, Self.last]).rowCount == 2)
    }

    @Test func theErrorSaysWhatAndWhere() {
        let text = TableError.dateOutOfRange(ticker: "AAA", row: 7, day: Self.last + 3).description
        #expect(text == "date 10000-01-03 of ticker AAA (row 7) is outside the dates a table holds, 0001-01-01 … 9999-12-31")
    }

    // MARK: Snapshots

    /// A saved snapshot whose date at `row` is replaced by `day` (payload checksums resealed, so
    /// the range check, not a checksum, must catch it).
    static func snapshot(rows: Int, patching row: Int, to day: Int32, in directory: ScratchDirectory) throws -> String {
        let dates = (0 ..< Int32(rows)).map { 16_000 + $0 }
        let path = directory.file("dates.snapshot")
        try table(dates).save(to: path)
        var image = SnapshotImage(path)
        let payload = image.payloads[0]
        #expect(payload.name == "date")
        withUnsafeBytes(of: day.littleEndian) { for i in 0 ..< 4 { image.bytes[payload.payload.offset + 4 * row + i] = $0[i] } }
        image.fixPayloadChecksums()
        image.write(to: path)
        return path
    }

    @Test func aSnapshotWithADateOutsideTheRangeFailsVerifyNamingTheRowAndIsNotLoaded() throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        // The last row: every load refuses it (each ticker's first and last rows bound its dates).
        let path = try Self.snapshot(rows: 100, patching: 99, to: Self.last + 3, in: directory)
        let error = loadError(path, verify: false)
        #expect(caseName(error) == "inconsistentData", "\(String(describing: error))")
        #expect(
            error?.description.contains("date 10000-01-03 of ticker AAA (row 99) is outside") == true,
            "\(String(describing: error?.description))")
        // A verifying load stops earlier, at the date column's block summary (not resealed here).
        #expect(loadError(path, verify: true) != nil)
        let report = QuoteTable.verifySnapshot(at: path)
        #expect(!report.isValid)
        #expect(report.problems.contains { $0.row == 99 && $0.ticker == "AAA" && $0.column == "date" }, "\(report.problems)")

        // A row in the middle (the order broken too): verify names it; a verifying load refuses it.
        let middle = try Self.snapshot(rows: 100, patching: 40, to: Self.first - 1, in: directory)
        let middleReport = QuoteTable.verifySnapshot(at: middle)
        #expect(middleReport.problems.contains { $0.row == 40 && $0.description.contains("0000-12-31") }, "\(middleReport.problems)")
        #expect(loadError(middle, verify: true) != nil)
    }

    // MARK: Arrow and Parquet

    /// `bytes` with the one occurrence of `old` (little-endian Int32) replaced by `new`.
    static func patching(_ bytes: [UInt8], _ old: Int32, to new: Int32) -> [UInt8] {
        let needle = withUnsafeBytes(of: old.littleEndian) { Array($0) }
        let hits = (0 ... bytes.count - 4).filter { Array(bytes[$0 ..< $0 + 4]) == needle }
        #expect(hits.count == 1, "\(hits.count) occurrences of \(old)")
        var out = bytes
        withUnsafeBytes(of: new.littleEndian) { for i in 0 ..< 4 { out[hits[0] + i] = $0[i] } }
        return out
    }

    @Test(arguments: ["arrow", "arrows", "parquet"])
    func arrowAndParquetDatesOutsideTheRangeAreRefusedNamingFileColumnAndRow(format: String) throws {
        let dates: [Int32] = [700_001, 700_002, 700_003, 700_004]
        let t = try Self.table(dates)
        let output = MemoryInteropOutput()
        switch format {
        case "arrow": try ArrowIPCWriter(table: t, format: .file).write(to: output)
        case "arrows": try ArrowIPCWriter(table: t, format: .stream).write(to: output)
        default: try ParquetWriter(table: t).write(to: output)
        }
        for bad in [Self.last + 3, Self.first - 1, Int32.min, Int32.max] {
            let bytes = Self.patching(output.bytes, 700_003, to: bad)
            do throws(InteropError) {
                _ = try withInteropBytes(bytes) { b throws(InteropError) in try InteropReader.read(b, file: "x.\(format)") }
                Issue.record("\(format): read a date \(bad)")
            } catch {
                #expect(
                    error == .dateOutOfRange(file: "x.\(format)", column: "date", row: 2, value: "date \(Day.format(day: bad))"),
                    "\(format): \(error)")
            }
        }
        // Unpatched, it reads.
        let read = try withInteropBytes(output.bytes) { b throws(InteropError) in try InteropReader.read(b, file: "x") }
        #expect(read.rowCount == 4)
    }

    @Test func timestampsWhoseDayIsOutsideTheRangeNameTheValue() {
        #expect(
            throws: InteropError.dateOutOfRange(
                file: "f", column: "ts", row: 3,
                value: "-9223372036854775808 seconds since 1970-01-01")
        ) {
            try InteropValues.storableDay(.min, unitsPerDay: 86_400, file: "f", column: "ts", row: 3)
        }
        // 10000-01-01T12:00 in milliseconds: a day number that fits, outside the range.
        let ms = (Int64(Self.last) + 1) * 86_400_000 + 43_200_000
        #expect(throws: InteropError.dateOutOfRange(file: "f", column: "ts", row: 0, value: "date 10000-01-01")) {
            try InteropValues.storableDay(ms, unitsPerDay: 86_400_000, file: "f", column: "ts", row: 0)
        }
        let us: Int64 = 86_400_000_000
        #expect((try? InteropValues.storableDay(Int64(Self.last) * us + 1, unitsPerDay: us, file: "f", column: "ts", row: 0)) == Self.last)
        #expect((try? InteropValues.storableDay(-1, unitsPerDay: 86_400, file: "f", column: "ts", row: 0)) == -1)
    }

    // MARK: The generator

    @Test func theGeneratorsLastDayIsComputedWithoutMakingTheCalendar() {
        for start in [Int32(-3), 0, 1, 2, 3, 4, 5, 6, 10_959, Self.last - 20] {
            for days in [1, 2, 3, 4, 5, 6, 7, 11, 250] {
                let g = QuoteGenerator(tickers: 1, days: days, start: start)
                if g.lastTradingDay > Int(Self.last) { continue }
                #expect(g.lastTradingDay == Int(g.tradingDays().last!), "start \(start) days \(days)")
            }
        }
        #expect(QuoteGenerator(tickers: 1, days: 10, start: Day(9999, 12, 25).daysSinceEpoch).lastTradingDay > Int(Self.last))
    }
}

/// The snapshot format's strictness: section flags other than bit 0 and a date bitmap with a zero
/// bit are refused by every load and by `verify` (a hostile-input probe found both accepted; a null
/// date read as 1970-01-01).
@Suite("Snapshot format strictness: section flags and date bitmaps")
struct SnapshotStrictnessTests {
    /// A table of one ticker whose date column carries a validity bitmap with every bit set.
    static func tableWithDateBitmap(rows: Int) throws -> QuoteTable {
        var dates = Column<Int32>((0 ..< Int32(rows)).map { 16_000 + $0 })
        dates.setValidity(Bitmask(count: rows, allSet: true))
        return try QuoteTable(
            schema: [ColumnDescriptor(name: "Close", type: .float64)],
            columns: [.float64(Column<Double>((0 ..< rows).map { Double($0) }))],
            dates: dates, tickers: [TickerEntry(symbol: "AAA", firstRow: 0, rowCount: rows)])
    }

    @Test func aDateBitmapWithEveryBitSetLoadsAndOneWithAZeroBitIsRefusedNamingTheRow() throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("bitmap.snapshot")
        try Self.tableWithDateBitmap(rows: 130).save(to: path)
        #expect(loadError(path, verify: true) == nil)
        #expect(QuoteTable.verifySnapshot(at: path).isValid)

        var image = SnapshotImage(path)
        let bitmap = try #require(image.payloads.first { $0.name == "date.validity" }?.payload)
        image.bytes[bitmap.offset + 8 + 1] &= ~0b100  // row 64 + 8 + 2 = 74
        image.fixPayloadChecksums()
        image.write(to: path)
        let error = loadError(path, verify: false)
        #expect(error?.description.contains("row 74 has no date") == true, "\(String(describing: error))")
        // A verifying load stops earlier, at the date column's block summary (its null count).
        #expect(loadError(path, verify: true) != nil)
        let report = QuoteTable.verifySnapshot(at: path)
        #expect(report.problems.contains { $0.row == 74 && $0.column == "date.validity" }, "\(report.problems)")

        // A table cannot be built with a null date either.
        var dates = Column<Int32>([16_000, 16_001, 16_002])
        var mask = Bitmask(count: 3, allSet: true)
        mask[1] = false
        dates.setValidity(mask)
        #expect(throws: TableError.nullDate(ticker: "AAA", row: 1)) {
            try QuoteTable(schema: [], columns: [], dates: dates, tickers: [TickerEntry(symbol: "AAA", firstRow: 0, rowCount: 3)])
        }
    }

    @Test(arguments: [UInt32(2), 0x8000_0000, 0xFFFF_FFFE])
    func sectionFlagsOtherThanBitZeroAreRefused(extra: UInt32) throws {
        let directory = ScratchDirectory()
        defer { directory.remove() }
        let path = directory.file("flags.snapshot")
        try DateRangeTests.table([16_000, 16_001]).save(to: path)
        let image = SnapshotImage(path)
        let footerOffset = image.footerOffset, footerLength = image.footerLength
        // Every section in turn: tag (4), flags (4), length (8), body padded to 8.
        var o = footerOffset
        var sections = 0
        while o < footerOffset + footerLength {
            var copy = image
            let flags = copy.bytes[o + 4 ..< o + 8].enumerated().reduce(UInt32(0)) { $0 | UInt32($1.element) << (8 * UInt32($1.offset)) }
            withUnsafeBytes(of: (flags | extra).littleEndian) { for i in 0 ..< 4 { copy.bytes[o + 4 + i] = $0[i] } }
            // Reseal the footer: its checksum in the trailer, then the header's.
            let footer = Array(copy.bytes[footerOffset ..< footerOffset + footerLength])
            copy.setUInt64LE(SnapshotChecksum.hash(footer, seed: UInt64(footerOffset)), at: copy.bytes.count - 24)
            copy.fixHeaderChecksum()
            copy.write(to: path)
            for verify in [false, true] {
                let error = loadError(path, verify: verify)
                #expect(
                    caseName(error) == "malformedFooter" && error?.description.contains("only bit 0 (optional) may be set") == true,
                    "section at \(o): \(String(describing: error))")
            }
            #expect(!QuoteTable.verifySnapshot(at: path).isValid)
            sections += 1
            let length = Int(image.getUInt64LE(at: o + 8))
            o += 16 + SnapshotFormat.align(length, 8)
        }
        #expect(sections >= 4)
        // Unchanged, it loads (the resealing above is what a forger would do).
        image.write(to: path)
        #expect(loadError(path) == nil)
    }
}
