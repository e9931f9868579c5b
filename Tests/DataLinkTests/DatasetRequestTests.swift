import Colonnade
import ColonnadeTestSupport
import DataLinkFormat
@testable import DataLink
import DataLinkURLSession
import Foundation
import Testing

@Suite struct DatasetRequestTests {
    @Test
    func datasetJSONComesBackWhole() async throws {
        let fixture = try Fixtures.quandl("WIKI-AMZN.dataset.json")
        try await LoopbackHTTPServer.run({ request in
            request.path == "/api/v3/datasets/WIKI/AMZN/data.json" ? .json(fixture) : .json(quandlError("QECx02", "nope"), status: 404)
        }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            let response = try await client.datasetData(
                database: "WIKI", ticker: "AMZN", from: Day("2016-10-01"), to: Day("2017-10-01"))
            #expect(response.status == 200)
            #expect(response.body == fixture)
            #expect(response.contentType?.hasPrefix("application/json") == true)
            #expect(response.attempts == 1)
            #expect(response.target == .dataset(database: "WIKI", code: "AMZN"))
            #expect(response.url.path == "/api/v3/datasets/WIKI/AMZN/data.json")

            let seen = try #require(server.requests.first)
            #expect(seen.method == "GET")
            #expect(seen.queryDictionary == ["start_date": "2016-10-01", "end_date": "2017-10-01", "order": "asc"])
            #expect(seen.header("Accept") == "application/json")
            #expect(seen.header("User-Agent") == "colonnade/\(Colonnade.version)")
            #expect(seen.header("X-Api-Token") == nil, "no key configured, no key header")
        }
    }

    @Test
    func datasetCSVWithEveryOption() async throws {
        let fixture = try Fixtures.quandl("WIKI-AAPL.2014.asc.csv")
        try await LoopbackHTTPServer.run({ _ in .csv(fixture) }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server, key: fakeKey))
            let options = DatasetOptions(order: .ascending, columnIndex: 4, collapse: .weekly, transform: .rdiff, limit: 300)
            let response = try await client.datasetData(
                database: "WIKI", ticker: "AAPL", from: Day("2014-01-01"), to: Day("2015-01-01"),
                format: .csv, options: options)
            #expect(response.body == fixture)
            let seen = try #require(server.requests.first)
            #expect(seen.path == "/api/v3/datasets/WIKI/AAPL/data.csv")
            #expect(seen.queryItems.map(\.name) == ["start_date", "end_date", "order", "column_index", "collapse", "transform", "limit"])
            #expect(
                seen.queryDictionary == [
                    "start_date": "2014-01-01", "end_date": "2015-01-01", "order": "asc", "column_index": "4",
                    "collapse": "weekly", "transform": "rdiff", "limit": "300",
                ])
            #expect(seen.header("Accept") == "text/csv")
            #expect(seen.header("X-Api-Token") == fakeKey)
            #expect(!seen.target.contains(fakeKey))
            #expect(!response.url.absoluteString.contains(fakeKey))
        }
    }

    @Test func shareClassTickerIsSentAsItsCode() async throws {
        try await LoopbackHTTPServer.run({ _ in .csv("Date,Close\n2014-01-02,177500.0\n") }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            let response = try await client.datasetData(database: "WIKI", ticker: "brk.a", format: .csv)
            #expect(server.requests.first?.path == "/api/v3/datasets/WIKI/BRK_A/data.csv")
            #expect(server.requests.first?.queryDictionary == ["order": "asc"])
            #expect(response.target == .dataset(database: "WIKI", code: "BRK_A"))
        }
    }

    @Test func hostileTickerCannotChangePathOrParameters() async throws {
        try await LoopbackHTTPServer.run({ _ in .csv("Date,Close\n") }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            _ = try await client.datasetData(database: "WIKI", ticker: "FDX&api_key=x?y#z", format: .csv)
            _ = try await client.datasetData(database: "WIKI", ticker: "%2F..%2Fx", format: .csv)
            let seen = server.requests
            #expect(seen.count == 2)
            #expect(seen[0].path == "/api/v3/datasets/WIKI/FDX%26API_KEY%3DX%3FY%23Z/data.csv")
            #expect(seen[0].decodedPath == "/api/v3/datasets/WIKI/FDX&API_KEY=X?Y#Z/data.csv")
            #expect(seen[0].queryItems.map(\.name) == ["order"])
            #expect(seen[1].path == "/api/v3/datasets/WIKI/%252F__%252FX/data.csv")
        }
    }

    @Test(arguments: ["../../x", "", "  ", "A/B", "A,B", "A\r\nX-Api-Token: stolen"])
    func codesThatWouldChangeTheRequestAreRejectedBeforeSending(_ ticker: String) async throws {
        try await LoopbackHTTPServer.run({ _ in .csv("Date,Close\n") }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: ticker) }
            guard case .invalidRequest(let reason)? = error else {
                Issue.record("expected invalidRequest, got \(String(describing: error))")
                return
            }
            #expect(!reason.contains("\n"))
            let tableError = await dataLinkError { try await client.tablePage("WIKI/PRICES", tickers: ["AAPL", ticker]) }
            #expect({ if case .invalidRequest? = tableError { true } else { false } }())
            #expect(server.requests.isEmpty, "nothing may be sent for an invalid code")
        }
    }

    @Test func invalidDatabaseAndDateRangeAreRejected() async throws {
        let client = DataLinkClient(
            configuration: DataLinkConfiguration(transport: .urlSession, baseURL: URL(string: "http://127.0.0.1:9")!))
        for database in ["WIKI/../x", "..", ".", ""] {
            let badDatabase = await dataLinkError { try await client.datasetData(database: database, ticker: "AAPL") }
            #expect({ if case .invalidRequest? = badDatabase { true } else { false } }(), "database \(database)")
        }
        // A ticker's dots become underscores, so "." and ".." are harmless codes ("_", "__").
        #expect(DataLinkSymbols.code(fromSymbol: "..") == "__")
        let backwards = await dataLinkError {
            try await client.datasetData(database: "WIKI", ticker: "AAPL", from: Day("2015-01-01"), to: Day("2014-01-01"))
        }
        #expect(backwards?.description.contains("before") == true)
    }

    @Test func baseURLWithPathPrefixAndTrailingSlash() throws {
        var configuration = DataLinkConfiguration(transport: .urlSession, baseURL: URL(string: "http://127.0.0.1:8080/proxy/")!)
        configuration.apiKey = APIKey(fakeKey)
        let client = DataLinkClient(configuration: configuration)
        let request = try client.datasetRequest(
            database: "WIKI", ticker: "AAPL", from: nil, to: nil, format: .json, options: DatasetOptions())
        #expect(request.url.absoluteString == "http://127.0.0.1:8080/proxy/api/v3/datasets/WIKI/AAPL/data.json?order=asc")
    }
}
