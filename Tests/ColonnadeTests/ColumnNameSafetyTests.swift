import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Value columns a query could never reach are refused, never renamed (README, "Column names"),
/// by the table, the writer and the snapshot reader; the decoders' side is in
/// DataLinkFormatTests/ColumnNameDecodingTests.
@Suite struct ColumnNameSafetyTests {
    @Test func tableInitRefusesUnreachableColumns() {
        func error(_ names: [String], dateColumnName: String = "Date") -> TableError? {
            let schema = names.map { ColumnDescriptor(name: $0, type: .float64) }
            do {
                _ = try QuoteTable(
                    schema: schema, columns: schema.map { _ in .float64(Column<Double>([1.0])) },
                    dates: Column<Int32>([0]), tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: 1)],
                    dateColumnName: dateColumnName)
                return nil
            } catch { return error }
        }
        #expect(error(["Ticker"]) == .unusableColumn(name: "Ticker", reason: "its identifier 'ticker' is reserved for the ticker column"))
        #expect(error(["DATE"]) == .unusableColumn(name: "DATE", reason: "its identifier 'date' is reserved for the date column"))
        #expect(error(["Trade Day"], dateColumnName: "Trade Day") != nil)
        #expect(error(["…"]) != nil, "no ASCII letter or digit")
        #expect(error(["Close", "Day"]) == nil)
    }

    @Test func saveRefusesATableTheLoaderWouldRefuseAndWritesNothing() {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let table = QuoteTable(schema: [ColumnDescriptor(name: "Close", type: .float64), ColumnDescriptor(name: "date", type: .float64)])
        let path = dir.file("t.snapshot")
        #expect(throws: SnapshotError.self) { try table.save(to: path, durable: false) }
        #expect((try? FileManager.default.contentsOfDirectory(atPath: dir.path)) == [])
    }

    @Test(arguments: ["ticker", "date", "day", "", "Not Normal"])
    func loaderRefusesASnapshotWhoseIdentifierIsReservedEmptyOrNotNormalized(identifier: String) throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        var table = try QuoteTable(
            schema: [ColumnDescriptor(name: "Open", type: .float64), ColumnDescriptor(name: "Close", type: .float64)],
            columns: [.float64(Column<Double>([1, 2])), .float64(Column<Double>([3, 4]))],
            dates: Column<Int32>([0, 1]), tickers: [TickerEntry(symbol: "A", firstRow: 0, rowCount: 2)],
            dateColumnName: "Day")
        table.computeSummaries()
        try table.save(to: path, durable: false)
        var image = SnapshotImage(path)
        image.editFooter { f in f.schema[1].identifier = identifier }
        image.write(to: path)
        for verify in [true, false] {
            let error = loadError(path, verify: verify)
            #expect(caseName(error) == "malformedFooter", "\(String(describing: error))")
            #expect(String(describing: error).contains("column 1 (Close)"))
        }
        #expect(!QuoteTable.verifySnapshot(at: path).isValid)
    }

    @Test func loaderRefusesMoreColumnsThanTheLimit() throws {
        let dir = ScratchDirectory()
        defer { dir.remove() }
        let path = dir.file("s.snapshot")
        try sampleTestTable(rows: 10, tickers: 1).save(to: path, durable: false)
        var image = SnapshotImage(path)
        image.editFooter { f in
            f.schema += (0 ... QuoteTable.maximumColumnCount).map { ColumnDescriptor(name: "w\($0)", type: .float64) }
        }
        image.write(to: path)
        let error = loadError(path, verify: false)
        #expect(caseName(error) == "malformedFooter" && String(describing: error).contains("at most 2000"), "\(String(describing: error))")
    }
}
