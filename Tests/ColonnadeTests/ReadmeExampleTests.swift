import Foundation
import Testing
import Colonnade

/// The README's Swift example, so it keeps compiling and doing what it says.
@Suite struct ReadmeExampleTests {
    @Test func theReadmeSwiftExampleRuns() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let sample = root.appendingPathComponent("snapshots/sample.snapshot").path
        let out = FileManager.default.temporaryDirectory.appendingPathComponent("readme-\(UUID().uuidString).snapshot").path
        defer { try? FileManager.default.removeItem(atPath: out) }

        let table = try QuoteTable.load(from: sample)

        let hits = try table.select(where: "80 < high < 83 and 78 < low < 82 and date >= 2005-01-01")
        #expect(hits.count > 0 && hits.rows(limit: 5).count == 5)

        let same = try table.select(
            Field("high").isInside(80, 83) && Field("low").isInside(78, 82)
                && Field.date >= Day(2005, 1, 1))
        #expect(same.mask == hits.mask)

        let trend = Field("close") > Field("close").mavg(50) && Field("close").mavg(50) > Field("close").mavg(200)
        let today = try table.select(trend, on: .latest)
        #expect(today.count > 0 && today.count <= table.tickers.count)
        #expect(today.mask == (try table.select(where: "close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)", on: .latest)).mask)
        let gaps = try table.select(Field("open") > 1.03 * Field("close").prev())
        let best = try gaps.rows(sortedBy: [SortKey(Field("close").pctChange(), descending: true)], limit: 10)
        #expect(best.count == min(10, gaps.count) && Set(best).isSubset(of: Set(gaps.rows())))

        let perTicker = try hits.aggregate([.count, .mean("close"), .max("volume")], byTicker: true)
        #expect(!perTicker.rows.isEmpty && perTicker.rows.allSatisfy { $0.ticker != nil && $0.values.count == 3 })
        let yearly = try table.selectAll().aggregate([.mean(Field("high") - Field("low")), .last("close")], by: .year)
        #expect(yearly.rows.count > 1 && yearly.rows.allSatisfy { $0.year != nil && $0.ticker == nil })
        let returns = try table.values(of: Field("close").pctChange(), atRows: today.rows())
        #expect(returns.count == today.count)

        var mine = table
        mine.upsert(QuoteGenerator(tickers: 3, days: 250, seed: 7).makeTable())
        try mine.save(to: out)
        #expect(try QuoteTable.load(from: out) == mine)

        defer { try? FileManager.default.removeItem(atPath: out + ".lock") }
        let added = QuoteGenerator(tickers: 2, days: 5, seed: 8).makeTable()
        try QuoteTable.update(at: out) { stored in
            stored.upsert(added)
        }
        var expected = mine
        expected.upsert(added)
        #expect(try QuoteTable.load(from: out) == expected)
    }
}
