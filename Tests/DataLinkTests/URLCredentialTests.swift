import ColonnadeTestSupport
@testable import DataLink
import Foundation
import Testing

/// A base URL may carry `user:password@` (a mirror behind basic auth) and a redirect may carry
/// `api_key=…`: neither is kept in a response's URL, and neither is shown in a log line.
@Suite struct URLCredentialTests {
    static let body = #"{"dataset_data":{"column_names":["Date","Close"],"data":[["2017-01-03",1.5]]}}"#

    @Test func aResponseKeepsNoUserInfoOfTheBaseURL() async throws {
        try await LoopbackHTTPServer.run({ _ in .json(Self.body) }) { server in
            var parts = try #require(URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false))
            parts.user = "alice"
            parts.password = "hunter2secret"
            var configuration = testConfiguration(server, key: fakeKey, maxAttempts: 1)
            configuration.baseURL = try #require(parts.url)
            let log = LogRecorder()
            configuration.log = log.hook
            let response = try await DataLinkClient(configuration: configuration).datasetData(database: "WIKI", ticker: "AAPL")
            #expect(response.url.user == nil && response.url.password == nil, "\(response.url)")
            #expect(!response.url.absoluteString.contains("hunter2secret") && !response.url.absoluteString.contains("alice"))
            #expect(response.url.path == "/api/v3/datasets/WIKI/AAPL/data.json")
            #expect(response.url.host == "127.0.0.1")
            #expect(!log.lines.joined().contains("hunter2secret") && !log.lines.joined().contains("alice:"), "\(log.lines)")
        }
    }

    @Test func aRedirectsAPIKeyParameterIsNeitherKeptNorLogged() async throws {
        try await LoopbackHTTPServer.run({ request in
            request.path == "/moved"
                ? .json(Self.body)
                : .respond(status: 302, headers: ["Location": "/moved?api_key=SECRETVALUE42&order=asc"], body: Data())
        }) { server in
            let log = LogRecorder()
            let client = DataLinkClient(configuration: testConfiguration(server, key: fakeKey, maxAttempts: 1, log: log))
            let response = try await client.datasetData(database: "WIKI", ticker: "AAPL")
            #expect(response.url.path == "/moved", "the redirect was followed: \(response.url)")
            #expect(!response.url.absoluteString.contains("SECRETVALUE42"), "\(response.url)")
            #expect(response.url.query == "order=asc", "other parameters stay")
            #expect(!log.lines.joined().contains("SECRETVALUE42"), "\(log.lines)")
        }
    }

    @Test func keptURLDropsUserInfoAndCredentialParameters() throws {
        func kept(_ text: String) throws -> String { Redactor.keptURL(try #require(URL(string: text))).absoluteString }
        #expect(try kept("https://u:pw@h.example/x?api_key=K&y=1") == "https://h.example/x?y=1")
        #expect(try kept("https://h.example:8443/x?API_KEY=K") == "https://h.example:8443/x")
        #expect(try kept("https://h.example/x?token=t&password=p&y=2") == "https://h.example/x?y=2")
        #expect(try kept("https://h.example/x?y=1") == "https://h.example/x?y=1", "nothing to strip: unchanged")
        #expect(try kept("https://user@h.example/x") == "https://h.example/x")
    }

    @Test func displayURLRedactsUserInfoAndCredentialParameters() throws {
        func shown(_ text: String) throws -> String { Redactor.displayURL(try #require(URL(string: text))) }
        #expect(try shown("https://u:pw@h.example/x?api_key=K&y=1") == "https://<redacted>@h.example/x?api_key=<redacted>&y=1")
        #expect(try shown("https://h.example/x?api_key=K") == "https://h.example/x?api_key=<redacted>")
        #expect(try shown("https://h.example/x?y=1") == "https://h.example/x?y=1")
    }
}
