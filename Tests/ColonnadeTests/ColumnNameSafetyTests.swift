import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Value columns a query could never reach are refused, never renamed (README, "Column names");
/// wide inputs are capped at `QuoteTable.maximumColumnCount` and stay linear below it.
@Suite struct ColumnNameSafetyTests {
    // MARK: Names like Date or Ticker

    @Test(arguments: [
        ("Day,Date,Close\n2014-01-02,5,10\n", "Date"),          // the issue's reproduction
        ("Date,date,Close\n2014-01-02,5,10\n", "date"),         // the date column's own name, other case
        ("ticker,date,Close,Ticker\nA,2014-01-02,5,10\n", "Ticker"),  // a second ticker column
        ("Trade Day,Trade-Day,Close\n2014-01-02,5,10\n", "Trade-Day"),  // the date column's identifier
        ("Date,%%%,Close\n2014-01-02,5,10\n", "%%%"),           // no letter or digit: empty identifier
    ])
    func csvValueColumnNamedLikeAKeyIsRefusedNamingIt(text: String, column: String) {
        let error = Decode.error(text, source: "x.csv")
        guard case let .unusableColumnName(source, name, _)? = error else { Issue.record("\(String(describing: error))"); return }
        #expect(source == "x.csv" && name == column)
        #expect(error!.description.contains("'\(column)'"))
    }

    @Test func jsonDatasetAndDatatableRefuseValueColumnsNamedLikeKeys() {
        let dataset = #"{"dataset_data":{"column_names":["Day","Date","Close"],"data":[["2014-01-02",5,10]]}}"#
        guard case let .unusableColumnName(_, name, reason)? = Decode.error(dataset) else {
            Issue.record("\(String(describing: Decode.error(dataset)))"); return
        }
        #expect(name == "Date" && reason.contains("reserved"))
        let datatable = #"{"datatable":{"data":[["A","2014-01-02",5]],"columns":[{"name":"ticker","type":"String"},"#
            + #"{"name":"date","type":"Date"},{"name":"Ticker ","type":"double"}]}}"#
        guard case let .unusableColumnName(_, name2, _)? = Decode.error(datatable, ticker: nil) else {
            Issue.record("\(String(describing: Decode.error(datatable, ticker: nil)))"); return
        }
        #expect(name2 == "Ticker ")
    }

    @Test func ordinaryNamesThatMerelyContainDateOrTickerStillImport() throws {
        let decoded = try Decode.text("Date,Date Close,Ticker Volume,Close\n2014-01-02,5,10,11\n")
        #expect(decoded.table.schema.map(\.identifier) == ["date_close", "ticker_volume", "close"])
    }

    @Test func namesWithoutASCIILettersGetAStableNonEmptyIdentifier() throws {
        #expect(ColumnDescriptor.identifier(for: "終値") == "u7d42_u5024")
        #expect(ColumnDescriptor.identifier(for: "Schlusskurs (€)") == "schlusskurs")
        #expect(ColumnDescriptor.identifier(for: "%%%") == "" && ColumnDescriptor.identifier(for: "…") == "")
        // Two such columns are distinct, and each is reachable by identifier and by quoted name.
        let decoded = try Decode.text("Date,終値,始値\n2014-01-02,5,7\n2014-01-03,6,8\n").table
        #expect(decoded.schema.map(\.identifier) == ["u7d42_u5024", "u59cb_u5024"])
        #expect(try decoded.select(where: "u7d42_u5024 > 5").count == 1)
        #expect(try decoded.select(where: "\"始値\" >= 7").count == 2)
    }

    @Test func tableInitRefusesUnreachableColumns() {
        func error(_ names: [String], dateColumnName: String = "Date") -> TableError? {
            let schema = names.map { ColumnDescriptor(name: $0, type: .float64) }
            do {
                _ = try QuoteTable(schema: schema, columns: schema.map { _ in .float64(Column<Double>([1.0])) },
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
        var table = try QuoteTable(schema: [ColumnDescriptor(name: "Open", type: .float64), ColumnDescriptor(name: "Close", type: .float64)],
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

    // MARK: Wide inputs

    static func wideCSV(columns: Int, rows: Int = 2) -> String {
        var text = "Date," + (0 ..< columns).map { "c\($0)" }.joined(separator: ",") + "\n"
        for r in 0 ..< rows {
            text += "2014-01-0\(r + 1)," + (0 ..< columns).map { String(($0 * 7 + r) % 1000) }.joined(separator: ",") + "\n"
        }
        return text
    }

    @Test func moreColumnsThanTheLimitAreRefusedBeforeAnyRowIsDecoded() {
        let limit = QuoteTable.maximumColumnCount
        #expect(limit == 2_000)
        let csv = Self.wideCSV(columns: limit + 1)
        #expect(Decode.error(csv, source: "wide.csv") == .tooManyColumns(source: "wide.csv", count: limit + 1, limit: limit))
        // The issue's shape: 200,000 columns in JSON; refused after reading the names, and a bad
        // row after them is never reached.
        let names = (0 ..< 200_000).map { "\"c\($0)\"" }.joined(separator: ",")
        let json = #"{"dataset_data":{"column_names":["Date","# + names + #"],"data":[["not a date"]]}}"#
        #expect(Decode.error(json) == .tooManyColumns(source: "input", count: 200_000, limit: limit))
    }

    @Test func exactlyTheLimitDecodesAndMergesCorrectly() throws {
        let limit = QuoteTable.maximumColumnCount
        let decoded = try Decode.text(Self.wideCSV(columns: limit), ticker: "A").table
        #expect(decoded.schema.count == limit)
        // Another ticker with the same columns in reverse order, on other days: every column must
        // be matched by name, not position.
        var reversed = "Date," + (0 ..< limit).reversed().map { "c\($0)" }.joined(separator: ",") + "\n"
        reversed += "2014-02-03," + (0 ..< limit).reversed().map { String($0) }.joined(separator: ",") + "\n"
        let other = try Decode.text(reversed, ticker: "B").table
        var merged = decoded
        merged.upsert(other)
        #expect(merged.schema.map(\.identifier) == decoded.schema.map(\.identifier))
        let b = try #require(merged.ticker("B"))
        for c in [0, 1, 999, limit - 1] {
            guard case let .float64(col) = merged.columns[c] else { Issue.record("type"); continue }
            #expect(col[b.firstRow] == Double(c), "column c\(c)")
            #expect(col[0] == Double((c * 7) % 1000))
        }
        // Indices by name, both spellings, one pass.
        #expect(merged.columnIndices(named: ["c1999", "c0", "nope"]) == [limit - 1, 0, nil])
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
