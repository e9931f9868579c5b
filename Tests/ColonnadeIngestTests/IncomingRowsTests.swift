import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
@testable import DataLinkFormat
@testable import ColonnadeIngest
import Testing

/// `IncomingRows` (fetch's responses into final columns) against one table per response merged
/// the way fetch merged them before: the same table, whatever stops the responses concatenating.
@Suite struct IncomingRowsTests {
    typealias P = ParallelImportTests

    /// One dataset response per ticker of `table`, decoded both ways.
    static func responses(_ table: QuoteTable) throws -> [(rows: DecodedRows, table: QuoteTable)] {
        try table.tickers.indices.map { code in
            let body = QuoteGenerator.datasetJSON(table, ticker: code)
            let symbol = table.tickers[code].symbol
            return try body.withUnsafeBytes { bytes in
                (
                    try QuoteDecoder.decodeRows(bytes, ticker: symbol, source: symbol),
                    try QuoteDecoder.decode(bytes, ticker: symbol, source: symbol).table
                )
            }
        }
    }

    /// Adds every response in order; the merged result and how many tables it came from.
    static func viaIncoming(_ responses: [(rows: DecodedRows, table: QuoteTable)]) -> (QuoteTable, Int) {
        let incoming = IncomingRows()
        for (k, r) in responses.enumerated() { incoming.add(r.rows, source: "response \(k)") }
        var tables = incoming.tables()
        let count = tables.count
        return (QuoteTable.merging(&tables), count)
    }

    static func viaTables(_ responses: [(rows: DecodedRows, table: QuoteTable)]) -> QuoteTable {
        var tables = responses.map(\.table)
        return QuoteTable.merging(&tables)
    }

    @Test(arguments: [UInt64(1), 2, 3])
    func concatenatingResponsesGoIntoOneSetOfColumns(seed: UInt64) throws {
        let table = P.randomTable(seed: seed, tickers: 12)
        let (merged, parts) = Self.viaIncoming(try Self.responses(table))
        #expect(parts == 1)
        #expect(merged == Self.viaTables(try Self.responses(table)))
        #expect(merged.rowCount == table.rowCount && merged.tickers.map(\.symbol) == table.tickers.map(\.symbol))
    }

    @Test func aRepeatedTickerOrAnotherSchemaIsKeptWholeAndMergedAsBefore() throws {
        let table = P.randomTable(seed: 7, tickers: 8)
        let other = P.randomTable(seed: 8, tickers: 2, columns: 2, firstSymbol: 20)
        var responses = try Self.responses(table)
        // The same ticker again (its rows again: the later response wins), then other columns,
        // then more of the first kind.
        responses.insert(try Self.responses(table)[2], at: 5)
        responses.insert(contentsOf: try Self.responses(other), at: 6)
        let (merged, parts) = Self.viaIncoming(responses)
        #expect(parts == 1 + (responses.count - 5), "appended until the repeat, then kept whole")
        #expect(merged == Self.viaTables(responses))
        #expect(merged.rowCount == table.rowCount + other.rowCount)
    }

    @Test func noResponsesOrNoRowsGiveNoTables() throws {
        let incoming = IncomingRows()
        #expect(incoming.tables().isEmpty)
        let empty = Array(#"{"dataset_data":{"column_names":["Date","Open"],"data":[]}}"#.utf8)
        let rows = try empty.withUnsafeBytes { try QuoteDecoder.decodeRows($0, ticker: "X", source: "x") }
        let again = IncomingRows()
        again.add(rows, source: "x")
        #expect(again.tables().isEmpty)
    }
}
