@testable import Colonnade
@testable import DataLinkFormat
import ColonnadeTestSupport
import DecodingTestSupport
import Foundation
import Testing

/// RFC 4180 quotes: inside a quoted field a doubled quote `""` is one `"`. A hostile-input probe
/// found `"a""b"` stored as `a""b`, so every export → import round trip doubled the quotes again.
@Suite struct CSVQuoteTests {
    @Test func aDoubledQuoteInAQuotedTickerOrColumnNameIsOneQuote() throws {
        let text = #"""
            ticker,date,"cl""ose","say ""hi"""
            "A""B",2014-01-02,1.5,2
            "A""B",2014-01-03,2.5,3
            """",2014-01-02,3.5,4
            plain,2014-01-02,4.5,5
            "C""""D",2014-01-02,5.5,6

            """#
        let table = try Decode.text(text, ticker: nil).table
        #expect(table.tickers.map(\.symbol).sorted() == ["\"", "A\"B", "C\"\"D", "plain"])
        #expect(table.schema.map(\.name) == ["cl\"ose", "say \"hi\""])
        #expect(table.ticker("A\"B")?.rowCount == 2)
    }

    /// The same ticker written quoted with a doubled quote and, leniently, unquoted is one ticker.
    @Test func oneTickerHoweverItIsQuoted() throws {
        let text = "ticker,date,close\n\"x\"\"y\",2014-01-02,1\nx\"y,2014-01-03,2\n"
        let table = try Decode.text(text, ticker: nil).table
        #expect(table.tickers.map(\.symbol) == ["x\"y"])
        #expect(table.rowCount == 2)
    }

    /// Export → import → export is stable: the writer doubles each quote once, the reader undoes it.
    @Test func exportAndImportRoundTripKeepsQuotesAsTheyAre() throws {
        let symbols = ["A\"B", "\"", "Q\"\"Q", "COMMA,\"QUOTE\""]  // upper case: the writer writes API codes
        var tickers: [TickerEntry] = [], dates: [Int32] = []
        for s in symbols {
            tickers.append(TickerEntry(symbol: s, firstRow: dates.count, rowCount: 2))
            dates += [16_000, 16_001]
        }
        let table = try QuoteTable(
            schema: [ColumnDescriptor(name: "Close", type: .float64)],
            columns: [.float64(Column<Double>(dates.indices.map { Double($0) }))],
            dates: Column(dates), tickers: tickers)
        let dir = NSTemporaryDirectory() + "/colonnade-quotes-\(getpid())-\(UInt32.random(in: 0 ... .max))"
        try FileManager.default.createDirectory(atPath: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: dir) }
        var current = table
        for round in 0 ..< 3 {
            let file = dir + "/round\(round).csv"
            try QuoteGenerator.writeDatatableCSV(current, to: file)
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: file)))
            current = try Decode.bytes(bytes, source: file).table
            #expect(current.tickers.map(\.symbol).sorted() == symbols.sorted(), "round \(round)")
            #expect(current.rowCount == table.rowCount)
        }
    }
}
