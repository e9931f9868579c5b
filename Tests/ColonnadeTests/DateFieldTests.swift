import Colonnade
import ColonnadeTestSupport
import Testing

/// `Field.date` is a `DateField`: compared with days it filters dates, and a value column compared
/// with a day does not compile (`Field("close") > Day(…)` used to be a silent date filter).
@Suite struct DateFieldTests {
    @Test func swiftBuiltDateFiltersEqualTheTextOnes() throws {
        let table = QuoteGenerator(tickers: 4, days: 300, seed: 29).makeTable()
        // Halfway through the first ticker's days (every generated ticker spans the same days).
        let day = Day(daysSinceEpoch: table.dates[table.tickers[0].rowCount / 2])
        let text = try table.select(where: "date >= \(day)")
        let built = try table.select(Field.date >= day)
        #expect(built.mask == text.mask)
        #expect(built.count > 0 && built.count < table.rowCount)
        let between = try table.select(Field.date.isBetween(day, day))
        #expect(between.count == (try table.select(where: "date >= \(day) and date <= \(day)")).count)
        // A value column still compares with numbers.
        #expect(try table.select(Field("close") > 0).count == table.rowCount)
    }
}
