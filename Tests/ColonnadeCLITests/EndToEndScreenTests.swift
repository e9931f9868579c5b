import Colonnade
import Foundation
import Testing

/// End-to-end: screens (arithmetic, series functions, --on) through the built `colonnade`, the
/// output parsed back and compared with the engine's answer on the same snapshot.
@Suite struct EndToEndScreenTests {
    static let screen = "close > mavg(close, 20) and volume > 0.8 * mavg(volume, 10) and (high - low) / close > 0.001"

    @Test func aScreenPrintsTheEnginesRows() throws {
        let fx = try EndToEndFixture.get()
        let selection = try fx.table.select(where: Self.screen)
        #expect(selection.count > 10 && selection.count < fx.table.rowCount / 2, "a selective screen")
        let run = try fx.run("filter", "--where", Self.screen, "--format", "csv")
        #expect(run.status == 0, "\(run.standardError)")
        let parsed = try OutputParser.csv(run.standardOutput)
        let columns = ["ticker", "date", "close", "volume", "high", "low"]
        #expect(parsed.columns == columns)
        #expect(parsed.rows == fx.expectedRows(selection.rows(), columns: columns))
    }

    @Test(arguments: ["latest", "mid"])
    func onADayPrintsThatDaysRowsOfTheScreen(day: String) throws {
        let fx = try EndToEndFixture.get()
        let table = fx.table
        let screenDay: ScreenDay, text: String
        if day == "latest" {
            (screenDay, text) = (.latest, "latest")
        } else {
            let d = table.dates[table.tickers[0].firstRow + 150]
            (screenDay, text) = (.day(Day(daysSinceEpoch: d)), Day(daysSinceEpoch: d).description)
        }
        let whole = try table.select(where: Self.screen)
        let dayRows = Set(table.rows(on: screenDay))
        let expected = whole.rows().filter(dayRows.contains)
        let run = try fx.run("filter", "--where", Self.screen, "--on", text, "--columns", "ticker,date,close", "--format", "csv")
        #expect(run.status == 0, "\(run.standardError)")
        let parsed = try OutputParser.csv(run.standardOutput)
        #expect(parsed.rows == fx.expectedRows(expected, columns: ["ticker", "date", "close"]))
        #expect(!expected.isEmpty, "the screen keeps some tickers that day")
        let count = try fx.run("filter", "--where", Self.screen, "--on", text, "--count")
        #expect(count.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == String(expected.count))
    }

    @Test func aBadDayIsAUsageError() throws {
        let fx = try EndToEndFixture.get()
        let run = try fx.run("filter", "--on", "yesterday")
        #expect(run.status == 2)
        #expect(run.standardOutput.isEmpty)
        #expect(run.standardError.contains("invalid value 'yesterday' for '--on'"), "\(run.standardError)")
    }

    @Test(arguments: [
        ("mavg(close, 0) > 1", "the window of mavg() must be a positive whole number", "mavg(close, "),
        ("mavgg(close, 5) > 1", "unknown function 'mavgg'", ""),
        ("prev(ticker) > 1", "prev() applies to value columns and expressions, not to 'ticker'", "prev("),
    ])
    func badExpressionsPointAtTheProblem(text: String, error: String, before: String) throws {
        let fx = try EndToEndFixture.get()
        let run = try fx.run("filter", "--where", text)
        #expect(run.status == 2)
        let lines = try OutputParser.lines(run.standardError)
        try #require(lines.count >= 3, "\(run.standardError)")
        #expect(lines[0].hasPrefix("error: --where: " + error), "\(lines[0])")
        #expect(lines[1] == "  " + text)
        #expect(lines[2] == "  " + String(repeating: " ", count: before.count) + "^")
    }
}
