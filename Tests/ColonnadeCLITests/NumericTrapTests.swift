import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import Foundation
import Testing

/// Inputs from a file, the network or the command line that used to trap on a numeric conversion.
@Suite struct NumericTrapTests {
    @Test func filterWithABoundPastInt64MaxOnAnInt64ColumnAnswersInsteadOfTrapping() throws {
        let scratch = try Scratch()
        let values: [Int64] = [.min, -1, 0, 1, .max]
        var table = try QuoteTable(
            schema: [ColumnDescriptor(name: "open", type: .int64)], columns: [AnyColumn(Column<Int64>(values))],
            dates: Column<Int32>((0 ..< 5).map(Int32.init)), tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: 5)])
        table.computeSummaries()
        try table.save(to: scratch.snapshot, durable: false)
        for (expression, count) in [
            ("open >= 9223372036854775808", 0), ("open > 9223372036854775807", 0),
            ("open < 9223372036854775808", 5), ("open < -9223372036854775808", 0),
            ("open >= -9223372036854775808", 5), ("open > -1e300 and open < 1e300", 5),
        ] {
            let run = colonnade(["filter", "--snapshot", scratch.snapshot, "--where", expression, "--count"])
            #expect(run.status == 0, "\(expression): \(run.standardError)")
            #expect(run.standardOutput == "\(count)\n", "\(expression): \(run.standardOutput)")
        }
    }

    @Test func fetchUpdateWhenTheLastStoredDateIsTheLastStorableDay() async throws {
        let scratch = try Scratch()
        let last = Day(9999, 12, 31).daysSinceEpoch  // a table holds 0001-01-01 … 9999-12-31
        var table = try QuoteTable(
            schema: [ColumnDescriptor(name: "Close", type: .float64)], columns: [AnyColumn(Column<Double>([1, 2]))],
            dates: Column<Int32>([0, last]), tickers: [TickerEntry(symbol: "AAPL", firstRow: 0, rowCount: 2)])
        table.computeSummaries()
        try table.save(to: scratch.snapshot, durable: false)
        let before = scratch.bytes("quotes.snapshot")
        try await LoopbackHTTPServer.run(QuoteBodies().serve) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["AAPL", "--update"]), in: scratch)
            #expect(run.status == 0, "\(run.standardError)")
            #expect(server.requests.isEmpty, "nothing lies after the last storable day")
            #expect(scratch.bytes("quotes.snapshot") == before)
        }
    }

    @Test func aRetryAfterOfInt64MaxIsReportedNotATrap() async throws {
        let scratch = try Scratch()
        try await makeSnapshot(in: scratch)
        let action = LoopbackHTTPAction.json(
            quandlErrorBody("QELx01", "slow down"), status: 429,
            headers: ["Retry-After": "9223372036854775807"])
        try await LoopbackHTTPServer.run({ _ in action }) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["AAPL", "--debug"]), in: scratch)
            #expect(run.status == 1)
            #expect(run.errorLines.first?.contains("rate limited") == true, "\(run.standardError)")
            #expect(run.errorLines.first?.contains("retry after 9.223372036854776e+18 s") == true, "\(run.standardError)")
        }
    }
}
