import Colonnade
import DataLinkFormat
@testable import ColonnadeIngest
import ColonnadeTestSupport
import DecodingTestSupport
import Foundation
import Testing

@Suite("Decoding round trips through the generator's writers")
struct DecodingRoundTripTests {
    static func temporaryDirectory() -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-decoding-\(UUID().uuidString)").path
        try! FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A generated table with a few nulls punched in, and one with every special finite value.
    static func tableWithNulls() -> QuoteTable {
        let random = TestTables.random(rows: 700, tickers: 5, seed: 11, nullRate: 0.1, specialRate: 0)
        return Decode.comparable(random)
    }

    static func tableWithSpecialValues() -> QuoteTable {
        let specials: [Double?] = [
            0.0, -0.0, .leastNonzeroMagnitude, .greatestFiniteMagnitude, -.greatestFiniteMagnitude,
            .leastNormalMagnitude, 1e-7, 1e21, 123456789012345680, 0.1, 1 / 3, -2.5, nil, 86.90000000000001,
        ]
        let dates = Column<Int32>((0 ..< Int32(specials.count)).map { 16_000 + $0 })
        let a = Column<Double>(specials), b = Column<Double>(specials.reversed())
        return try! QuoteTable(
            schema: [ColumnDescriptor(name: "A", type: .float64), ColumnDescriptor(name: "B (x)", type: .float64)],
            columns: [.float64(a), .float64(b)], dates: dates,
            tickers: [TickerEntry(symbol: "BRK.A", firstRow: 0, rowCount: specials.count)])
    }

    static let tables: [(String, QuoteTable)] = [
        ("generated", Decode.comparable(QuoteGenerator(tickers: 4, days: 300, seed: 5).makeTable(), keepTickerMetadata: true)),
        ("nulls", tableWithNulls()),
        ("specials", Decode.comparable(tableWithSpecialValues())),
    ]

    @Test(arguments: 0 ..< tables.count)
    func datasetDataJSONRoundTripsPerTicker(_ index: Int) throws {
        let original = Decode.comparable(Self.tables[index].1)
        var merged = QuoteTable()
        for code in original.tickers.indices {
            let bytes = QuoteGenerator.datasetJSON(original, ticker: code)
            let response = try QuoteDecoder.decode(bytes, format: .datasetDataJSON, ticker: original.tickers[code].symbol, source: "t.json")
            merged.upsert(response.table)
        }
        #expect(Decode.comparable(merged) == original)
    }

    @Test(arguments: 0 ..< tables.count)
    func datasetJSONRoundTripsWithNames(_ index: Int) throws {
        let original = Self.tables[index].1
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paths = try QuoteGenerator.writeDatasetJSON(original, toDirectory: directory, shape: .dataset)
        let imported = try QuoteImporter.importFiles(paths)
        #expect(imported == original)
    }

    @Test(arguments: 0 ..< tables.count)
    func datatableCSVRoundTrips(_ index: Int) throws {
        let original = Decode.comparable(Self.tables[index].1)
        let response = try QuoteDecoder.decode(QuoteGenerator.datatableCSV(original), source: "t.csv")
        #expect(response.format == .datatableCSV)
        #expect(response.table.dateColumnName == original.dateColumnName)
        #expect(response.table == original)
    }

    @Test(arguments: 0 ..< tables.count)
    func timeSeriesCSVRoundTripsThroughFiles(_ index: Int) throws {
        let original = Decode.comparable(Self.tables[index].1)
        let directory = Self.temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let paths = try QuoteGenerator.writeTimeSeriesCSV(original, toDirectory: directory)
        #expect(paths.allSatisfy { $0.hasSuffix(".csv") })
        #expect(try QuoteImporter.importFiles(paths) == original)
    }

    @Test func writtenJSONLooksLikeTheAPIs() throws {
        let table = QuoteGenerator(tickers: 1, days: 3, seed: 1).makeTable()
        let text = String(decoding: QuoteGenerator.datasetJSON(table, ticker: 0), as: UTF8.self)
        #expect(
            text.hasPrefix(
                #"{"dataset_data":{"limit":null,"transform":null,"column_index":null,"column_names":["Date","Open","High","Low","Close","Volume","Ex-Dividend","Split Ratio","Adj. Open","Adj. High","Adj. Low","Adj. Close","Adj. Volume"],"start_date":"2000-01-03","end_date":"2000-01-05","frequency":"daily","data":[["2000-01-05","#
            ))
        // Volumes are integral and written with ".0", every value as Swift's description.
        let volume = table.column(named: "Volume")!.doubleValue(at: 2)!
        #expect(text.contains(",\(volume.description),"))
        #expect(volume.description.hasSuffix(".0"))
        #expect(text.hasSuffix(#"]],"collapse":null,"order":"desc"}}"#))
    }
}
