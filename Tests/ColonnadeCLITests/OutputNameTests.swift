@testable import ColonnadeCLI
import Foundation
import Testing

/// Issue 28, item 10: output names (JSON keys, CSV headers) are unique and `ticker`/`date` name
/// only those columns (``OutputNames``), for `--columns` and `--agg` alike.
@Suite struct OutputNameTests {
    static func filter(_ arguments: String...) throws -> Invocation {
        // --limit applies to rows, not to --agg's groups (refused there): only for row output.
        let limit = arguments.contains("--agg") ? [] : ["--limit", "3"]
        return colonnade(["filter", "--snapshot", try EndToEndFixture.get().snapshot] + limit + ["--format", "json"] + arguments)
    }

    @Test(arguments: [
        (
            "ticker,close as ticker,open as date", "close as ticker",
            "column 2 would be named 'ticker', which is reserved for the ticker column"
        ),
        ("date,close as date", "close as date", "column 2 would be named 'date', which is reserved for the date column"),
        (
            "pct_change(close) as Ticker", "pct_change(close) as Ticker",
            "column 1 would be named 'Ticker', which is reserved for the ticker column"
        ),
        ("close,close", "close", "columns 1 ('close') and 2 would both be named 'close'"),
        ("ticker,close,open as close", "open as close", "columns 2 ('close') and 3 would both be named 'close'"),
        ("close as r,open as R", "open as R", "columns 1 ('close as r') and 2 would both be named 'R'"),
        ("close*2,close*2", "close*2", "columns 1 ('close*2') and 2 would both be named 'close*2'"),
        ("ticker,date,ticker", "ticker", "columns 1 ('ticker') and 3 would both be named 'ticker'"),
    ])
    func clashingOutputNamesAreAUsageErrorNamingTheColumn(columns: String, item: String, reason: String) throws {
        let run = try Self.filter("--columns", columns)
        #expect(run.status == ExitStatus.usage)
        #expect(run.standardOutput.isEmpty)
        #expect(
            run.standardError.hasPrefix("error: invalid value '\(item)' for '--columns' in 'colonnade filter': \(reason)"),
            "\(run.standardError)")
    }

    @Test func distinctNamesPrintJSONWithUniqueKeysInOrder() throws {
        let run = try Self.filter("--columns", "ticker,date,close,close as close2,pct_change(close) as ret")
        #expect(run.status == 0, "\(run.standardError)")
        let first = try #require(run.standardOutput.split(separator: "\n").first { $0.hasPrefix("{") })
        // Keys in the order printed (a JSON parser would hide a duplicate by keeping one of them).
        let keys = first.matches(of: /"([a-z0-9_]+)":/).map { String($0.output.1) }
        #expect(keys == ["ticker", "date", "close", "close2", "ret"], "\(first)")
    }

    @Test func aggregatesUnderOneNameAreRefusedAndDistinctOnesPrint() throws {
        let twice = try Self.filter("--agg", "avg(close),avg(close)", "--by", "ticker")
        #expect(twice.status == ExitStatus.usage)
        #expect(
            twice.standardError.hasPrefix(
                "error: invalid value 'avg(close)' for '--agg' in 'colonnade filter': "
                    + "columns 2 ('avg(close)') and 3 would both be named 'avg(close)'; output names must be unique: drop one\n"),
            "\(twice.standardError)")
        let fine = try Self.filter("--agg", "avg(close),max(close)", "--by", "ticker,year")
        #expect(fine.status == 0, "\(fine.standardError)")
    }

    @Test func theRuleInOnePlace() throws {
        typealias C = OutputNames.Column
        #expect(throws: Never.self) {
            try OutputNames.check(
                [C("ticker", holds: .ticker), C("date", holds: .date), C("close"), C("ret", item: "pct_change(close) as ret")],
                option: "--columns", command: "filter")
        }
        #expect(throws: UsageError.self) { try OutputNames.check([C("ticker")], option: "--columns", command: "filter") }
        #expect(throws: UsageError.self) { try OutputNames.check([C("DATE", holds: .ticker)], option: "--columns", command: "filter") }
        #expect(throws: UsageError.self) { try OutputNames.check([C("a"), C("b"), C("A")], option: "--agg", command: "filter") }
        #expect(throws: Never.self) { try OutputNames.check([], option: "--agg", command: "filter") }
    }
}
