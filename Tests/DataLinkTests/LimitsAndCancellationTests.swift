import ColonnadeTestSupport
@testable import DataLink
import Foundation
import Testing

@Suite struct LimitsAndCancellationTests {
    static let limit = 1 << 20
    /// 256 MiB: at the server's pace (≤ 128 MB/s) that is ≥ 2 s of sending, far longer than a
    /// client needs to hang up, so "stopped early" does not depend on scheduling luck.
    static let oversized = 256 << 20

    @Test func declaredOversizedBodyIsRefusedUpFront() async throws {
        try await LoopbackHTTPServer.run({ _ in
            .oversized(status: 200, headers: ["Content-Type": "application/json"], byteCount: Self.oversized, declaresLength: true)
        }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server, maximumResponseSize: Self.limit))
            let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
            guard case .responseTooLarge(_, limit: Self.limit, declaredLength: Self.oversized)? = error else {
                Issue.record("expected responseTooLarge, got \(String(describing: error))")
                return
            }
            #expect(server.requests.count == 1, "too large is not retried")
            #expect(await server.waitUntilIdle(), "the client hung up")
            #expect(server.bodyBytesSent(forRequest: 0) < Self.oversized, "the client stopped reading early")
        }
    }

    @Test func streamedOversizedBodyIsCutAtTheLimit() async throws {
        try await LoopbackHTTPServer.run({ _ in
            .oversized(status: 200, headers: ["Content-Type": "text/csv"], byteCount: Self.oversized, declaresLength: false)
        }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server, maximumResponseSize: Self.limit))
            let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL", format: .csv) }
            guard case .responseTooLarge(_, limit: Self.limit, declaredLength: nil)? = error else {
                Issue.record("expected responseTooLarge, got \(String(describing: error))")
                return
            }
            #expect(server.requests.count == 1)
            #expect(await server.waitUntilIdle(), "the client hung up")
            #expect(server.bodyBytesSent(forRequest: 0) < Self.oversized, "the client stopped reading early")
        }
    }

    @Test func bodyExactlyAtTheLimitIsAccepted() async throws {
        let body = Data(repeating: UInt8(ascii: "1"), count: 4096)
        try await LoopbackHTTPServer.run({ _ in .csv(body) }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server, maximumResponseSize: 4096))
            let response = try await client.datasetData(database: "WIKI", ticker: "AAPL", format: .csv)
            #expect(response.body.count == 4096)
        }
    }

    @Test func cancellingWhileTheServerHangsReturnsPromptly() async throws {
        try await LoopbackHTTPServer.run({ _ in .hang }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server, timeout: .seconds(30)))
            let task = Task { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
            let deadline = ContinuousClock.now + .seconds(5)
            while server.requests.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            #expect(server.requests.count == 1)
            let cancelledAt = ContinuousClock.now
            task.cancel()
            let result = await task.result
            let elapsed = ContinuousClock.now - cancelledAt
            #expect(elapsed < .seconds(2), "cancellation took \(elapsed)")
            guard case .cancelled(.dataset(database: "WIKI", code: "AAPL"))? = failure(of: result) else {
                Issue.record("expected cancelled, got \(result)")
                return
            }
        }
    }

    @Test func cancellingDuringBackoffReturnsPromptly() async throws {
        try await LoopbackHTTPServer.run({ _ in .respond(status: 500, headers: [:], body: Data()) }) { server in
            var configuration = testConfiguration(server, maxAttempts: 5)
            configuration.retryPolicy = RetryPolicy(maxAttempts: 5, baseDelay: .seconds(20), maxDelay: .seconds(20), jitter: 0)
            let client = DataLinkClient(configuration: configuration)
            let task = Task { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
            let deadline = ContinuousClock.now + .seconds(5)
            while server.requests.isEmpty, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            try await Task.sleep(for: .milliseconds(50))
            let cancelledAt = ContinuousClock.now
            task.cancel()
            let result = await task.result
            #expect(ContinuousClock.now - cancelledAt < .seconds(2))
            guard case .cancelled? = failure(of: result) else {
                Issue.record("expected cancelled, got \(result)")
                return
            }
            #expect(server.requests.count == 1)
        }
    }

    @Test func cancellingFetchManyStopsEveryRequest() async throws {
        try await LoopbackHTTPServer.run({ _ in .hang }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server, timeout: .seconds(30), maxConcurrentRequests: 3))
            let tickers = ["AAPL", "MSFT", "ZEN", "KO", "FB", "GOOG"]
            let task = Task {
                try await client.fetchMany(tickers) { ticker in try await client.datasetData(database: "WIKI", ticker: ticker) }
            }
            let deadline = ContinuousClock.now + .seconds(5)
            while server.requests.count < 3, ContinuousClock.now < deadline { try await Task.sleep(for: .milliseconds(5)) }
            let cancelledAt = ContinuousClock.now
            task.cancel()
            let result = await task.result
            #expect(ContinuousClock.now - cancelledAt < .seconds(2))
            guard case .cancelled(nil)? = failure(of: result) else {
                Issue.record("expected cancelled, got \(result)")
                return
            }
            #expect(server.requests.count == 3, "no new request starts after cancellation")
        }
    }

    @Test(arguments: [nil, 1, 3] as [Int?])
    func fetchManyBoundsRequestsInFlight(_ limit: Int?) async throws {
        try await LoopbackHTTPServer.run({ request in
            .respondAfter(seconds: 0.1, status: 200, headers: ["Content-Type": "text/csv"],
                          body: Data("Date,Close\n\(request.path)\n".utf8))
        }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server, key: fakeKey, maxConcurrentRequests: limit))
            let tickers = ["AAPL", "MSFT", "ZEN", "KO", "FB", "GOOG", "AMZN"]
            let results = try await client.fetchMany(tickers) { ticker in
                try await client.datasetData(database: "WIKI", ticker: ticker, format: .csv)
            }
            #expect(results.count == tickers.count)
            for (ticker, result) in zip(tickers, results) {
                let body = try String(decoding: result.get().body, as: UTF8.self)
                #expect(body.contains("/WIKI/\(ticker)/"), "results keep the order of the input")
            }
            let expected = limit ?? 1  // one in flight per key by default
            #expect(server.maxConcurrentRequests <= expected)
            #expect(server.requests.count == tickers.count)
            if expected > 1 { #expect(server.maxConcurrentRequests > 1, "requests did overlap") }
        }
    }

    @Test func fetchManyKeepsGoingAfterOneFailure() async throws {
        try await LoopbackHTTPServer.run({ request in
            request.path.contains("FDXX") ? .csv(Data("code,message\nQECx02,incorrect code\n".utf8), status: 404) : .csv("Date,Close\n")
        }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server, maxConcurrentRequests: 2))
            let results = try await client.fetchMany(["AAPL", "FDXX", "MSFT"]) { ticker in
                try await client.datasetData(database: "WIKI", ticker: ticker, format: .csv)
            }
            #expect((try? results[0].get()) != nil)
            #expect((try? results[2].get()) != nil)
            guard case .failure(let error as DataLinkError) = results[1], case .notFound = error else {
                Issue.record("expected notFound for FDXX, got \(results[1])")
                return
            }
            #expect(error.description.contains("unknown dataset WIKI/FDXX"))
        }
    }
}
