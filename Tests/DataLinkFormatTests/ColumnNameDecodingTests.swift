import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
import DataLinkFormat
import Testing

/// Issue 11, items 5 and 6, in the decoders: value columns a query could never reach are
/// refused, never renamed (README, "Column names"); wide inputs are capped at
/// `QuoteTable.maximumColumnCount` before any row is decoded, and merge by name below it.
@Suite struct ColumnNameDecodingTests {
    @Test(arguments: [
        ("Day,Date,Close\n2014-01-02,5,10\n", "Date"),  // the issue's reproduction
        ("Date,date,Close\n2014-01-02,5,10\n", "date"),  // the date column's own name, other case
        ("ticker,date,Close,Ticker\nA,2014-01-02,5,10\n", "Ticker"),  // a second ticker column
        ("Trade Day,Trade-Day,Close\n2014-01-02,5,10\n", "Trade-Day"),  // the date column's identifier
        ("Date,%%%,Close\n2014-01-02,5,10\n", "%%%"),  // no letter or digit: empty identifier
    ])
    func csvValueColumnNamedLikeAKeyIsRefusedNamingIt(text: String, column: String) {
        let error = Decode.error(text, source: "x.csv")
        guard case let .unusableColumnName(source, name, _)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(source == "x.csv" && name == column)
        #expect(error!.description.contains("'\(column)'"))
    }

    @Test func jsonDatasetAndDatatableRefuseValueColumnsNamedLikeKeys() {
        let dataset = #"{"dataset_data":{"column_names":["Day","Date","Close"],"data":[["2014-01-02",5,10]]}}"#
        guard case let .unusableColumnName(_, name, reason)? = Decode.error(dataset) else {
            Issue.record("\(String(describing: Decode.error(dataset)))")
            return
        }
        #expect(name == "Date" && reason.contains("reserved"))
        let datatable =
            #"{"datatable":{"data":[["A","2014-01-02",5]],"columns":[{"name":"ticker","type":"String"},"#
            + #"{"name":"date","type":"Date"},{"name":"Ticker ","type":"double"}]}}"#
        guard case let .unusableColumnName(_, name2, _)? = Decode.error(datatable, ticker: nil) else {
            Issue.record("\(String(describing: Decode.error(datatable, ticker: nil)))")
            return
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
            guard case let .float64(col) = merged.columns[c] else {
                Issue.record("type")
                continue
            }
            #expect(col[b.firstRow] == Double(c), "column c\(c)")
            #expect(col[0] == Double((c * 7) % 1000))
        }
        // Indices by name, both spellings, one pass.
        #expect(merged.columnIndices(named: ["c1999", "c0", "nope"]) == [limit - 1, 0, nil])
    }
}
