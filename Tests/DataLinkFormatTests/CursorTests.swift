import Colonnade
import ColonnadeTestSupport
import DecodingTestSupport
import DataLinkFormat
import Foundation
import Testing

/// `meta.next_cursor_id` has one reader: `DataLinkCursor` (cursor only) and `QuoteDecoder`
/// (while decoding a page) agree on every case.
@Suite struct CursorTests {
    /// A one-row datatable page whose `meta` is `meta`.
    static func page(meta: String) -> String {
        #"{"datatable":{"data":[["AAPL","2014-01-02",1.5]],"columns":[{"name":"ticker","type":"String"},"#
            + #"{"name":"date","type":"Date"},{"name":"close","type":"BigDecimal(34,12)"}]},"meta":\#(meta)}"#
    }

    static let cases: [(meta: String, cursor: String?)] = [
        (#"{"next_cursor_id":"abc"}"#, "abc"),
        (#"{"next_cursor_id":"c+3/="}"#, "c+3/="),
        (#"{"next_cursor_id":null}"#, nil),
        (#"{"next_cursor_id":""}"#, nil),
        (#"{"next_cursor_id":123}"#, "123"),
        (#"{"other":[1,{"next_cursor_id":"no"}],"next_cursor_id":"yes"}"#, "yes"),
        (#"{}"#, nil),
    ]

    @Test func bothReadersAgree() throws {
        for (meta, cursor) in Self.cases {
            let body = Data(Self.page(meta: meta).utf8)
            #expect(try DataLinkCursor.nextCursorID(inJSON: body) == cursor, "\(meta)")
            let decoded = try QuoteDecoder.decode(Array(body), source: "page")
            #expect(decoded.nextCursorID == cursor, "\(meta)")
            #expect(decoded.table.rowCount == 1)
        }
    }

    @Test func aPageWithoutMetaHasNoCursor() throws {
        #expect(try DataLinkCursor.nextCursorID(inJSON: Data(#"{"datatable":{}}"#.utf8)) == nil)
        #expect(try DataLinkCursor.nextCursorID(inJSON: Fixtures.quandl("WIKI-PRICES.datatable.json")) == nil)
        #expect(try QuoteDecoder.decode(Array(Fixtures.quandl("WIKI-PRICES.datatable.json")), source: "f").nextCursorID == nil)
    }

    /// Not a JSON object: a named error, not a silent "last page".
    @Test func notJSONIsAnError() {
        #expect(throws: ResponseError.notADataLinkResponse(source: "page", detail: "expected a JSON object with 'meta', found '<html>'")) {
            try DataLinkCursor.nextCursorID(inJSON: Data("<html>".utf8))
        }
        #expect(throws: ResponseError.empty(source: "page")) { try DataLinkCursor.nextCursorID(inJSON: Data(" \n".utf8)) }
        #expect(throws: ResponseError.self) { try DataLinkCursor.nextCursorID(inJSON: Data(#"{"meta":{"next_cursor_id":"a"}"#.utf8)) }
        #expect(throws: ResponseError.self) { try DataLinkCursor.nextCursorID(inJSON: Data(#"{"meta":{}} x"#.utf8)) }
    }
}
