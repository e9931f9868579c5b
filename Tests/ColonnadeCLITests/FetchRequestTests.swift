import Colonnade
import DataLinkFormat
@testable import ColonnadeCLI
import ColonnadeTestSupport
import Foundation
import Testing

/// `colonnade fetch` against the loopback server: the real URLSession client, the requests the
/// server saw, and what ended up in the snapshot.
@Suite struct FetchRequestTests {
    @Test func datasetsAsJSONAreRequestedOnePerTickerAndSaved() async throws {
        let scratch = try Scratch()
        let bodies = QuoteBodies()
        try await LoopbackHTTPServer.run(bodies.serve) { server in
            let run = await runOffPool(
                fetchArguments(server, scratch, ["AAPL", "MSFT", "--from", "2000-01-03", "--to", "2000-12-29"]),
                in: scratch)
            #expect(run.status == 0, "\(run.standardError)")
            #expect(run.standardError == FetchCommand.wikiNote + "\n", "WIKI is the default database: its note, nothing else")
            #expect(
                run.standardOutput.contains(
                    "fetched \(bodies.rowCount("AAPL") + bodies.rowCount("MSFT")) rows for 2 tickers into \(scratch.snapshot)"))

            let seen = server.requests.sorted { $0.path < $1.path }
            #expect(seen.map(\.path) == ["/api/v3/datasets/WIKI/AAPL/data.json", "/api/v3/datasets/WIKI/MSFT/data.json"])
            for request in seen {
                #expect(request.method == "GET")
                #expect(request.queryItems.map(\.name) == ["start_date", "end_date", "order"])
                #expect(request.queryDictionary == ["start_date": "2000-01-03", "end_date": "2000-12-29", "order": "asc"])
                #expect(request.header("X-Api-Token") == nil, "no key configured")
                #expect(request.header("Accept")?.hasPrefix("application/json") == true)
                #expect(request.header("User-Agent")?.hasPrefix("colonnade/") == true)
            }

            let saved = try QuoteTable.load(from: scratch.snapshot)
            #expect(saved.tickers.map(\.symbol).sorted() == ["AAPL", "MSFT"])
            for symbol in ["AAPL", "MSFT"] {
                let stored = try #require(saved.ticker(symbol))
                let generated = try #require(bodies.table.ticker(symbol))
                #expect(stored.rowCount == generated.rowCount)
                #expect(saved.dates[stored.firstRow] == bodies.table.dates[generated.firstRow])
                #expect(saved.dates[stored.rows.upperBound - 1] == bodies.table.dates[generated.rows.upperBound - 1])
            }
            #expect(saved.schema.map(\.name) == QuoteGenerator.columnNames)
        }
    }

    @Test func datasetsAsCSV() async throws {
        let scratch = try Scratch()
        let bodies = QuoteBodies()
        try await LoopbackHTTPServer.run(bodies.serve) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["FDX", "--format", "csv", "--quiet"]), in: scratch)
            #expect(run.status == 0, "\(run.standardError)")
            #expect(run.standardOutput.isEmpty, "--quiet")
            #expect(server.requests.map(\.target) == ["/api/v3/datasets/WIKI/FDX/data.csv?order=asc"])
            #expect(server.requests.first?.header("Accept")?.contains("csv") == true)
            let saved = try QuoteTable.load(from: scratch.snapshot)
            #expect(saved.ticker("FDX")?.rowCount == bodies.rowCount("FDX"))
            #expect(saved.schema.map(\.name) == QuoteGenerator.columnNames)
        }
    }

    @Test func otherDatabaseAndBRKStyleTickers() async throws {
        let scratch = try Scratch()
        let bodies = QuoteBodies(tickers: 95)  // includes BRK.A (index 89)
        try await LoopbackHTTPServer.run({ request in
            request.path.hasPrefix("/api/v3/datasets/EOD/") ? bodies.serve(request) : notFound
        }) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["BRK.A", "--database", "EOD"]), in: scratch)
            #expect(run.status == 0, "\(run.standardError)")
            #expect(server.requests.map(\.path) == ["/api/v3/datasets/EOD/BRK_A/data.json"])
            let saved = try QuoteTable.load(from: scratch.snapshot)
            #expect(saved.tickers.map(\.symbol) == ["BRK.A"])
        }
    }

    /// Where the key comes from, and whether the server then sees `X-Api-Token`.
    enum KeySource: String, CaseIterable, Sendable {
        case none, environment, keyFileOption, homeKeyFile, environmentWithDebug
    }

    @Test(arguments: KeySource.allCases)
    func keyIsSentInTheHeaderWhenAndOnlyWhenConfigured(source: KeySource) async throws {
        let scratch = try Scratch()
        let bodies = QuoteBodies()
        var environment = scratch.environment()
        var extra: [String] = []
        switch source {
        case .none:
            break
        case .environment:
            environment["NASDAQ_DATA_LINK_API_KEY"] = fetchTestKey
        case .environmentWithDebug:
            environment["NASDAQ_DATA_LINK_API_KEY"] = fetchTestKey
            extra = ["--debug"]
        case .keyFileOption:
            try scratch.write("\n  \(fetchTestKey)  \nsecond line\n", to: "keys/k.txt")
            extra = ["--api-key-file", "keys/k.txt"]  // relative to the working directory
        case .homeKeyFile:
            try scratch.write(fetchTestKey + "\n", to: ".nasdaq/data_link_apikey")
        }
        try await LoopbackHTTPServer.run(bodies.serve) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["AAPL", "MSFT"] + extra), in: scratch, environment: environment)
            #expect(run.status == 0, "\(run.standardError)")
            #expect(server.requests.count == 2)
            for request in server.requests {
                #expect(request.header("X-Api-Token") == (source == .none ? nil : fetchTestKey))
                #expect(!request.target.contains(fetchTestKey), "the key never travels in the URL")
                #expect(!request.queryItems.contains { $0.name.lowercased().contains("api_key") })
            }
            if source == .environmentWithDebug {
                #expect(run.standardError.contains("debug: DataLink request for dataset WIKI/AAPL"))
                #expect(run.standardError.contains("X-Api-Token: <redacted>"))
                #expect(run.standardError.contains("HTTP 200"))
            }
        }
    }

    @Test func anEmptyKeyFileIsAnErrorAndNothingIsSent() async throws {
        let scratch = try Scratch()
        try scratch.write("\n   \n", to: "empty-key")
        try await LoopbackHTTPServer.run({ _ in notFound }) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["AAPL", "--api-key-file", "empty-key"]), in: scratch)
            #expect(run.status == 1)
            #expect(run.errorLines == ["error: API key file \(scratch.file("empty-key")) has no usable key on its first non-empty line"])
            #expect(server.requests.isEmpty)
            #expect(scratch.bytes("quotes.snapshot") == nil)
        }
    }

    @Test func hostileTickersArePercentEncodedOrRefused() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        try await LoopbackHTTPServer.run({ _ in notFound }) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["FDX&api_key=x", "../../x", "A B?c=d#e"]), in: scratch)
            #expect(run.status == 1)
            // `../../x` contains '/', so it is refused before anything is sent; the others are
            // sent as single, encoded path segments.
            let paths = server.requests.map(\.path).sorted()
            #expect(
                paths == [
                    "/api/v3/datasets/WIKI/A%20B%3FC%3DD%23E/data.json",
                    "/api/v3/datasets/WIKI/FDX%26API_KEY%3DX/data.json",
                ])
            for request in server.requests {
                #expect(request.queryItems.map(\.name) == ["order"])
            }
            #expect(run.errorLines.count == 3)
            #expect(run.errorLines.contains { $0.hasPrefix("error: ../../x: invalid request:") && $0.contains("contains '/'") })
            #expect(run.standardError.contains("3 of 3 tickers failed; nothing was saved"))
            #expect(scratch.bytes("quotes.snapshot") == before)
        }
    }

    @Test func concurrencyKeepsAtMostNInFlight() async throws {
        let scratch = try Scratch()
        let bodies = QuoteBodies()
        let symbols = Array(bodies.symbols.prefix(6))
        // The first three answers wait until three requests are in, which proves three were in
        // flight at once; the server's own count then shows no fourth joined them.
        try await LoopbackHTTPServer.run({ request in
            guard let symbol = bodies.symbol(forPath: request.path) else { return notFound }
            let body = bodies.datasetJSON(symbol)
            let headers = ["Content-Type": "application/json"]
            return request.sequenceNumber < 3
                ? .respondAfterRequests(count: 3, delay: 0.05, status: 200, headers: headers, body: body)
                : .respondAfter(seconds: 0.02, status: 200, headers: headers, body: body)
        }) { server in
            let run = await runOffPool(fetchArguments(server, scratch, symbols + ["--concurrency", "3"]), in: scratch)
            #expect(run.status == 0, "\(run.standardError)")
            #expect(server.requests.count == 6)
            #expect(server.maxConcurrentRequests == 3)
            let saved = try QuoteTable.load(from: scratch.snapshot)
            #expect(saved.tickers.count == 6)
        }
    }

    @Test func defaultConcurrencyIsOne() async throws {
        let scratch = try Scratch()
        let bodies = QuoteBodies()
        try await LoopbackHTTPServer.run({ request in
            guard let symbol = bodies.symbol(forPath: request.path) else { return notFound }
            return .respondAfter(
                seconds: 0.05, status: 200, headers: ["Content-Type": "application/json"], body: bodies.datasetJSON(symbol))
        }) { server in
            let run = await runOffPool(fetchArguments(server, scratch, Array(bodies.symbols.prefix(3))), in: scratch)
            #expect(run.status == 0, "\(run.standardError)")
            #expect(server.requests.count == 3)
            #expect(server.maxConcurrentRequests == 1)
        }
    }

    /// Three pages: no cursor, then `c-2`, then `c+3/=` (reserved characters), then null.
    static func tablePages(_ request: LoopbackHTTPRequest) -> LoopbackHTTPAction {
        guard request.path == "/api/v3/datatables/WIKI/PRICES.json" else { return notFound }
        switch request.query("qopts.cursor_id") {
        case nil:
            return .json(datatablePage([("AAPL", "2014-01-02", 79.38, 79.02), ("AAPL", "2014-01-03", 78.98, 77.28)], next: "c-2"))
        case "c-2"?:
            return .json(datatablePage([("MSFT", "2014-01-02", 37.35, 37.16)], next: "c+3/="))
        case "c+3/="?:
            return .json(datatablePage([("BRK_A", "2014-01-02", 169_700, 170_000), ("MSFT", "2014-01-03", 37.2, 36.91)], next: nil))
        default:
            return .json(quandlErrorBody("QESx06", "Invalid cursor id"), status: 400)
        }
    }

    @Test func tableFollowsCursorsAcrossThreePages() async throws {
        let scratch = try Scratch()
        try await LoopbackHTTPServer.run(Self.tablePages) { server in
            let run = await runOffPool(
                fetchArguments(
                    server, scratch, ["--table", "WIKI/PRICES", "AAPL", "MSFT", "BRK.A", "--from", "2014-01-01", "--to", "2014-12-31"]),
                in: scratch, environment: scratch.environment(["NASDAQ_DATA_LINK_API_KEY": fetchTestKey]))
            #expect(run.status == 0, "\(run.standardError)")
            #expect(run.standardOutput.contains("fetched 5 rows for 3 tickers"))

            let seen = server.requests
            #expect(seen.map { $0.query("qopts.cursor_id") } == [nil, "c-2", "c+3/="])
            try #require(seen.count == 3)
            #expect(seen[2].rawQuery.contains("qopts.cursor_id=c%2B3%2F%3D"))
            for request in seen {
                #expect(request.path == "/api/v3/datatables/WIKI/PRICES.json")
                #expect(request.query("ticker") == "AAPL,MSFT,BRK_A")
                #expect(request.query("date.gte") == "2014-01-01")
                #expect(request.query("date.lte") == "2014-12-31")
                #expect(request.header("X-Api-Token") == fetchTestKey)
            }
            let saved = try QuoteTable.load(from: scratch.snapshot)
            #expect(saved.tickers.map(\.symbol).sorted() == ["AAPL", "BRK.A", "MSFT"])
            #expect(saved.ticker("AAPL")?.rowCount == 2)
            #expect(saved.ticker("MSFT")?.rowCount == 2)
            #expect(saved.schema.map(\.name) == ["open", "close"])
        }
    }

    /// The Tables API answers unknown tickers with no rows; the command names them.
    @Test func tableTickerWithoutRowsIsAFailure() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        try await LoopbackHTTPServer.run(Self.tablePages) { server in
            let plain = await runOffPool(fetchArguments(server, scratch, ["--table", "WIKI/PRICES", "AAPL", "ZZZZ"]), in: scratch)
            #expect(plain.status == 1)
            #expect(plain.errorLines == ["error: ZZZZ: WIKI/PRICES returned no rows for ZZZZ (unknown ticker, or no data in the range)"])
            #expect(scratch.bytes("quotes.snapshot") == before)

            let keepGoing = await runOffPool(
                fetchArguments(server, scratch, ["--table", "WIKI/PRICES", "AAPL", "ZZZZ", "--keep-going"]),
                in: scratch)
            #expect(keepGoing.status == 1)
            #expect(keepGoing.standardError.hasSuffix("1 of 2 tickers failed: ZZZZ\n"))
            let saved = try QuoteTable.load(from: scratch.snapshot)
            #expect(saved.tickers.map(\.symbol) == ["AAPL", "MSFT", "AMZN", "BRK.A"], "the whole page is kept")
            #expect(saved.ticker("AAPL")?.rowCount == 52, "50 generated + 2 fetched days")
        }
    }

    /// Tickers typed in lower case or with the API's `_` are stored, matched and updated under
    /// the symbol the decoder uses (`BRK.A`), in both sources.
    @Test func tickerSpellingsAreNormalized() async throws {
        let scratch = try Scratch()
        let bodies = QuoteBodies(tickers: 95)
        try await LoopbackHTTPServer.run({ request in
            request.path.hasPrefix("/api/v3/datatables/") ? Self.tablePages(request) : bodies.serve(request)
        }) { server in
            let table = await runOffPool(fetchArguments(server, scratch, ["--table", "WIKI/PRICES", "aapl", "msft", "brk_a"]), in: scratch)
            #expect(table.status == 0, "\(table.standardError)")
            #expect(server.requests.first?.query("ticker") == "AAPL,MSFT,BRK_A")

            let dataset = await runOffPool(fetchArguments(server, scratch, ["fdx", "brk_a"]), in: scratch)
            #expect(dataset.status == 0, "\(dataset.standardError)")
            let saved = try QuoteTable.load(from: scratch.snapshot)
            #expect(saved.tickers.map(\.symbol) == ["AAPL", "MSFT", "BRK.A", "FDX"])
        }
    }

    /// Only the new days and one overlapping day (the newest stored one, to compare the vendor's
    /// adjusted values with the stored ones: docs/ADJUSTMENTS.md, "Updates").
    @Test func updateAsksFromTheNewestStoredDayOn() async throws {
        let scratch = try Scratch()
        try await makeSnapshot(in: scratch)  // AAPL, MSFT, AMZN × 50 days from 2000-01-03
        let stored = try QuoteTable.load(from: scratch.snapshot)
        let bodies = QuoteBodies(tickers: 6, days: 60, seed: 1)
        try await LoopbackHTTPServer.run(bodies.serve) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["AAPL", "MSFT", "AMZN", "FDX", "--update"]), in: scratch)
            #expect(run.status == 0, "\(run.standardError)")
            var starts: [String: String] = [:]
            for request in server.requests {
                starts[bodies.symbol(forPath: request.path) ?? request.path] = request.query("start_date") ?? "none"
            }
            for symbol in ["AAPL", "MSFT", "AMZN"] {
                let entry = try #require(stored.ticker(symbol))
                #expect(starts[symbol] == Day(daysSinceEpoch: stored.dates[entry.rows.upperBound - 1]).description, "\(symbol)")
            }
            #expect(starts["FDX"] == "none", "a ticker not stored yet is fetched whole")
            let saved = try QuoteTable.load(from: scratch.snapshot)
            #expect(saved.ticker("AAPL")?.rowCount == 60)
            #expect(saved.ticker("FDX")?.rowCount == 60)
        }
    }

    @Test func updateOfTheTableStartsOnTheOldestNewestDay() async throws {
        let scratch = try Scratch()
        try await makeSnapshot(in: scratch)
        let stored = try QuoteTable.load(from: scratch.snapshot)
        let last = try #require(stored.ticker("AAPL")).rows.upperBound - 1
        try await LoopbackHTTPServer.run(Self.tablePages) { server in
            let run = await runOffPool(
                fetchArguments(server, scratch, ["--table", "WIKI/PRICES", "AAPL", "MSFT", "--update"]), in: scratch)
            #expect(run.status == 0, "\(run.standardError)")
            #expect(server.requests.first?.query("date.gte") == Day(daysSinceEpoch: stored.dates[last]).description)
        }
    }

    /// `--update --to D` when the snapshot already reaches D: nothing to ask for, not an error.
    @Test func updateWhenAlreadyUpToDateSendsNothing() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        let stored = try QuoteTable.load(from: scratch.snapshot)
        let last = Day(daysSinceEpoch: stored.dates[try #require(stored.ticker("AAPL")).rows.upperBound - 1]).description
        try await LoopbackHTTPServer.run(QuoteBodies().serve) { server in
            for extra in [[String](), ["--table", "WIKI/PRICES"]] {
                let run = await runOffPool(
                    fetchArguments(server, scratch, ["AAPL", "MSFT", "--update", "--to", last] + extra), in: scratch)
                #expect(run.status == 0, "\(extra): \(run.standardError)")
                #expect(run.errorLines.isEmpty)
            }
            #expect(server.requests.isEmpty)
            #expect(scratch.bytes("quotes.snapshot") == before)
        }
    }
}
