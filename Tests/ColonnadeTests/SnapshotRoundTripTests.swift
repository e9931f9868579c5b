import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

@Suite struct SnapshotRoundTripTests {
    static let sizes: [(rows: Int, tickers: Int)] = [(0, 0), (1, 1), (63, 1), (64, 2), (65, 3), (4_095, 4), (4_097, 5), (20_000, 40)]

    @Test(arguments: sizes)
    func randomTablesRoundTripBitForBitAndAnswerTheSameQueries(size: (rows: Int, tickers: Int)) throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let table = TestTables.random(rows: size.rows, tickers: size.tickers, seed: UInt64(size.rows * 31 + size.tickers))
        let path = dir.file("t.snapshot")
        try table.save(to: path)
        for verify in [true, false] {
            let loaded = try QuoteTable.load(from: path, verify: verify)
            #expect(loaded == table)
            #expect(loaded.hasSummaries)
            for (a, b) in zip(loaded.columns, table.columns) { #expect(AnyBlockSummaries(a) == AnyBlockSummaries(b)) }
            #expect(loaded.dates.summaries == table.dates.summaries)
            for query in ["80 < f64 < 83", "i32 >= 70 and not f32 < 65", "78 <= i64 <= 82000 or adj_f64 > 90"] {
                let a = try loaded.select(where: query), b = try table.select(where: query)
                #expect(a.count == b.count && a.rows() == b.rows(), "\(query)")
            }
            if size.rows > 0 {
                let agg = [Aggregate.count("f64"), .sum("i64"), .min("f32"), .max("adj_f64")]
                #expect(try loaded.selectAll().aggregate(agg).rows.map(\.values) == table.selectAll().aggregate(agg).rows.map(\.values))
            }
        }
        let info = try QuoteTable.snapshotInfo(at: path)
        #expect(info.rowCount == size.rows && info.tickerCount == size.tickers && info.formatVersion == "1.0")
        #expect(info.schema == table.schema && info.hasBlockSummaries)
        #expect(info.fileSize == readBytes(path).count)
        #expect(QuoteTable.verifySnapshot(at: path).problems == [])
    }

    @Test func thousandsOfTickersRoundTrip() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let table = QuoteGenerator(tickers: 3_000, days: 2, seed: 5).makeTable()
        try table.save(to: dir.file("many.snapshot"), durable: false)
        let loaded = try QuoteTable.load(from: dir.file("many.snapshot"))
        #expect(loaded == table)
        #expect(loaded.ticker("XAAAA")?.rows == table.ticker("XAAAA")?.rows)
        #expect(try loaded.select(where: "ticker in (AAPL, XABCD)").rows() == table.select(where: "ticker in (AAPL, XABCD)").rows())
    }

    @Test func unicodeNamesAndMetadataRoundTrip() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let schema = [
            ColumnDescriptor(name: "Schlusskurs (€)", type: .float64), ColumnDescriptor(name: "終値", type: .float32),
            ColumnDescriptor(name: "Adj. Close", type: .float64),
        ]
        let tickers = [
            TickerEntry(symbol: "ÄBC", metadata: ["name": "Société Générale 🏦", "ключ": "значение"]),
            TickerEntry(symbol: "日本", metadata: [:]),
        ]
        let table = try QuoteTable(
            sortingRows: tickers, rowTickers: [0, 1, 0], dates: Column<Int32>([3, 1, 2]), schema: schema,
            columns: [
                AnyColumn(Column<Double>([1.5, nil, -0.0])), AnyColumn(Column<Float>([.nan, 2, 3])),
                AnyColumn(Column<Double>([.infinity, 5, 6])),
            ],
            dateColumnName: "Datum ✓", metadata: ["source": "synthetic sample", "note": "naïve — ünïcödé 📈"])
        try table.save(to: dir.file("ü.snapshot"))
        let loaded = try QuoteTable.load(from: dir.file("ü.snapshot"))
        #expect(loaded == table)
        #expect(loaded.dateColumnName == "Datum ✓")
        #expect(loaded.schema == table.schema)
        #expect(loaded.ticker("ÄBC")?.metadata["name"] == "Société Générale 🏦")
    }

    @Test func loadedColumnsAreViewsThatOutliveTheTableAndTheFileName() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let table = sampleTestTable()
        let path = dir.file("v.snapshot")
        try table.save(to: path)
        var kept: Column<Double>?
        var keptValidity: Bitmask?
        do {
            let loaded = try QuoteTable.load(from: path)
            #expect(loaded.dates.valueStorage.isView)
            for c in loaded.columns {
                switch c {
                case .int32(let c): #expect(c.valueStorage.isView)
                case .int64(let c): #expect(c.valueStorage.isView)
                case .float32(let c): #expect(c.valueStorage.isView)
                case .float64(let c): #expect(c.valueStorage.isView)
                }
                #expect(c.validity.map { $0.wordStorage.isView } ?? true)
            }
            guard case .float64(let f)? = loaded.column(named: "f64") else {
                Issue.record("no f64")
                return
            }
            kept = f
            keptValidity = f.validity
        }
        // The table is gone; replace and then delete the file: the mapping keeps the old bytes.
        try sampleTestTable(seed: 99).save(to: path)
        unlink(path)
        guard case .float64(let original)? = table.column(named: "f64") else {
            Issue.record("no f64")
            return
        }
        #expect(kept == original)
        #expect(keptValidity == original.validity)
        // Mutating a view copies it; the mapping is never written.
        var mutated = try #require(kept)
        mutated.append(1)
        #expect(!mutated.valueStorage.isView)
        #expect(kept == original)
    }

    @Test func savingReplacesTheFileAtomicallyAndLeavesNoTemporaries() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("r.snapshot")
        try sampleTestTable(seed: 1).save(to: path)
        let before = try QuoteTable.load(from: path)
        try sampleTestTable(seed: 2).save(to: path)
        #expect(try QuoteTable.load(from: path) == sampleTestTable(seed: 2))
        #expect(before == sampleTestTable(seed: 1))  // the old mapping still reads the old file
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["r.snapshot"])
    }

    @Test func savingIsDeterministic() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        try sampleTestTable().save(to: dir.file("a.snapshot"))
        try sampleTestTable().save(to: dir.file("b.snapshot"), durable: false)
        #expect(sameBytes(readBytes(dir.file("a.snapshot")), readBytes(dir.file("b.snapshot"))))
        // Re-encoding the decoded footer gives the same bytes.
        let image = SnapshotImage(dir.file("a.snapshot"))
        #expect(image.footer.encoded() == Array(image.bytes[image.footerOffset ..< image.footerOffset + image.footerLength]))
    }

    @Test func tableWithoutSummariesGetsThemWritten() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        var table = try QuoteTable(
            sortingRows: [TickerEntry(symbol: "A")], rowTickers: nil, dates: Column<Int32>([1, 2, 3]),
            schema: [ColumnDescriptor(name: "Close", type: .float64)], columns: [AnyColumn(Column<Double>([1, nil, 3]))])
        #expect(!table.hasSummaries)
        try table.save(to: dir.file("s.snapshot"))
        let loaded = try QuoteTable.load(from: dir.file("s.snapshot"))
        #expect(loaded.hasSummaries)
        table.computeSummaries()
        #expect(loaded.columns.map(AnyBlockSummaries.init) == table.columns.map(AnyBlockSummaries.init))
    }

    @Test func theWriterPutsEveryBitmapAfterAllTheValues() throws {
        let table = sampleTestTable()
        let layout = SnapshotWriter(table: table, path: "unused").layout()
        let columns = layout.footer.columns
        let bitmaps = columns.compactMap(\.validity)
        #expect(!bitmaps.isEmpty, "the sample has nulls")
        let lastValues = try #require(columns.map(\.values.offset).max())
        #expect(bitmaps.allSatisfy { $0.offset > lastValues })
        // The values' offsets are those a table without nulls would get.
        let planned = SnapshotWriter.plannedOffsets(rowCount: table.rowCount, valueWidths: table.columns.map(\.elementType.byteWidth))
        #expect(columns.map(\.values.offset) == planned.payloads)
        #expect(bitmaps.first?.offset == planned.footerOffset)
    }

    @Test func aFileWithEachBitmapRightAfterItsValuesLoadsAsBefore() throws {
        // Files written before the values-first order kept each column's bitmap right after its
        // values. Such a file, written by this writer with the old placement, still loads,
        // verifies, and saves again in the new order.
        let table = sampleTestTable()
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("old.snapshot")
        let writer = SnapshotWriter(table: table, path: path)
        var layout = writer.layout()
        // `sources` stay in the writer's order (values, then bitmaps: how `writeFile` assigns
        // checksums); only their offsets move, to the old placement.
        var placer = SnapshotWriter.PayloadPlacer()
        var bitmap = layout.footer.columns.count
        for i in layout.footer.columns.indices {
            let values = placer.place(length: layout.sources[i].length)
            layout.sources[i].offset = values.offset
            layout.footer.columns[i].values = values
            if layout.footer.columns[i].validity != nil {
                let validity = placer.place(length: layout.sources[bitmap].length)
                layout.sources[bitmap].offset = validity.offset
                layout.footer.columns[i].validity = validity
                bitmap += 1
            }
        }
        #expect(bitmap == layout.sources.count && placer.offset == layout.footerOffset)
        let columns = layout.footer.columns
        #expect(
            zip(columns, columns.dropFirst()).contains { a, b in a.validity.map { $0.offset < b.values.offset } ?? false },
            "a bitmap between two columns' values: the old order")
        let fd = open(path, O_CREAT | O_RDWR | O_TRUNC, 0o644)
        #expect(fd >= 0)
        defer { close(fd) }
        try writer.writeFile(fd, layout)
        let report = QuoteTable.verifySnapshot(at: path)
        #expect(report.isValid, "\(report.problems)")
        let loaded = try QuoteTable.load(from: path)
        #expect(loaded == table)
        try loaded.save(to: dir.file("new.snapshot"), durable: false)
        try table.save(to: dir.file("fresh.snapshot"), durable: false)
        #expect(sameBytes(readBytes(dir.file("new.snapshot")), readBytes(dir.file("fresh.snapshot"))))
        #expect(!sameBytes(readBytes(dir.file("new.snapshot")), readBytes(path)))
    }
}
