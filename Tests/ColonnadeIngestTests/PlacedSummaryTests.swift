import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
@testable import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

/// Block summaries computed while placing (`ColumnAssembler.place` fills in the blocks that lie
/// wholly inside one input; `finish` the rest) against the row-by-row pass over the finished
/// columns: inputs longer and shorter than a block, blocks across inputs, a column with nulls in
/// one input only, ±0 and NaN-free extremes; for 1 to 3 threads, with the same snapshot bytes.
@Suite struct PlacedSummaryTests {
    typealias P = ParallelImportTests

    /// Tickers of 1…1,700 rows; column 1 has nulls in one ticker only, column 2 many ±0.
    static func longTickers(seed: UInt64) -> QuoteTable {
        var rng = SplitMix64(seed: seed)
        let lengths = [1, 600, 1_700, 511, 512, 513, 40, 1_100, 1_024, 3]
        var dates: [Int32] = []
        var values = [[Double?]](repeating: [], count: 3)
        var entries: [TickerEntry] = []
        for (t, days) in lengths.enumerated() {
            entries.append(TickerEntry(symbol: "L\(t)", firstRow: dates.count, rowCount: days))
            for d in 0 ..< days {
                dates.append(Int32(8_000 + d * 2 + Int(rng.below(2))))
                values[0].append(Double(rng.below(1_000_000)) / 64 - 7_000)
                values[1].append(t == 7 && rng.chance(10) ? nil : Double(rng.below(5_000)))
                let pick = rng.below(8)
                values[2].append(pick == 0 ? 0 : (pick == 1 ? -0.0 : Double(rng.below(1000)) / 8 - 60))
            }
        }
        let schema = ["Open", "Close", "Volume"].map { ColumnDescriptor(name: $0, type: .float64) }
        return try! QuoteTable(schema: schema, columns: values.map { .float64(Column($0)) }, dates: Column(dates), tickers: entries)
    }

    static func bits(_ s: BlockSummaries<Double>?) -> [[UInt64]] {
        guard let s else { return [] }
        return [s.minimums.map(\.bitPattern), s.maximums.map(\.bitPattern), s.unknownCounts.map(UInt64.init)]
    }

    @Test(arguments: [UInt64(1), 2])
    func summariesMadeWhilePlacingEqualTheRowByRowPass(seed: UInt64) throws {
        let dir = ImportTests.directory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let table = Self.longTickers(seed: seed)
        let paths = try QuoteGenerator.writeDatasetJSON(table, toDirectory: dir + "/json")
        var reference = try P.slowImport(paths)
        reference.shrinkToFit()
        let expected = try P.snapshotBytes(reference, in: dir)
        for threads in 1 ... 3 {
            let placed = try #require(try QuoteImporter.importPlacing(paths, ticker: nil, threads: threads, progress: nil))
            #expect(placed.rowCount == table.rowCount)
            #expect(placed.hasSummaries)
            #expect(placed.dates.summaries == BlockSummaries(rowByRow: placed.dates), "threads \(threads)")
            for column in placed.columns {
                guard case .float64(let c) = column else {
                    Issue.record("not Float64")
                    continue
                }
                #expect(Self.bits(c.summaries) == Self.bits(BlockSummaries(rowByRow: c)), "threads \(threads)")
            }
            #expect(placed.columns.contains { $0.validity != nil }, "one column has nulls")
            #expect(try P.snapshotBytes(placed, in: dir) == expected, "threads \(threads)")
        }
    }
}
