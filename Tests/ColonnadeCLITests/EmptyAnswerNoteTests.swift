import Colonnade
import Foundation
import Testing
@testable import ColonnadeCLI

/// An empty answer whose dates lie outside the table's says so, naming the table's date range;
/// an empty answer for any other reason says nothing.
@Suite struct EmptyAnswerNoteTests {
    static func run(_ arguments: [String]) throws -> Invocation {
        colonnade(["filter", "--snapshot", try EndToEndFixture.get().snapshot] + arguments)
    }

    static var range: String {
        let table = try! EndToEndFixture.get().table
        let first = table.tickers.map { table.dates[$0.firstRow] }.min()!
        let last = table.tickers.map { table.dates[$0.firstRow + $0.rowCount - 1] }.max()!
        return "\(Day(daysSinceEpoch: first)) to \(Day(daysSinceEpoch: last))"
    }

    @Test(arguments: [
        ["--from", "2030-01-01", "--count"],
        ["--to", "1999-12-31", "--format", "csv"],
        ["--where", "close > 1 and date >= 2031-05-05", "--agg", "avg(close)"],
        ["--on", "2030-01-02"],
        ["--where", "date < 2000-01-03", "--count", "--by", "ticker"],
    ])
    func datesOutsideTheTableNameItsRange(arguments: [String]) throws {
        let run = try Self.run(arguments)
        #expect(run.status == 0, "\(run.standardError)")
        let note = "note: no rows match: the dates asked for lie outside this table's, \(Self.range)\n"
        if arguments.first == "--on" {
            // As of a day after the table's end, every ticker is stale: that note comes first.
            #expect(
                run.standardError.hasPrefix("note: ") && run.standardError.hasSuffix("left out (--max-stale 7)\n" + note),
                "\(run.standardError)")
        } else {
            #expect(run.standardError == note)
        }
    }

    @Test(arguments: [
        ["--where", "close < 0", "--count"],
        ["--from", "2000-02-01", "--where", "close < 0", "--count"],
        ["--where", "date < 1990-01-01 or close < 0", "--count"],
        ["--where", "date = 2000-01-08", "--count"],  // a Saturday inside the range
    ])
    func otherEmptyAnswersSayNothing(arguments: [String]) throws {
        let run = try Self.run(arguments)
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput == "0\n")
        #expect(run.standardError.isEmpty)
    }
}
