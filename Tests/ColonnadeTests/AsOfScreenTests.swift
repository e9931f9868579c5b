import Testing
@testable import Colonnade

/// `--on DAY` as of a day: each ticker's last row on or before it, within `--max-stale` days.
@Suite struct AsOfScreenTests {
    /// A: Mon 2014-05-19 … Fri 05-23, then Tue 05-27 (Memorial Day, Mon 05-26, is a holiday);
    /// B: stopped trading on Fri 2014-05-09; C: from Wed 05-21 to Fri 05-23.
    static func table() throws -> QuoteTable {
        let a = [19, 20, 21, 22, 23, 27], b = [5, 6, 7, 8, 9], c = [21, 22, 23]
        let days = (a + b + c).map { Day(2014, 5, $0).daysSinceEpoch }
        let tickers = [Int32](repeating: 0, count: a.count) + [Int32](repeating: 1, count: b.count) + [Int32](repeating: 2, count: c.count)
        return try QuoteTable(
            sortingRows: ["A", "B", "C"].map { TickerEntry(symbol: $0) }, rowTickers: tickers,
            dates: Column<Int32>(days), schema: [ColumnDescriptor(name: "close", type: .float64)],
            columns: [AnyColumn(Column<Double>((0 ..< days.count).map { Double($0 + 1) }))])
    }

    /// The symbol and date of each row used.
    static func used(_ table: QuoteTable, _ day: ScreenDay, _ maxStale: StaleLimit = .default) -> [String] {
        table.rows(asOf: day, maxStale: maxStale).rows.map {
            "\(table.tickers[Int(table.tickerNumber(ofRow: $0))].symbol) \(Day(daysSinceEpoch: table.dates[$0]))"
        }
    }

    @Test func aWeekendAnswersWithTheFridayAndLeavesOutAStaleTicker() throws {
        let table = try Self.table()
        let asOf = table.rows(asOf: .day(Day(2014, 5, 24)))
        #expect(Self.used(table, .day(Day(2014, 5, 24))) == ["A 2014-05-23", "C 2014-05-23"])
        #expect(asOf.staleTickers == 1)
        #expect(
            asOf.note == "as of 2014-05-23 (2014-05-24 has no rows); 1 ticker with no row since before 2014-05-17 left out (--max-stale 7)")
    }

    @Test func aHolidayAnswersWithThePreviousSession() throws {
        let table = try Self.table()
        #expect(Self.used(table, .day(Day(2014, 5, 26))) == ["A 2014-05-23", "C 2014-05-23"])
        #expect(table.rows(asOf: .day(Day(2014, 5, 26))).note?.hasPrefix("as of 2014-05-23 (2014-05-26 has no rows)") == true)
    }

    @Test func aTickerBeforeItsFirstRowIsNotStaleJustAbsent() throws {
        let table = try Self.table()
        let asOf = table.rows(asOf: .day(Day(2014, 5, 20)))
        #expect(Self.used(table, .day(Day(2014, 5, 20))) == ["A 2014-05-20"])
        #expect(asOf.staleTickers == 1)  // B; C has no row yet and is not counted
        #expect(asOf.note == "1 ticker with no row since before 2014-05-13 left out (--max-stale 7)")
        // Before every row of the table: nothing, and nothing to say.
        let early = table.rows(asOf: .day(Day(2014, 1, 1)))
        #expect(early.rows.isEmpty && early.staleTickers == 0 && early.note == nil)
    }

    @Test func afterTheTablesEndOnlyRecentTickersRemain() throws {
        let table = try Self.table()
        #expect(Self.used(table, .day(Day(2014, 6, 1))) == ["A 2014-05-27"])  // C's 05-23 is 9 days old
        #expect(
            table.rows(asOf: .day(Day(2014, 6, 1))).note
                == "as of 2014-05-27 (2014-06-01 has no rows); 2 tickers with no row since before 2014-05-25 left out (--max-stale 7)")
    }

    @Test func maxStaleZeroIsTheExactDayAndNoneKeepsEveryTicker() throws {
        let table = try Self.table()
        #expect(Self.used(table, .day(Day(2014, 5, 24)), .days(0)).isEmpty)
        #expect(Self.used(table, .day(Day(2014, 5, 23)), .days(0)) == ["A 2014-05-23", "C 2014-05-23"])
        #expect(Self.used(table, .day(Day(2014, 5, 24)), .none) == ["A 2014-05-23", "B 2014-05-09", "C 2014-05-23"])
        #expect(table.rows(asOf: .day(Day(2014, 5, 24)), maxStale: .none).note == "as of 2014-05-23 (2014-05-24 has no rows)")
        #expect(StaleLimit("none") == StaleLimit.none && StaleLimit("0") == .days(0) && StaleLimit("-1") == nil && StaleLimit("x") == nil)
    }

    @Test func latestIsTheNewestDateWithTheSameRule() throws {
        let table = try Self.table()
        let asOf = table.rows(asOf: .latest)
        #expect(Self.used(table, .latest) == ["A 2014-05-27", "C 2014-05-23"])
        #expect(
            asOf.note
                == "as of 2014-05-27: 1 ticker's row is from an earlier day; 1 ticker with no row since before 2014-05-20 left out (--max-stale 7)"
        )
        // A screen as of a day sees each ticker's whole history up to the row used.
        let screen = try table.select(where: "close > prev(close)", on: .day(Day(2014, 5, 26)))
        #expect(screen.rows() == table.rows(asOf: .day(Day(2014, 5, 26))).rows)
        // Date terms apply to the chosen row's own date.
        #expect(try table.select(where: "date = 2014-05-23", on: .day(Day(2014, 5, 26))).count == 2)
        #expect(try table.select(where: "date = 2014-05-26", on: .day(Day(2014, 5, 26))).count == 0)
    }
}
