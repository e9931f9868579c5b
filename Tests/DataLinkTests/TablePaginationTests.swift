import Colonnade
import ColonnadeTestSupport
import DataLinkFormat
@testable import DataLink
import Foundation
import Synchronization
import Testing

@Suite struct TablePaginationTests {
    /// A scripted three-page answer keyed by `qopts.cursor_id`.
    static func page(_ request: LoopbackHTTPRequest) -> LoopbackHTTPAction {
        let (rows, next): (String, String) =
            switch request.query("qopts.cursor_id") {
            case nil: (#"[["AAPL","2014-01-02",79.38]]"#, #""cursor-2""#)
            case "cursor-2"?: (#"[["AAPL","2014-01-03",77.28]]"#, #""cursor+3/=""#)
            case "cursor+3/="?: (#"[["MSFT","2014-01-02",37.16]]"#, "null")
            default: ("[]", "null")
            }
        return .json(
            #"{"datatable":{"data":\#(rows),"columns":[{"name":"ticker","type":"String"},{"name":"date","type":"Date"},{"name":"close","type":"BigDecimal(34,12)"}]},"meta":{"next_cursor_id":\#(next)}}"#
        )
    }

    @Test func followsCursorsUntilNull() async throws {
        try await LoopbackHTTPServer.run(Self.page) { server in
            let client = DataLinkClient(configuration: testConfiguration(server, key: fakeKey))
            var bodies: [String] = []
            try await client.tablePages(
                "WIKI/PRICES", tickers: ["AAPL", "MSFT"], from: Day("2014-01-01"), to: Day("2014-12-31"),
                columns: ["ticker", "date", "close"], perPage: 1
            ) { page in
                bodies.append(String(decoding: page.body, as: UTF8.self))
                #expect(page.target == .table("WIKI/PRICES", tickers: ["AAPL", "MSFT"]))
                return try DataLinkCursor.nextCursorID(inJSON: page.body)
            }
            #expect(bodies.count == 3)
            #expect(bodies[2].contains("MSFT"))

            let seen = server.requests
            #expect(seen.map { $0.query("qopts.cursor_id") } == [nil, "cursor-2", "cursor+3/="])
            for request in seen {
                #expect(request.path == "/api/v3/datatables/WIKI/PRICES.json")
                #expect(request.query("ticker") == "AAPL,MSFT")
                #expect(request.query("date.gte") == "2014-01-01")
                #expect(request.query("date.lte") == "2014-12-31")
                #expect(request.query("qopts.columns") == "ticker,date,close")
                #expect(request.query("qopts.per_page") == "1")
                #expect(request.header("X-Api-Token") == fakeKey)
                #expect(request.header("Accept") == "application/json")
            }
            // The cursor's reserved characters were escaped on the wire.
            #expect(seen[2].rawQuery.contains("qopts.cursor_id=cursor%2B3%2F%3D"))
        }
    }

    /// A server that always hands out a fresh cursor: two tickers over two weeks (10 weekdays)
    /// with 4 rows a page can fill at most ceil(20 / 4) + 2 = 7 pages; the eighth is refused.
    @Test func endlessCursorsStopAtThePageCap() async throws {
        try await LoopbackHTTPServer.run({ request in
            let n = Int(request.query("qopts.cursor_id")?.dropFirst(2) ?? "") ?? 0
            return .json(#"{"datatable":{"data":[["AAPL","2014-01-06",1.0]],"columns":[]},"meta":{"next_cursor_id":"c-\#(n + 1)"}}"#)
        }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            var pages = 0
            let error = await dataLinkError {
                try await client.tablePages(
                    "WIKI/PRICES", tickers: ["AAPL", "MSFT"], from: Day("2014-01-06"), to: Day("2014-01-17"),
                    perPage: 4
                ) { page in
                    pages += 1
                    return try DataLinkCursor.nextCursorID(inJSON: page.body)
                }
            }
            guard case .tooManyPages(.table("WIKI/PRICES", tickers: ["AAPL", "MSFT"]), limit: 7)? = error else {
                Issue.record("expected tooManyPages, got \(String(describing: error))")
                return
            }
            #expect(pages == 7)
            #expect(server.requests.count == 7)
        }
    }

    @Test
    func realTablePageHasNoNextCursor() async throws {
        let fixture = try Fixtures.quandl("WIKI-PRICES.datatable.json")
        try await LoopbackHTTPServer.run({ _ in .json(fixture) }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            var pages = 0
            try await client.tablePages("WIKI/PRICES", tickers: ["MSFT", "COF", "GOOGL"]) { page in
                pages += 1
                #expect(page.body == fixture)
                return try DataLinkCursor.nextCursorID(inJSON: page.body)
            }
            #expect(pages == 1)
            #expect(server.requests.first?.queryDictionary == ["ticker": "MSFT,COF,GOOGL"])
        }
    }

    @Test func onPageErrorsStopTheWalk() async throws {
        struct DecodeFailure: Error {}
        try await LoopbackHTTPServer.run(Self.page) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            await #expect(throws: DecodeFailure.self) {
                try await client.tablePages("WIKI/PRICES", tickers: ["AAPL"]) { _ in throw DecodeFailure() }
            }
            #expect(server.requests.count == 1)
        }
    }

    @Test func repeatedCursorIsAnErrorNotALoop() async throws {
        try await LoopbackHTTPServer.run({ _ in .json(#"{"datatable":{"data":[]},"meta":{"next_cursor_id":"same"}}"#) }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            let error = await dataLinkError {
                try await client.tablePages("WIKI/PRICES", tickers: ["AAPL"]) { try DataLinkCursor.nextCursorID(inJSON: $0.body) }
            }
            #expect({ if case .unexpectedResponse? = error { true } else { false } }())
            #expect(server.requests.count == 2)
        }
    }

    @Test func manyTickersAreBatchedUnderTheURLLimit() async throws {
        let tickers = (0 ..< 1_500).map { "T\($0)" } + ["BRK.B", "FDX&api_key=x"]
        try await LoopbackHTTPServer.run({ _ in .json(#"{"datatable":{"data":[]},"meta":{"next_cursor_id":null}}"#) }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            try await client.tablePages("WIKI/PRICES", tickers: tickers, from: Day("2014-01-01")) {
                try DataLinkCursor.nextCursorID(inJSON: $0.body)
            }
            let seen = server.requests
            #expect(seen.count > 1)
            for request in seen {
                #expect(server.baseURL.absoluteString.utf8.count + request.target.utf8.count <= DataLinkClient.defaultMaxURLLength)
                #expect(request.query("date.gte") == "2014-01-01")
            }
            let sent = seen.flatMap { ($0.query("ticker") ?? "").split(separator: ",").map(String.init) }
            #expect(sent == tickers.map(DataLinkSymbols.code(fromSymbol:)))
            #expect(sent.suffix(2) == ["BRK_B", "FDX&API_KEY=X"])
            #expect(seen.allSatisfy { !$0.queryItems.contains { $0.name.lowercased() == "api_key" } })
        }
    }

    @Test func tickerBatchesRespectTheBudget() {
        #expect(DataLinkClient.tickerBatches([], maxEncodedLength: 10) == [])
        #expect(DataLinkClient.tickerBatches(["AAPL", "MSFT"], maxEncodedLength: 11) == [["AAPL", "MSFT"]])
        #expect(DataLinkClient.tickerBatches(["AAPL", "MSFT"], maxEncodedLength: 10) == [["AAPL"], ["MSFT"]])
        #expect(DataLinkClient.tickerBatches(["AVERYLONGCODE", "A"], maxEncodedLength: 5) == [["AVERYLONGCODE"], ["A"]])
    }
}
