import Colonnade
@testable import ColonnadeCLI
import ColonnadeTestSupport
import Foundation
import Testing

/// `colonnade fetch` when the server says no: one clear line per failed ticker, the right hint,
/// retries where they help, and a snapshot that is byte-for-byte what it was.
///
/// The CLI uses the client's default retry policy (first backoff ≤ 0.5 s, halved at random), so
/// "fail once, then succeed" costs well under a second; failures that would be retried for
/// seconds are not scripted here (the DataLink tests cover the policy with injected sleeps).
@Suite struct FetchFailureTests {
    /// Runs `fetch AAPL` (plus `extra`) against a server answering with `action` (for every
    /// request) over a pre-made snapshot; expects exit 1 and an untouched snapshot.
    func expectFailure(
        _ action: LoopbackHTTPAction, _ extra: [String] = [], environment: [String: String] = [:], tuning: TestTuning = TestTuning(),
        sourceLocation: SourceLocation = #_sourceLocation
    ) async throws -> (Invocation, [LoopbackHTTPRequest]) {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        return try await LoopbackHTTPServer.run({ _ in action }) { server in
            let run = await runOffPool(
                fetchArguments(server, scratch, ["AAPL"] + extra), in: scratch,
                environment: scratch.environment(environment), tuning: tuning, sourceLocation: sourceLocation)
            #expect(run.status == 1, "\(run.standardError)", sourceLocation: sourceLocation)
            #expect(run.standardOutput.isEmpty, sourceLocation: sourceLocation)
            #expect(run.errorLines.count == 1, "\(run.standardError)", sourceLocation: sourceLocation)
            #expect(run.errorLines.first?.hasPrefix("error: AAPL: ") == true, sourceLocation: sourceLocation)
            #expect(
                run.standardError.hasSuffix(
                    "1 of 1 tickers failed; nothing was saved (\(scratch.snapshot) is unchanged). "
                        + "--keep-going saves the tickers that succeeded.\n"), sourceLocation: sourceLocation)
            #expect(scratch.bytes("quotes.snapshot") == before, "snapshot changed", sourceLocation: sourceLocation)
            return (run, server.requests)
        }
    }

    func hint(_ run: Invocation) -> String? {
        run.standardError.split(separator: "\n").first { $0.hasPrefix("hint: ") }.map(String.init)
    }

    @Test func unknownTickerIs404WithOneClearLine() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        try await LoopbackHTTPServer.run(QuoteBodies().serve) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["FDXX"]), in: scratch)
            #expect(run.status == 1)
            #expect(
                run.errorLines == [
                    "error: FDXX: unknown dataset WIKI/FDXX (HTTP 404, QECx02: You have submitted an incorrect "
                        + "Quandl code. Please check your Quandl codes and try again.)"
                ])
            #expect(hint(run) == "hint: check the ticker and --database (a ticker like BRK.B is sent as BRK_B)")
            #expect(server.requests.count == 1, "404 is not retried")
            #expect(scratch.bytes("quotes.snapshot") == before)
        }
    }

    @Test func goneSuggestsTheTablesAPI() async throws {
        let (run, requests) = try await expectFailure(.json(quandlErrorBody("QECx06", "This dataset is deprecated."), status: 410))
        #expect(run.errorLines.first?.contains("HTTP 410") == true)
        #expect(hint(run)?.contains("--table WIKI/PRICES") == true)
        #expect(requests.count == 1)
    }

    @Test func badRequestIs400() async throws {
        let (run, requests) = try await expectFailure(
            .json(quandlErrorBody("QESx09", "Your request contains invalid query parameter syntax."), status: 400))
        #expect(
            run.errorLines.first
                == "error: AAPL: dataset WIKI/AAPL: request rejected (HTTP 400, QESx09: Your request contains invalid query parameter syntax.)"
        )
        #expect(requests.count == 1)
    }

    @Test func unprocessableIs422() async throws {
        let (run, requests) = try await expectFailure(
            .json(quandlErrorBody("QESx04", "You have submitted incorrect query parameters."), status: 422))
        #expect(run.errorLines.first?.contains("HTTP 422, QESx04") == true)
        #expect(requests.count == 1)
    }

    @Test func forbiddenSaysWhetherAKeyWasSent() async throws {
        let body = quandlErrorBody("QEPx05", "You have attempted to view a premium database in anonymous user mode.")
        let (anonymous, _) = try await expectFailure(.json(body, status: 403))
        #expect(anonymous.errorLines.first?.contains("HTTP 403, QEPx05") == true)
        #expect(anonymous.errorLines.first?.contains("no API key was sent") == true)
        #expect(hint(anonymous)?.hasPrefix("hint: no API key was sent") == true)

        let (withKey, requests) = try await expectFailure(.json(body, status: 403), environment: ["NASDAQ_DATA_LINK_API_KEY": fetchTestKey])
        #expect(withKey.errorLines.first?.contains("an API key was sent (X-Api-Token) but not accepted") == true)
        #expect(hint(withKey) == "hint: check the key in $NASDAQ_DATA_LINK_API_KEY or ~/.nasdaq/data_link_apikey")
        #expect(requests.first?.header("X-Api-Token") == fetchTestKey)
    }

    /// The server echoes an unknown key back (QEAx01); neither the message nor the --debug
    /// log may show it (the runner checks every captured stream for the key).
    @Test func echoedKeyIsRedactedEvenWithDebug() async throws {
        let body = quandlErrorBody("QEAx01", "We could not recognize your API key: '\(fetchTestKey)'. Please check your API key.")
        let (run, _) = try await expectFailure(
            .json(body, status: 400), ["--debug"],
            environment: ["NASDAQ_DATA_LINK_API_KEY": fetchTestKey])
        #expect(
            run.errorLines.first?.contains("not authorized (HTTP 400, QEAx01: We could not recognize your API key: '<redacted>'") == true)
        #expect(run.standardError.contains("debug: DataLink response for dataset WIKI/AAPL: HTTP 400"))
    }

    /// A `Retry-After` beyond the retry budget: give up at once rather than wait an hour.
    @Test func rateLimitedWithLongRetryAfterGivesUpAtOnce() async throws {
        let clock = ContinuousClock()
        let start = clock.now
        let (run, requests) = try await expectFailure(
            .json(
                quandlErrorBody("QELx01", "You have exceeded the anonymous user limit of 50 calls per day."), status: 429,
                headers: ["Retry-After": "3600"]))
        // Below the hour asked for (it gives up at once: one request, counted below); generous
        // because a shared machine can starve the test process (1,385 s once, under a load of 25).
        #expect(clock.now - start < .seconds(3000))
        #expect(requests.count == 1)
        #expect(run.errorLines.first?.contains("rate limited (HTTP 429, QELx01") == true)
        #expect(run.errorLines.first?.contains("the server asks to retry after 3600 s") == true)
        #expect(hint(run)?.contains("--update") == true)
    }

    /// Fails with `first` on each ticker's first attempt, then serves the quotes.
    func failOnceThenSucceed(_ first: LoopbackHTTPAction) async throws -> (Invocation, [LoopbackHTTPRequest], Duration) {
        let scratch = try Scratch()
        let bodies = QuoteBodies()
        let counter = AttemptCounter()
        let clock = ContinuousClock()
        return try await LoopbackHTTPServer.run({ request in
            counter.attempt(request) == 1 ? first : bodies.serve(request)
        }) { server in
            let start = clock.now
            let run = await runOffPool(fetchArguments(server, scratch, ["AAPL", "MSFT", "--concurrency", "2"]), in: scratch)
            let elapsed = clock.now - start
            #expect(run.status == 0, "\(run.standardError)")
            #expect(run.errorLines.isEmpty)
            let saved = try QuoteTable.load(from: scratch.snapshot)
            #expect(saved.ticker("AAPL")?.rowCount == bodies.rowCount("AAPL"))
            #expect(saved.ticker("MSFT")?.rowCount == bodies.rowCount("MSFT"))
            #expect(server.requests.count == 4)
            return (run, server.requests, elapsed)
        }
    }

    @Test func rateLimitedWithoutRetryAfterIsRetried() async throws {
        _ = try await failOnceThenSucceed(.json(quandlErrorBody("QELx04", "Too many requests in 10 minutes."), status: 429))
    }

    @Test func rateLimitedWithRetryAfterWaitsAsAsked() async throws {
        let (_, _, elapsed) = try await failOnceThenSucceed(
            .json(quandlErrorBody("QELx04", "slow down"), status: 429, headers: ["Retry-After": "1"]))
        #expect(elapsed >= .milliseconds(950), "Retry-After: 1 is a lower bound on the wait")
    }

    @Test func acceptedThenOK() async throws {
        _ = try await failOnceThenSucceed(.json(quandlErrorBody("QEAx07", "Please try again in 30 seconds."), status: 202))
    }

    @Test func serverErrorThenOK() async throws {
        _ = try await failOnceThenSucceed(.json(quandlErrorBody("QEMx01", "Something went wrong."), status: 500))
    }

    @Test func htmlInsteadOfJSON() async throws {
        let page = "<html><head><title>Request unsuccessful</title></head><body>Incapsula incident</body></html>"
        let (labelled, _) = try await expectFailure(.respond(status: 200, headers: ["Content-Type": "text/html"], body: Data(page.utf8)))
        #expect(labelled.errorLines.first?.contains("unexpected response (HTTP 200, content type text/html)") == true)
        #expect(labelled.errorLines.first?.contains("<html><head><title>Request unsuccessful") == true)

        let (mislabelled, _) = try await expectFailure(.json(page))
        #expect(mislabelled.errorLines.first?.contains("expected a JSON object") == true)

        let (errorPage, requests) = try await expectFailure(
            .respond(status: 400, headers: ["Content-Type": "text/html"], body: Data(page.utf8)))
        #expect(errorPage.errorLines.first?.contains("request rejected (HTTP 400)") == true)
        #expect(requests.count == 1)
    }

    @Test func jsonThatIsNotQuotes() async throws {
        let (run, _) = try await expectFailure(.json(#"{"dataset_data":{"column_names":["Date","Close"],"data":[["2014-13-45",1.0]]}}"#))
        #expect(run.errorLines.first?.contains("WIKI/AAPL") == true)
    }

    /// `TestTuning.maximumResponseBytes` lowers the client's response limit (512 MiB by
    /// default) so the test need not send half a gigabyte.
    @Test(arguments: [true, false])
    func oversizedBodyIsRefused(declaresLength: Bool) async throws {
        let (run, _) = try await expectFailure(
            .oversized(status: 200, headers: ["Content-Type": "application/json"], byteCount: 4 << 20, declaresLength: declaresLength),
            tuning: TestTuning(maximumResponseBytes: 1 << 20))
        #expect(run.errorLines.first?.contains("response too large") == true)
        #expect(run.errorLines.first?.contains("limit 1048576 bytes") == true)
    }

    /// A table request fails for all its tickers at once: one error line, no per-ticker list.
    @Test func tableErrorsLeaveTheSnapshotAlone() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        try await LoopbackHTTPServer.run({ _ in
            .json(quandlErrorBody("QECx02", "You have submitted an incorrect Quandl code."), status: 404)
        }) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["--table", "WIKI/PRICEZ", "AAPL", "MSFT"]), in: scratch)
            #expect(run.status == 1)
            #expect(run.standardOutput.isEmpty)
            #expect(
                run.errorLines == [
                    "error: unknown table WIKI/PRICEZ (tickers AAPL, MSFT) (HTTP 404, QECx02: You have submitted an incorrect Quandl code.)"
                ])
            #expect(server.requests.map(\.path) == ["/api/v3/datatables/WIKI/PRICEZ.json"])
            #expect(scratch.bytes("quotes.snapshot") == before)
        }
    }

    /// A failure on the second page throws away the first.
    @Test func tableFailureOnALaterPageSavesNothing() async throws {
        let scratch = try Scratch()
        let before = try await makeSnapshot(in: scratch)
        try await LoopbackHTTPServer.run({ request in
            request.query("qopts.cursor_id") == nil
                ? .json(datatablePage([("AAPL", "2014-01-02", 79.38, 79.02)], next: "c-2"))
                : .json(quandlErrorBody("QESx06", "Invalid cursor."), status: 400)
        }) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["--table", "WIKI/PRICES", "AAPL", "--keep-going"]), in: scratch)
            #expect(run.status == 1)
            #expect(run.errorLines.count == 1)
            #expect(run.errorLines.first?.contains("HTTP 400, QESx06") == true)
            #expect(server.requests.count == 2)
            #expect(scratch.bytes("quotes.snapshot") == before)
        }
    }

    @Test func keepGoingSavesTheSuccessesAndListsTheFailures() async throws {
        let scratch = try Scratch()
        try await makeSnapshot(in: scratch)
        let bodies = QuoteBodies()
        try await LoopbackHTTPServer.run({ request in
            request.path.contains("/GOOG/") ? .json(quandlErrorBody("QEMx01", "x"), status: 410) : bodies.serve(request)
        }) { server in
            let run = await runOffPool(fetchArguments(server, scratch, ["AAPL", "FDXX", "GOOG", "FDX", "--keep-going"]), in: scratch)
            #expect(run.status == 1)
            #expect(run.errorLines.count == 2)
            #expect(run.errorLines.contains { $0.hasPrefix("error: FDXX: unknown dataset WIKI/FDXX (HTTP 404") })
            #expect(run.errorLines.contains { $0.hasPrefix("error: GOOG: dataset WIKI/GOOG is gone (HTTP 410") })
            #expect(run.standardError.hasSuffix("2 of 4 tickers failed: FDXX, GOOG\n"))
            #expect(run.standardOutput.contains("fetched \(bodies.rowCount("AAPL") + bodies.rowCount("FDX")) rows for 2 tickers"))
            let saved = try QuoteTable.load(from: scratch.snapshot)
            #expect(saved.tickers.map(\.symbol) == ["AAPL", "MSFT", "AMZN", "FDX"])
            #expect(saved.ticker("MSFT")?.rowCount == 50, "untouched")
            #expect(saved.ticker("FDX")?.rowCount == bodies.rowCount("FDX"))
        }
    }

    @Test func badBaseURLIsAUsageError() async throws {
        let scratch = try Scratch()
        let run = await runOffPool(["fetch", "AAPL", "--base-url", "ftp://example.com", "--snapshot", scratch.snapshot], in: scratch)
        #expect(run.status == 2)
        #expect(run.errorLines.first?.contains("--base-url") == true)
        #expect(scratch.bytes("quotes.snapshot") == nil)
    }
}
