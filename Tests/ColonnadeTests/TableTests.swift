import Testing
@testable import Colonnade
import ColonnadeTestSupport

@Suite struct TableTests {
    func table(_ symbol: String, _ days: [Int32], _ closes: [Double?], name: String? = nil) throws -> QuoteTable {
        try QuoteTable(
            sortingRows: [TickerEntry(symbol: symbol, metadata: name.map { ["name": $0] } ?? [:])], rowTickers: nil,
            dates: Column(days), schema: [ColumnDescriptor(name: "Close", type: .float64)],
            columns: [AnyColumn(Column<Double>(closes))])
    }

    @Test func identifiersAreNormalized() {
        #expect(ColumnDescriptor.identifier(for: "Adj. Close") == "adj_close")
        #expect(ColumnDescriptor.identifier(for: "Ex-Dividend") == "ex_dividend")
        #expect(ColumnDescriptor.identifier(for: "Split Ratio") == "split_ratio")
        #expect(ColumnDescriptor.identifier(for: "Turnover (Lacs)") == "turnover_lacs")
        #expect(ColumnDescriptor.identifier(for: "  Prev. Day Open Interest ") == "prev_day_open_interest")
    }

    @Test func rowsArrivingNewestFirstOrUnorderedEndUpAscending() throws {
        let desc = try table("A", [5, 4, 2], [50, 40, 20])
        #expect(Array(desc.dates.withUnsafeBufferPointer(Array.init)) == [2, 4, 5])
        #expect(desc.column(named: "close") == .float64(Column<Double>([20, 40, 50])))
        let mixed = try table("A", [4, 2, 5], [40, 20, nil])
        #expect(mixed.column(named: "Close") == .float64(Column<Double>([20, 40, nil])))
    }

    @Test func duplicateDateInOneInputIsAnError() {
        #expect(throws: TableError.duplicateDate(ticker: "A", day: 4, rows: [0, 2])) { try table("A", [4, 2, 4], [1, 2, 3]) }
    }

    @Test func upsertReplacesOverlapsKeepsOrderAndLeavesOthersAlone() throws {
        var t = try table("A", [1, 3, 5], [10, 30, 50], name: "Alpha")
        t.upsert(try table("B", [2, 4], [200, 400]))
        let bBefore = try #require(t.ticker("B"))
        t.upsert(try table("A", [0, 3, 6], [0, 33, nil], name: "Alpha Inc"))
        let a = try #require(t.ticker("A")), b = try #require(t.ticker("B"))
        #expect(a.rows == 0 ..< 5)
        #expect(Array(t.dates.withUnsafeBufferPointer(Array.init)) == [0, 1, 3, 5, 6, 2, 4])
        #expect(t.column(named: "close") == .float64(Column<Double>([0, 10, 33, 50, nil, 200, 400])))
        #expect(a.metadata["name"] == "Alpha Inc")
        #expect(b.rowCount == bBefore.rowCount)
        #expect(t.hasSummaries)
    }

    @Test func randomUpsertsMatchADictionaryModel() throws {
        var rng = SplitMix64(seed: 21)
        var model = [String: [Int32: Double]]()
        var t = QuoteTable()
        for _ in 0 ..< 60 {
            let symbol = "T\(rng.next() % 5)"
            let days = Array(Set((0 ..< Int(rng.next() % 30)).map { _ in Int32(rng.next() % 60) })).shuffled(using: &rng)
            let closes = days.map { _ in Double(rng.next() % 1000) }
            t.upsert(try table(symbol, days, closes))
            for (d, c) in zip(days, closes) { model[symbol, default: [:]][d] = c }
        }
        for (symbol, rows) in model {
            let entry = try #require(t.ticker(symbol))
            let days = entry.rows.map { t.dates[$0] }
            #expect(days == rows.keys.sorted())
            #expect(entry.rows.map { t.column(named: "close")!.doubleValue(at: $0)! } == rows.keys.sorted().map { rows[$0]! })
        }
        #expect(t.rowCount == model.values.reduce(0) { $0 + $1.count })
    }

    @Test func batchUpsertEqualsSequentialUpserts() throws {
        var rng = SplitMix64(seed: 33)
        var base = try table("T0", [1, 2, 3], [1, 2, 3])
        base.upsert(try table("T1", [5, 6], [50, 60]))
        for round in 0 ..< 20 {
            var parts = [QuoteTable]()
            for _ in 0 ..< 1 + Int(rng.next() % 6) {
                let symbol = "T\(rng.next() % 4)"
                let days = Array(Set((0 ..< Int(rng.next() % 12)).map { _ in Int32(rng.next() % 20) }))
                parts.append(try table(symbol, days, days.map { _ in rng.next() % 5 == 0 ? nil : Double(rng.next() % 100) }))
            }
            var sequential = base, batch = base
            for p in parts { sequential.upsert(p) }
            batch.upsert(contentsOf: parts)
            #expect(batch == sequential, "round \(round)")
            base = batch
        }
    }

    @Test func upsertAddsMissingColumnsAsNullsAndPromotesTypes() throws {
        var t = try table("A", [1, 2], [1, 2])
        let other = try QuoteTable(
            sortingRows: [TickerEntry(symbol: "B")], rowTickers: nil, dates: Column([1]),
            schema: [ColumnDescriptor(name: "Volume", type: .int64), ColumnDescriptor(name: "Close", type: .float32)],
            columns: [AnyColumn(Column<Int64>([7])), AnyColumn(Column<Float>([2.5]))])
        t.upsert(other)
        #expect(t.schema.map(\.identifier) == ["close", "volume"])
        #expect(t.column(named: "close") == .float64(Column<Double>([1, 2, 2.5])))
        #expect(t.column(named: "volume") == .int64(Column<Int64>([nil, nil, 7])))
    }

    @Test func columnsAreAlignedAndCompact() {
        var c = Column<Double>()
        for i in 0 ..< 100_000 { c.append(Double(i)) }
        c.shrinkToFit()
        c.withUnsafeBufferPointer { #expect(Int(bitPattern: $0.baseAddress!) % 64 == 0) }
        #expect(c.capacity * 8 <= 100_000 * 8 + 64)
        #expect(c.validity == nil)
        var withNulls = Column<Int32>([1, nil, 3])
        withNulls.shrinkToFit()
        #expect(withNulls.nullCount == 1)
        #expect(withNulls.value(at: 1) == nil)
    }

    @Test func generatorIsDeterministicAndConsistent() throws {
        let a = QuoteGenerator(tickers: 7, days: 600, seed: 9).makeTable()
        let b = QuoteGenerator(tickers: 7, days: 600, seed: 9).makeTable()
        #expect(a == b)
        #expect(a != QuoteGenerator(tickers: 7, days: 600, seed: 10).makeTable())
        #expect(
            a.schema.map(\.identifier) == [
                "open", "high", "low", "close", "volume", "ex_dividend", "split_ratio",
                "adj_open", "adj_high", "adj_low", "adj_close", "adj_volume",
            ])
        #expect(a.metadata["source"] == "synthetic sample")
        let c = { (n: String) in a.column(named: n)! }
        for r in 0 ..< a.rowCount {
            let o = c("open").doubleValue(at: r)!, h = c("high").doubleValue(at: r)!, l = c("low").doubleValue(at: r)!,
                cl = c("close").doubleValue(at: r)!
            #expect(l <= o && o <= h && l <= cl && cl <= h && l > 0, "row \(r)")
            let v = c("volume").doubleValue(at: r)!
            #expect(v == v.rounded() && v > 0)
        }
        let all = a.selectAll()
        let range = try all.aggregate([.min("close"), .max("close")])
        #expect(range.rows[0].values[0]! > 0.5 && range.rows[0].values[1]! < 5000)
    }
}
