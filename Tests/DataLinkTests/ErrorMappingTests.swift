import ColonnadeTestSupport
@testable import DataLink
import Foundation
import Testing

@Suite struct ErrorMappingTests {
    @Test
    func notFoundWithCSVErrorBody() async throws {
        let body = try Fixtures.quandl("error.QECx02.csv")
        try await LoopbackHTTPServer.run({ _ in .csv(body, status: 404) }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "FDXX", format: .csv) }
            guard case let .notFound(target, errorBody)? = error else {
                Issue.record("expected notFound, got \(String(describing: error))")
                return
            }
            #expect(target == .dataset(database: "WIKI", code: "FDXX"))
            #expect(errorBody?.code == "QECx02")
            #expect(errorBody?.message.hasPrefix("You have submitted an incorrect Quandl code") == true)
            let text = try #require(error?.description)
            #expect(text.hasPrefix("unknown dataset WIKI/FDXX (HTTP 404, QECx02: You have submitted"))
            #expect(!text.contains("\n"))
            #expect(server.requests.count == 1, "404 is never retried")
        }
    }

    @Test
    func notFoundWithJSONErrorBody() async throws {
        let body = try Fixtures.quandl("error.QECx05.json")
        try await LoopbackHTTPServer.run({ _ in .json(body, status: 404) }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            let error = await dataLinkError { try await client.datasetData(database: "GOOG", ticker: "X") }
            guard case let .notFound(_, errorBody)? = error else {
                Issue.record("expected notFound, got \(String(describing: error))")
                return
            }
            #expect(errorBody?.code == "QECx05")
            #expect(errorBody?.message.contains("/api/v3/datasets/:database_code/:dataset_code") == true)
        }
    }

    @Test func goneSuggestsTheTablesSource() async throws {
        try await LoopbackHTTPServer.run({ _ in .respond(status: 410, headers: [:], body: Data()) }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
            guard case .gone(.dataset(database: "WIKI", code: "AAPL"), nil)? = error else {
                Issue.record("expected gone, got \(String(describing: error))")
                return
            }
            // The table, not the CLI's option: the CLI's hint adds `--table WIKI/PRICES`.
            #expect(error?.description.contains("try the table WIKI/PRICES instead") == true)
            #expect(server.requests.count == 1)
        }
    }

    @Test func statusIsReadBeforeTheQECode() async throws {
        let cases: [(Int, String, String)] = [
            (400, "QESx09", "clientError"),
            (400, "QEAx01", "unauthorized"),
            (401, "QEPx01", "unauthorized"),
            (403, "QEPx05", "forbidden"),
            (403, "QEAx03", "forbidden"),
            (422, "QESx02", "clientError"),
            (422, "QELx06", "clientError"),
            (422, "QEAx02", "unauthorized"),
            (413, "QELx08", "clientError"),
            (429, "QELx01", "rateLimited"),
            (500, "QEMx01", "serverError"),
            (503, "QEXx01", "serverError"),
        ]
        for (status, code, expected) in cases {
            try await LoopbackHTTPServer.run({ _ in .json(quandlError(code, "message for \(code)"), status: status) }) { server in
                let client = DataLinkClient(configuration: testConfiguration(server, maxAttempts: 1))
                let error = await dataLinkError { try await client.tablePage("WIKI/PRICES", tickers: ["AAPL"]) }
                let name = error.map { String(describing: $0).prefix { $0 != "(" } }.map(String.init)
                let kind: String? =
                    switch error {
                    case .clientError?: "clientError"
                    case .unauthorized?: "unauthorized"
                    case .forbidden?: "forbidden"
                    case .rateLimited?: "rateLimited"
                    case .serverError?: "serverError"
                    default: name
                    }
                #expect(kind == expected, "HTTP \(status) \(code)")
                #expect(error?.description.contains("table WIKI/PRICES (ticker AAPL)") == true)
                #expect(error?.description.contains(code) == true)
            }
        }
    }

    @Test func forbiddenSaysWhetherAKeyWasSent() async throws {
        try await LoopbackHTTPServer.run({ _ in .json(quandlError("QEPx05", "premium"), status: 403) }) { server in
            let anonymous = DataLinkClient(configuration: testConfiguration(server))
            let withKey = DataLinkClient(configuration: testConfiguration(server, key: fakeKey))
            let first = await dataLinkError { try await anonymous.datasetData(database: "EOD", ticker: "AAPL") }
            let second = await dataLinkError { try await withKey.datasetData(database: "EOD", ticker: "AAPL") }
            guard case .forbidden(_, 403, _, keySent: false)? = first, case .forbidden(_, 403, _, keySent: true)? = second else {
                Issue.record("got \(String(describing: first)) and \(String(describing: second))")
                return
            }
            #expect(first?.description.contains("no API key was sent") == true)
            #expect(second?.description.contains("an API key was sent") == true)
        }
    }

    @Test(arguments: [400, 401, 403, 404, 410, 422])
    func clientErrorsAreNeverRetried(_ status: Int) async throws {
        try await LoopbackHTTPServer.run({ _ in .json(quandlError("QESx00", "no"), status: status) }) { server in
            let sleeper = SleepRecorder()
            let client = DataLinkClient(configuration: testConfiguration(server, maxAttempts: 5, sleeper: sleeper))
            let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
            #expect(error?.isRetryable == false)
            #expect(server.requests.count == 1)
            #expect(sleeper.delays.isEmpty)
        }
    }

    @Test func htmlInsteadOfJSONIsAnUnexpectedResponse() async throws {
        let page =
            "<html>\n<head><title>Incapsula incident</title></head>\n<body>" + String(repeating: "blocked ", count: 100) + "</body></html>"
        try await LoopbackHTTPServer.run({ _ in .respond(status: 200, headers: ["Content-Type": "text/html"], body: Data(page.utf8)) }) {
            server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
            guard case let .unexpectedResponse(target, 200, contentType, prefix)? = error else {
                Issue.record("expected unexpectedResponse, got \(String(describing: error))")
                return
            }
            #expect(target == .dataset(database: "WIKI", code: "AAPL"))
            #expect(contentType == "text/html")
            #expect(prefix.contains("<html>\\n<head><title>Incapsula"))
            #expect(!prefix.contains("\n"))
            #expect(prefix.utf8.count < 300)
            #expect(server.requests.count == 1)
        }
    }

    @Test func jsonContentTypeWithHTMLBodyAndCSVWithJSONBodyAreRejected() async throws {
        try await LoopbackHTTPServer.run({ request in
            request.path.hasSuffix(".json") ? .json("<html></html>") : .csv(#"{"dataset_data":{}}"#)
        }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server))
            let json = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
            let csv = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL", format: .csv) }
            #expect({ if case .unexpectedResponse? = json { true } else { false } }())
            #expect({ if case .unexpectedResponse? = csv { true } else { false } }())
        }
    }

    @Test func errorBodiesAreRecognized() {
        let redactor = Redactor(key: APIKey(fakeKey))
        let json = DataLinkErrorBody.parse(
            Data(quandlError("QEAx01", "We could not recognize your API key: '\(fakeKey)'.").utf8), redactor: redactor)
        #expect(json == DataLinkErrorBody(code: "QEAx01", message: "We could not recognize your API key: '<redacted>'."))
        let csv = DataLinkErrorBody.parse(Data("code,message\r\nQECx02,\"Quoted, with comma\"\r\n".utf8), redactor: redactor)
        #expect(csv == DataLinkErrorBody(code: "QECx02", message: "Quoted, with comma"))
        #expect(DataLinkErrorBody.parse(Data("<html></html>".utf8), redactor: redactor) == nil)
        #expect(DataLinkErrorBody.parse(Data(#"{"error":"x"}"#.utf8), redactor: redactor) == nil)
        #expect(DataLinkErrorBody.parse(Data(), redactor: redactor) == nil)
    }

    @Test func everyDescriptionNamesTheRequestOnOneLine() {
        let target = DataLinkTarget.table("WIKI/PRICES", tickers: ["A", "B", "C", "D", "E", "F", "G"])
        #expect(target.description == "table WIKI/PRICES (tickers A, B, C, D, E and 2 more)")
        let body = DataLinkErrorBody(code: "QEXx01", message: "slow")
        let errors: [DataLinkError] = [
            .transport(target, reason: "reset"), .timedOut(target, after: .milliseconds(300)), .notFound(target, body),
            .gone(target, nil), .unauthorized(target, status: 401, body, keySent: true),
            .forbidden(target, status: 403, nil, keySent: false), .rateLimited(target, retryAfter: .seconds(30), body),
            .notReady(target, retryAfter: nil, nil), .clientError(target, status: 400, body), .serverError(target, status: 503, body),
            .unexpectedResponse(target, status: 200, contentType: "text/html", bodyPrefix: "<html>"),
            .responseTooLarge(target, limit: 10, declaredLength: 20),
            .responseTooLarge(target, limit: 10, declaredLength: nil, received: 30),
            .malformedResponse(target, reason: "Content-Length '1e3' is not a number"), .tooManyPages(target, limit: 3),
            .emptyPageWithCursor(target, page: 2), .cancelled(target),
        ]
        for error in errors {
            #expect(error.description.contains("table WIKI/PRICES"), "\(error)")
            #expect(!error.description.contains("\n"))
            #expect(error.target == target)
        }
        #expect(DataLinkError.timedOut(target, after: .milliseconds(300)).description.contains("300 ms"))
        #expect(DataLinkError.rateLimited(target, retryAfter: .seconds(30), nil).description.contains("retry after 30 s"))
    }

    /// The library's text never names a command-line option (`--table`, `--ticker`, …): the CLI
    /// adds those hints. Covers every case, for a dataset and a table.
    @Test func noDescriptionNamesACommandLineOption() {
        let body = DataLinkErrorBody(code: "QECx06", message: "deprecated")
        for target in [DataLinkTarget.dataset(database: "WIKI", code: "AAPL"), .table("WIKI/PRICES", tickers: ["A"])] {
            let errors: [DataLinkError] = [
                .invalidRequest("a code with '/'"), .transport(target, reason: "reset"), .timedOut(target, after: .seconds(1)),
                .notFound(target, body), .gone(target, body), .unauthorized(target, status: 401, nil, keySent: false),
                .forbidden(target, status: 403, nil, keySent: true), .rateLimited(target, retryAfter: nil, body),
                .notReady(target, retryAfter: nil, nil), .clientError(target, status: 400, body),
                .serverError(target, status: 500, nil), .unexpectedResponse(target, status: 200, contentType: nil, bodyPrefix: "x"),
                .responseTooLarge(target, limit: 1, declaredLength: nil),
                .responseTooLarge(target, limit: 1, declaredLength: nil, received: 2),
                .malformedResponse(target, reason: "x"), .tooManyPages(target, limit: 3), .emptyPageWithCursor(target, page: 2),
                .cancelled(target),
            ]
            for error in errors {
                #expect(!error.description.contains("--"), "\(error)")
            }
        }
        #expect(DataLinkError.gone(.dataset(database: "WIKI", code: "AAPL"), nil).description.contains("WIKI/PRICES"))
    }
}
