import Colonnade
import ColonnadeTestSupport
import DataLinkFormat
@testable import DataLink
import DataLinkURLSession
import Foundation
import Synchronization
import Testing

@Suite struct APIKeyTests {
    @Test func keyNeverRendersItself() throws {
        let key = try #require(APIKey("  \(fakeKey)\n"))
        #expect(key.value == fakeKey, "surrounding whitespace is trimmed")
        var dumped = ""
        dump(key, to: &dumped)
        var dumpedConfiguration = ""
        dump(DataLinkConfiguration(transport: .urlSession, apiKey: key), to: &dumpedConfiguration)
        let renderings = [
            key.description, key.debugDescription, "\(key)", String(describing: key), String(reflecting: key),
            dumped, dumpedConfiguration, String(describing: Mirror(reflecting: key).children.map(\.value)),
            String(describing: DataLinkConfiguration(transport: .urlSession, apiKey: key)), String(reflecting: Optional(key)),
        ]
        for text in renderings {
            #expect(!text.contains(fakeKey), "leaked in: \(text)")
            #expect(!text.contains("9f8e7d"), "fragment leaked in: \(text)")
        }
        #expect(key.description == "APIKey(redacted)")
        #expect(String(reflecting: key) == "APIKey(redacted)")
    }

    @Test func unusableKeysAreRejected() {
        #expect(APIKey("") == nil)
        #expect(APIKey("  \n ") == nil)
        #expect(APIKey("abc\r\nX-Other: 1") == nil)
        #expect(APIKey("abc\u{0}def") == nil)
    }

    @Test func resolverOrder() throws {
        let home = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".nasdaq"), withIntermediateDirectories: true)
        try Data("\n   \n  from-home-file  \nsecond-line\n".utf8).write(to: home.appendingPathComponent(APIKey.defaultKeyFile))
        let explicit = home.appendingPathComponent("explicit-key")
        try Data("from-explicit\n".utf8).write(to: explicit)

        func resolved(_ environment: [String: String], _ home: URL?, _ file: String? = nil) throws -> String? {
            try APIKey.resolve(environment: environment, homeDirectory: home, explicitKeyFile: file)?.value
        }
        #expect(try resolved(["NASDAQ_DATA_LINK_API_KEY": " env-key ", "QUANDL_API_KEY": "quandl"], home) == "env-key")
        #expect(try resolved(["NASDAQ_DATA_LINK_API_KEY": "  ", "QUANDL_API_KEY": "quandl"], home) == "quandl")
        #expect(try resolved([:], home) == "from-home-file")
        #expect(try resolved(["NASDAQ_DATA_LINK_API_KEY": "env-key"], home, explicit.path) == "from-explicit")
        #expect(try resolved([:], nil) == nil)
        #expect(try resolved([:], home.appendingPathComponent("no-such-home")) == nil)
    }

    @Test func resolverErrors() throws {
        let home = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(at: home) }
        let missing = home.appendingPathComponent("missing").path
        #expect(throws: APIKeyError.unreadableFile(path: missing)) {
            try APIKey.resolve(environment: ["NASDAQ_DATA_LINK_API_KEY": "x"], homeDirectory: home, explicitKeyFile: missing)
        }
        // A FIFO is refused at once; reading it would wait for a writer that never comes (the
        // guard opens the other end so that a blocked read returns, and the test fails).
        let fifo = home.appendingPathComponent("key.fifo").path
        #expect(mkfifo(fifo, 0o600) == 0)
        let done = DispatchSemaphore(value: 0)
        let outcome = Mutex<String>("")
        Thread.detachNewThread {
            do {
                _ = try APIKey.resolve(environment: [:], homeDirectory: nil, explicitKeyFile: fifo)
                outcome.withLock { $0 = "read" }
            } catch {
                outcome.withLock { $0 = "\(error)" }
            }
            done.signal()
        }
        if done.wait(timeout: .now() + 30) == .timedOut {
            Issue.record("blocked reading the FIFO \(fifo)")
            let writer = open(fifo, O_WRONLY | O_NONBLOCK)
            close(writer)
            done.wait()
        }
        #expect(outcome.withLock { $0 } == APIKeyError.unreadableFile(path: fifo).description)
        let empty = home.appendingPathComponent("empty")
        try Data(" \n\n".utf8).write(to: empty)
        #expect(throws: APIKeyError.noKeyInFile(path: empty.path)) {
            try APIKey.resolve(environment: [:], homeDirectory: nil, explicitKeyFile: empty.path)
        }
        try FileManager.default.createDirectory(at: home.appendingPathComponent(".nasdaq"), withIntermediateDirectories: true)
        let defaultFile = home.appendingPathComponent(APIKey.defaultKeyFile)
        try Data().write(to: defaultFile)
        #expect(throws: APIKeyError.noKeyInFile(path: defaultFile.path)) {
            try APIKey.resolve(environment: [:], homeDirectory: home)
        }
        #expect(APIKeyError.unreadableFile(path: "/x").description == "cannot read API key file /x")
    }

    @Test func keyGoesOnlyInTheHeaderAndNeverIntoErrorsLogsOrURLs() async throws {
        // The server echoes the key back everywhere it can (as QEAx01 does in its message).
        try await LoopbackHTTPServer.run({ request in
            let echoed = request.header("X-Api-Token") ?? "none"
            switch request.sequenceNumber {
            case 0:
                return .json(
                    quandlError("QEAx01", "We could not recognize your API key: '\(echoed)'."), status: 400,
                    headers: ["X-Echo": echoed])
            case 1:
                return .respond(
                    status: 200, headers: ["Content-Type": "text/html", "X-Echo": echoed],
                    body: Data((String(repeating: "x", count: 150) + echoed + "<html>").utf8))
            case 2:
                return .json(#"{"meta":{"next_cursor_id":null},"echo":"\#(echoed)"}"#, headers: ["X-Echo": echoed])
            default:
                return .json(quandlError("QELx04", "\(echoed)"), status: 429, headers: ["Retry-After": "0"])
            }
        }) { server in
            let log = LogRecorder()
            let client = DataLinkClient(configuration: testConfiguration(server, key: fakeKey, maxAttempts: 2, log: log))
            let unauthorized = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
            let unexpected = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
            let page = try await client.tablePage("WIKI/PRICES", tickers: ["AAPL"])
            let limited = await dataLinkError { try await client.tablePage("WIKI/PRICES", tickers: ["AAPL"]) }

            guard case .unauthorized(_, status: 400, let body, keySent: true)? = unauthorized else {
                Issue.record("expected unauthorized, got \(String(describing: unauthorized))")
                return
            }
            #expect(body?.message == "We could not recognize your API key: '<redacted>'.")
            guard case .unexpectedResponse(_, 200, "text/html", let prefix)? = unexpected else {
                Issue.record("expected unexpectedResponse, got \(String(describing: unexpected))")
                return
            }
            #expect(prefix.contains("<redacted><html>"))
            guard case .rateLimited? = limited else {
                Issue.record("expected rateLimited, got \(String(describing: limited))")
                return
            }

            var outputs = [unauthorized, unexpected, limited].map { String(describing: $0) }
            outputs += [page.url.absoluteString, String(describing: page.url)]
            outputs += log.lines
            #expect(log.lines.count >= 10)
            #expect(log.lines.contains { $0.contains("X-Api-Token: <redacted>") })
            #expect(log.lines.contains { $0.hasPrefix("DataLink request") && $0.contains("GET http://127.0.0.1:") })
            #expect(log.lines.contains { $0.contains("HTTP 400") && $0.contains("x-echo: <redacted>") })
            for text in outputs {
                #expect(!text.contains(fakeKey), "key leaked in: \(text)")
                #expect(!text.contains("9f8e7d"), "key fragment leaked in: \(text)")
            }
            for request in server.requests {
                #expect(request.header("X-Api-Token") == fakeKey)
                #expect(!request.target.contains(fakeKey))
                #expect(!request.queryItems.contains { $0.name.lowercased().contains("key") || $0.name.lowercased().contains("token") })
            }
        }
    }

    @Test func keyIsDroppedWhenARedirectLeavesTheOrigin() async throws {
        try await LoopbackHTTPServer.run({ _ in .json(#"{"meta":{}}"#) }) { elsewhere in
            let target = elsewhere.baseURL.absoluteString + "/download/page.json"
            try await LoopbackHTTPServer.run({ request in
                request.path.hasPrefix("/api/")
                    ? .respond(status: 302, headers: ["Location": target], body: Data()) : .json(#"{"meta":{}}"#)
            }) { origin in
                let client = DataLinkClient(configuration: testConfiguration(origin, key: fakeKey))
                let response = try await client.tablePage("WIKI/PRICES", tickers: ["AAPL"])
                #expect(response.url.absoluteString == target)
                #expect(origin.requests.first?.header("X-Api-Token") == fakeKey)
                #expect(elsewhere.requests.count == 1)
                #expect(elsewhere.requests.first?.header("X-Api-Token") == nil, "the key must not follow a redirect to another origin")
            }
        }
    }

    @Test func noKeyMeansNoKeyHeader() async throws {
        try await LoopbackHTTPServer.run({ _ in .json(#"{"meta":{}}"#) }) { server in
            let log = LogRecorder()
            let client = DataLinkClient(configuration: testConfiguration(server, log: log))
            _ = try await client.tablePage("WIKI/PRICES", tickers: ["AAPL"])
            #expect(server.requests.first?.header("X-Api-Token") == nil)
            #expect(!log.lines.contains { $0.contains("X-Api-Token") })
        }
    }

    @Test func tickerCodesRoundTrip() {
        #expect(DataLinkSymbols.code(fromSymbol: "BRK.B") == "BRK_B")
        #expect(DataLinkSymbols.code(fromSymbol: " brk.a ") == "BRK_A")
        #expect(DataLinkSymbols.symbol(fromCode: "BRK_B") == "BRK.B")
        #expect(DataLinkSymbols.symbol(fromCode: DataLinkSymbols.code(fromSymbol: "AAPL")) == "AAPL")
        // One rule: every spelling a user may type is stored as one symbol.
        for typed in ["brk.b", "BRK_B", "BRK.B", " Brk_b\n"] {
            #expect(DataLinkSymbols.symbol(fromCode: DataLinkSymbols.code(fromSymbol: typed)) == "BRK.B", "\(typed)")
        }
    }

    /// The client takes the engine's `Day` and writes it `YYYY-MM-DD`; a day the API cannot take
    /// (outside the years 1 to 9999) is an invalid request, not a dropped bound.
    @Test func datesAreSentAsYearMonthDay() throws {
        #expect(try RequestBuilder.dateValue(Day(2014, 1, 2)) == "2014-01-02")
        #expect(try RequestBuilder.dateValue(Day(5, 3, 9)) == "0005-03-09")
        #expect(try RequestBuilder.dateValue(Day(9999, 12, 31)) == "9999-12-31")
        for day in [Day(0, 12, 31), Day(10_000, 1, 1), Day(daysSinceEpoch: .min)] {
            #expect(throws: DataLinkError.self) { try RequestBuilder.dateValue(day) }
        }
        let query = try RequestBuilder.datasetQuery(from: Day(2014, 1, 1), to: Day(2014, 12, 31), options: DatasetOptions())
        #expect(query.first { $0.0 == "start_date" }?.1 == "2014-01-01")
        #expect(query.first { $0.0 == "end_date" }?.1 == "2014-12-31")
    }

    func temporaryDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("datalink-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }
}
