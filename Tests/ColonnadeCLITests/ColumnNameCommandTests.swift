import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import Foundation
import Testing

/// `import` refuses value columns a query could not reach and inputs wider than the column limit
/// (issue 11, items 5 and 6); `filter --columns` resolves many names in one pass.
@Suite struct ColumnNameCommandTests {
    @Test func importRefusesAValueColumnNamedDateAndWritesNothing() async throws {
        let scratch = try Scratch()
        try scratch.write("Day,Date,Close\n2014-01-02,5,10\n", to: "X.csv")
        let run = await runOffPool(["import", scratch.file("X.csv"), "--ticker", "X", "--snapshot", scratch.snapshot], in: scratch)
        #expect(run.status == 1)
        #expect(run.errorLines.count == 1)
        #expect(run.errorLines.first?.contains("column 'Date'") == true, "\(run.standardError)")
        #expect(run.errorLines.first?.contains("X.csv") == true, "\(run.standardError)")
        #expect(scratch.bytes("quotes.snapshot") == nil)
    }

    @Test func importRefusesMoreColumnsThanTheLimit() async throws {
        let scratch = try Scratch()
        let n = QuoteTable.maximumColumnCount + 1
        let header = "Date," + (0 ..< n).map { "c\($0)" }.joined(separator: ",")
        try scratch.write(header + "\n2014-01-02," + Array(repeating: "1", count: n).joined(separator: ",") + "\n", to: "W.csv")
        let run = await runOffPool(["import", scratch.file("W.csv"), "--ticker", "W", "--snapshot", scratch.snapshot], in: scratch)
        #expect(run.status == 1)
        #expect(run.errorLines.first?.contains("\(n) value columns; a table holds at most 2000") == true, "\(run.standardError)")
        #expect(scratch.bytes("quotes.snapshot") == nil)
    }

    /// Two imports that together pass the limit: the second is refused as unsavable, with the
    /// snapshot unchanged and said to be so (a probe found it called "damaged", with advice to
    /// restore it).
    @Test func anImportThatWouldPassTheColumnLimitLeavesTheSnapshotAndSaysSo() async throws {
        let scratch = try Scratch()
        let header = { (prefix: String, n: Int) in "ticker,date," + (0 ..< n).map { "\(prefix)\($0)" }.joined(separator: ",") }
        let row = { (ticker: String, n: Int) in "\(ticker),2014-01-02," + Array(repeating: "1", count: n).joined(separator: ",") }
        try scratch.write(header("a", 1_500) + "\n" + row("A", 1_500) + "\n", to: "one.csv")
        try scratch.write(header("b", 600) + "\n" + row("B", 600) + "\n", to: "two.csv")
        let first = await runOffPool(["import", scratch.file("one.csv"), "--snapshot", scratch.snapshot], in: scratch)
        #expect(first.status == 0, "\(first.standardError)")
        let before = scratch.bytes("quotes.snapshot")
        let second = await runOffPool(["import", scratch.file("two.csv"), "--snapshot", scratch.snapshot], in: scratch)
        #expect(second.status == 1)
        #expect(
            second.errorLines.first?.contains("not saved: 2100 value columns; a table holds at most 2000; the snapshot there is unchanged")
                == true,
            "\(second.standardError)")
        #expect(!second.standardError.contains("damaged") && !second.standardError.contains("Restore"), "\(second.standardError)")
        #expect(scratch.bytes("quotes.snapshot") == before)
    }

    @Test func filterAndExportSelectTwoThousandColumnsByName() async throws {
        let scratch = try Scratch()
        let n = QuoteTable.maximumColumnCount
        let header = "Date," + (0 ..< n).map { "c\($0)" }.joined(separator: ",")
        let row = "2014-01-02," + (0 ..< n).map(String.init).joined(separator: ",")
        try scratch.write(header + "\n" + row + "\n", to: "W.csv")
        let imported = await runOffPool(["import", scratch.file("W.csv"), "--ticker", "W", "--snapshot", scratch.snapshot], in: scratch)
        #expect(imported.status == 0, "\(imported.standardError)")
        // Every column, in reverse order: each one must resolve to its own values.
        let wanted = (0 ..< n).reversed().map { "c\($0)" }
        let filtered = await runOffPool(
            ["filter", "--columns", wanted.joined(separator: ","), "--format", "csv", "--snapshot", scratch.snapshot],
            in: scratch)
        #expect(filtered.status == 0, "\(filtered.standardError.prefix(300))")
        let lines = filtered.standardOutput.split(separator: "\n").map(String.init)
        #expect(lines.first == wanted.joined(separator: ","))
        #expect(lines.dropFirst().first == (0 ..< n).reversed().map { "\(Double($0))" }.joined(separator: ","))
        let exported = await runOffPool(["export", "--format", "csv", "--snapshot", scratch.snapshot], in: scratch)
        #expect(exported.status == 0, "\(exported.standardError.prefix(300))")
        #expect(
            exported.standardOutput == "ticker,date," + (0 ..< n).map { "c\($0)" }.joined(separator: ",") + "\n"
                + "W,2014-01-02," + (0 ..< n).map { "\(Double($0))" }.joined(separator: ",") + "\n")
    }
}
