import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import Foundation
import Testing

/// Deep and long `--where` expressions through the commands (issue 28, item 2): they used to end
/// `filter` and the whole `shell` session with a stack overflow (exit 139).
@Suite struct DeepExpressionCLITests {
    /// A snapshot of one ticker whose closes are 1 … 40.
    static func snapshot() throws -> Scratch {
        let scratch = try Scratch()
        let closes = (1 ... 40).map(Double.init)
        var table = try QuoteTable(
            schema: [ColumnDescriptor(name: "Close", type: .float64)], columns: [AnyColumn(Column<Double>(closes))],
            dates: Column<Int32>((0 ..< 40).map(Int32.init)), tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: 40)])
        table.computeSummaries()
        try table.save(to: scratch.snapshot, durable: false)
        return scratch
    }

    @Test func filterEvaluatesAFlat50000TermSum() throws {
        let scratch = try Self.snapshot()
        // close × 50,000 > 1,000,000 exactly when close > 20 (the sums of whole numbers are exact).
        let sum = Array(repeating: "close", count: 50_000).joined(separator: " + ")
        let run = colonnade(["filter", "--snapshot", scratch.snapshot, "--where", sum + " > 1000000", "--count"])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput == "20\n")
    }

    @Test func filterRefusesDeepNestingWithItsPosition() throws {
        let scratch = try Self.snapshot()
        for (text, column) in [
            (String(repeating: "(", count: 5_000) + "close > 1" + String(repeating: ")", count: 5_000), 1_001),
            (String(repeating: "not ", count: 20_000) + "close > 1", 4_001),
            (String(repeating: "prev(", count: 8_000) + "close" + String(repeating: ")", count: 8_000) + " > 1", 5_001),
        ] {
            let run = colonnade(["filter", "--snapshot", scratch.snapshot, "--where", text, "--count"])
            #expect(run.status != 0 && run.status != 139)
            #expect(run.standardError.contains("nested more than 1000 levels deep"), "\(run.standardError.prefix(300))")
            #expect(run.standardError.contains("at 1:\(column)"), "\(run.standardError.prefix(300))")
            #expect(run.standardOutput.isEmpty)
        }
    }

    @Test func shellReportsDeepNestingAndGoesOn() throws {
        let expected = try ShellTests.filter(["--where", "close > 100", "--format", "csv"])
        let run = try ShellTests.shellThroughAPipe(
            """
            .format csv
            \(String(repeating: "not ", count: 20_000))close > 1
            close > 100
            """)
        #expect(run.standardError.contains("nested more than 1000 levels deep"), "\(run.standardError.prefix(300))")
        #expect(run.standardOutput.contains(expected), "\(run.standardOutput.prefix(300))")
    }
}
