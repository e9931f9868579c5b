import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing

/// `verify --adjustments`, `adjust` and `info`'s events (docs/ADJUSTMENTS.md), run as a process on
/// the real WIKI fixtures.
@Suite struct AdjustmentCommandTests {
    /// A snapshot of one fixture in a fresh directory, made by `colonnade import`.
    static func imported(_ fixture: String, ticker: String?, label: String) throws -> String {
        let directory = try EndToEndFixture.scratchDirectory(label)
        let snapshot = directory.appendingPathComponent("q.snapshot").path
        let run = try runBuiltColonnade(
            ["import", Fixtures.quandlPath(fixture), "--snapshot", snapshot] + (ticker.map { ["--ticker", $0] } ?? []))
        #expect(run.status == 0, "\(run.standardError)")
        return snapshot
    }

    /// A WIKI time-series CSV without its five adjusted columns, written beside the test's files.
    static func withoutAdjustedColumns(_ fixture: String) throws -> String {
        let text = try String(contentsOfFile: Fixtures.quandlPath(fixture), encoding: .utf8)
        let lines = text.split(whereSeparator: \.isNewline).map {
            $0.split(separator: ",", omittingEmptySubsequences: false).prefix(8).joined(separator: ",")
        }
        let url = try EndToEndFixture.scratchDirectory("raw").appendingPathComponent(fixture)
        try (lines.joined(separator: "\n") + "\n").write(to: url, atomically: true, encoding: .utf8)
        return url.path
    }

    @Test func verifyAdjustmentsPassesTheGeneratedSnapshot() throws {
        let fx = try EndToEndFixture.get()
        let run = try fx.run("verify", "--adjustments")
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardOutput.contains("ok: \(fx.snapshot): the adjusted columns of every ticker (12) follow WIKI's rule"))
    }

    @Test func verifyAdjustmentsFindsTheStaleDayOfTheOlderAAPLWithItsOwnExitStatus() throws {
        let snapshot = try Self.imported("WIKI-AAPL.asc.csv", ticker: "AAPL", label: "stale")
        let run = try runBuiltColonnade(["verify", "--adjustments", "--snapshot", snapshot])
        #expect(run.status == 3)
        #expect(
            run.standardError.contains("error: [ticker AAPL, 2016-08-02, row 8986] stale adjusted history: adj_close ratio"),
            "\(run.standardError)")
        #expect(run.standardError.contains("1 ticker with stale adjusted history"))
        #expect(run.standardError.contains("hint: 'colonnade adjust --tickers AAPL'"))
        // Plain verify: the file is whole.
        #expect(try runBuiltColonnade(["verify", "--snapshot", snapshot]).status == 0)

        // adjust repairs it (anchored at the vintage's newest day), and the check then passes.
        let adjust = try runBuiltColonnade(["adjust", "--snapshot", snapshot])
        #expect(adjust.status == 0, "\(adjust.standardError)")
        #expect(
            adjust.standardError.contains("note: recomputed the adjusted columns of 1 ticker (8,993 rows, 49 split and dividend days)"),
            "\(adjust.standardError)")
        #expect(try runBuiltColonnade(["verify", "--adjustments", "--snapshot", snapshot]).status == 0)
    }

    @Test func aDamagedFileIsStatusOneWithAdjustmentsToo() throws {
        let fx = try EndToEndFixture.get()
        let snapshot = try copyOfFile(fx.snapshot, named: "damaged.snapshot")
        let handle = try FileHandle(forUpdating: URL(fileURLWithPath: snapshot))
        try handle.seek(toOffset: 4_096)
        let byte = try handle.read(upToCount: 1) ?? Data([0])
        try handle.seek(toOffset: 4_096)
        try handle.write(contentsOf: Data([byte[0] ^ 0xFF]))
        try handle.close()
        let run = try runBuiltColonnade(["verify", "--adjustments", "--snapshot", snapshot])
        #expect(run.status == 1, "\(run.standardError)")
    }

    @Test func adjustCreatesTheAdjustedColumnsOfRawDataAsTheVendorHasThem() throws {
        let raw = try Self.withoutAdjustedColumns("WIKI-AAPL.desc.csv")
        let directory = try EndToEndFixture.scratchDirectory("create")
        let snapshot = directory.appendingPathComponent("q.snapshot").path
        #expect(try runBuiltColonnade(["import", raw, "--ticker", "AAPL", "--snapshot", snapshot]).status == 0)
        let check = try runBuiltColonnade(["verify", "--adjustments", "--snapshot", snapshot])
        #expect(check.status == 0)
        #expect(check.standardError.contains("no adjusted columns to check"), "\(check.standardError)")
        let run = try runBuiltColonnade(["adjust", "--snapshot", snapshot])
        #expect(run.status == 0, "\(run.standardError)")
        #expect(run.standardError.contains("note: created the adjusted columns of 1 ticker (9,306 rows"), "\(run.standardError)")
        let table = try QuoteTable.load(from: snapshot)
        let vendor = try runBuiltColonnade([
            "import", Fixtures.quandlPath("WIKI-AAPL.desc.csv"), "--ticker", "AAPL",
            "--snapshot", directory.appendingPathComponent("v.snapshot").path,
        ])
        #expect(vendor.status == 0)
        let reference = try QuoteTable.load(from: directory.appendingPathComponent("v.snapshot").path)
        var worst = 0.0
        for name in AdjustmentRule.adjustedIdentifiers {
            let a = try #require(table.column(named: name)), b = try #require(reference.column(named: name))
            for r in 0 ..< table.rowCount { worst = max(worst, abs(a.doubleValue(at: r)! - b.doubleValue(at: r)!) / b.doubleValue(at: r)!) }
        }
        #expect(worst <= 1e-6)
        #expect(try runBuiltColonnade(["verify", "--adjustments", "--snapshot", snapshot]).status == 0)
    }

    @Test func adjustRefusesATableWithoutEventColumnsAndLeavesItAlone() throws {
        let snapshot = try Self.imported("BCHAIN-BLCHS.dataset.json", ticker: nil, label: "noevents")
        let before = try Data(contentsOf: URL(fileURLWithPath: snapshot))
        let run = try runBuiltColonnade(["adjust", "--snapshot", snapshot])
        #expect(run.status == 1)
        #expect(
            run.standardError.contains("error: the table has no open, high, low, close, volume, ex_dividend, split_ratio columns"),
            "\(run.standardError)")
        #expect(run.standardError.contains("hint: "))
        #expect(try Data(contentsOf: URL(fileURLWithPath: snapshot)) == before)
        let missing = try runBuiltColonnade(["adjust", "--snapshot", snapshot + ".none"])
        #expect(missing.status == 1)
        #expect(missing.standardError.contains("no snapshot at"))
        let unknown = try runBuiltColonnade([
            "adjust", "--tickers", "NOPE", "--snapshot", try Self.imported("WIKI-KO.asc.csv", ticker: "KO", label: "ko"),
        ])
        #expect(unknown.status == 1)
        #expect(unknown.standardError.contains("no such ticker in the table: NOPE"))
    }

    @Test func infoListsEachTickersEventsAndOneTickersDays() throws {
        let snapshot = try Self.imported("WIKI-AAPL.desc.csv", ticker: "AAPL", label: "info")
        let info = try runBuiltColonnade(["info", "--snapshot", snapshot])
        #expect(info.status == 0)
        #expect(info.standardOutput.contains("splits"))
        let line = info.standardOutput.split(separator: "\n").first { $0.hasPrefix("AAPL ") }
        #expect(
            line.map { $0.split(separator: " ").prefix(6) == ["AAPL", "9306", "1980-12-12", "2017-11-07", "4", "54"] } == true,
            "\(line ?? "")")
        let one = try runBuiltColonnade(["info", "--snapshot", snapshot, "--ticker", "AAPL"])
        #expect(one.status == 0)
        #expect(one.standardOutput.contains("events of AAPL: 58"))
        #expect(one.standardOutput.split(separator: "\n").contains { $0.split(separator: " ") == ["2014-06-09", "7"] })
        let json = try runBuiltColonnade(["info", "--snapshot", snapshot, "--ticker", "AAPL", "--format", "json"])
        #expect(json.standardOutput.contains("\"split_ratio\" : 7"))
        let unknown = try runBuiltColonnade(["info", "--snapshot", snapshot, "--ticker", "KO"])
        #expect(unknown.status == 1)
    }
}
