import ColonnadeTestSupport
@testable import DataLink
import Foundation
import Synchronization
import Testing

@Suite struct LimitsAndCancellationTests {
    static let limit = 1 << 20
    /// 1 TiB, declared or streamed: at the server's pace (≤ 128 MB/s) that is hours of sending,
    /// so a body sent in full can only mean a client that never hung up. (A 1 GiB stream was once
    /// sent in full on a loaded CI machine: the client's transfer kept draining the socket while
    /// the task that counts and cancels waited for a thread.) Nothing near this is ever sent.
    static let oversized = 1 << 40
    static let streamedOversized = 1 << 40
    /// How long the server may take to see the hang-up: a bound on failure only, never waited
    /// out when the client behaves, and long enough for a client starved of CPU.
    static let hangUpTimeout = Duration.seconds(600)

    @Test func declaredOversizedBodyIsRefusedUpFront() async throws {
        try await LoopbackHTTPServer.run({ _ in
            .oversized(status: 200, headers: ["Content-Type": "application/json"], byteCount: Self.oversized, declaresLength: true)
        }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server, maximumResponseSize: Self.limit))
            let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
            guard case .responseTooLarge(_, limit: Self.limit, declaredLength: Self.oversized, received: nil)? = error else {
                Issue.record("expected responseTooLarge, got \(String(describing: error))")
                return
            }
            #expect(server.requests.count == 1, "too large is not retried")
            #expect(await server.waitUntilIdle(timeout: Self.hangUpTimeout), "the client hung up")
            #expect(server.bodyBytesSent(forRequest: 0) < Self.oversized, "the client stopped reading early")
        }
    }

    @Test func streamedOversizedBodyIsCutAtTheLimit() async throws {
        try await LoopbackHTTPServer.run({ _ in
            .oversized(status: 200, headers: ["Content-Type": "text/csv"], byteCount: Self.streamedOversized, declaresLength: false)
        }) { server in
            let client = DataLinkClient(configuration: testConfiguration(server, maximumResponseSize: Self.limit))
            let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL", format: .csv) }
            guard case .responseTooLarge(_, limit: Self.limit, declaredLength: nil, received: let received?)? = error else {
                Issue.record("expected responseTooLarge, got \(String(describing: error))")
                return
            }
            // Counted at receipt: reading stopped within one delivered piece of the limit.
            #expect(received > Self.limit && received <= Self.limit + TransferProcess.maximumFrame)
            #expect(server.requests.count == 1)
            #expect(await server.waitUntilIdle(timeout: Self.hangUpTimeout), "the client hung up")
            #expect(server.bodyBytesSent(forRequest: 0) < Self.streamedOversized, "the client stopped reading early")
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

    // The cancellation tests below wait for the server to *see* the requests (however long
    // the client's tasks take to get a thread under load), then time only the span from
    // `cancel()` to the result, on a dedicated thread so that span cannot include waiting
    // behind other suites' CPU-bound tests in the cooperative pool.

    @Test func cancellingWhileTheServerHangsReturnsPromptly() async throws {
        try await LoopbackHTTPServer.run({ _ in .hang }) { server in
            try await onDedicatedThread {
                let client = DataLinkClient(configuration: testConfiguration(server, timeout: .seconds(86_400)))
                let task = Task(executorPreference: DedicatedThreadExecutor.shared) {
                    try await client.datasetData(database: "WIKI", ticker: "AAPL")
                }
                #expect(await server.waitForRequests(1), "the request never reached the server")
                #expect(server.requests.count == 1)
                let cancelledAt = ContinuousClock.now
                task.cancel()
                let result = await task.result
                let elapsed = ContinuousClock.now - cancelledAt
                // Not a speed bound: the client would otherwise wait out a day-long timeout or backoff.
                #expect(elapsed < .seconds(3600), "cancellation took \(elapsed)")
                guard case .cancelled(.dataset(database: "WIKI", code: "AAPL"))? = failure(of: result) else {
                    Issue.record("expected cancelled, got \(result)")
                    return
                }
                #expect(await server.waitUntilIdle(), "the client hung up")
                #expect(server.requests.count == 1, "not retried")
            }
        }
    }

    @Test func cancellingDuringBackoffReturnsPromptly() async throws {
        try await LoopbackHTTPServer.run({ _ in .respond(status: 500, headers: [:], body: Data()) }) { server in
            try await onDedicatedThread {
                // The real sleep, plus a flag that says the client is now in its backoff.
                let backoffs = Mutex<[Duration]>([])
                var configuration = testConfiguration(server, maxAttempts: 5)
                configuration.retryPolicy = RetryPolicy(
                    maxAttempts: 5, baseDelay: .seconds(86_400), maxDelay: .seconds(86_400),
                    totalBudget: .seconds(10 * 86_400), jitter: 0)
                configuration.requestDeadline = .seconds(10 * 86_400)
                let sleptOut = Mutex(false)
                configuration.sleep = { delay in
                    backoffs.withLock { $0.append(delay) }
                    try await Task.sleep(for: delay)
                    sleptOut.withLock { $0 = true }
                }
                let client = DataLinkClient(configuration: configuration)
                let task = Task(executorPreference: DedicatedThreadExecutor.shared) {
                    try await client.datasetData(database: "WIKI", ticker: "AAPL")
                }
                #expect(await eventually { !backoffs.withLock { $0.isEmpty } }, "the client never started its backoff")
                let cancelledAt = ContinuousClock.now
                task.cancel()
                let result = await task.result
                let elapsed = ContinuousClock.now - cancelledAt
                // Not a speed bound: the client would otherwise wait out a day-long timeout or backoff.
                #expect(elapsed < .seconds(3600), "cancellation took \(elapsed)")
                guard case .cancelled? = failure(of: result) else {
                    Issue.record("expected cancelled, got \(result)")
                    return
                }
                #expect(backoffs.withLock { $0 } == [.seconds(86_400)])
                #expect(!sleptOut.withLock { $0 }, "the backoff was slept out, not cut short")
                #expect(server.requests.count == 1)
            }
        }
    }

    @Test func cancellingFetchManyStopsEveryRequest() async throws {
        try await LoopbackHTTPServer.run({ _ in .hang }) { server in
            try await onDedicatedThread {
                let client = DataLinkClient(configuration: testConfiguration(server, timeout: .seconds(86_400), maxConcurrentRequests: 3))
                let tickers = ["AAPL", "MSFT", "ZEN", "KO", "FB", "GOOG"]
                let task = Task(executorPreference: DedicatedThreadExecutor.shared) {
                    try await client.fetchMany(tickers) { ticker in try await client.datasetData(database: "WIKI", ticker: ticker) }
                }
                #expect(await server.waitForRequests(3), "3 requests never reached the server")
                let cancelledAt = ContinuousClock.now
                task.cancel()
                let result = await task.result
                let elapsed = ContinuousClock.now - cancelledAt
                // Not a speed bound: the client would otherwise wait out a day-long timeout or backoff.
                #expect(elapsed < .seconds(3600), "cancellation took \(elapsed)")
                guard case .cancelled(nil)? = failure(of: result) else {
                    Issue.record("expected cancelled, got \(result)")
                    return
                }
                #expect(await server.waitUntilIdle(), "every request in flight was hung up")
                #expect(server.requests.count == 3, "no new request starts after cancellation")
            }
        }
    }

    @Test(arguments: [nil, 1, 3] as [Int?])
    func fetchManyBoundsRequestsInFlight(_ limit: Int?) async throws {
        let expected = limit ?? 1  // one in flight per key by default
        try await LoopbackHTTPServer.run({ request in
            // The first `expected` answers wait until that many requests arrived, so when the
            // client may overlap them they do overlap, whatever the scheduling; every answer
            // then takes 0.1 s, long enough for an extra request to show if the bound leaked.
            .respondAfterRequests(
                count: request.sequenceNumber < expected ? expected : 0, delay: 0.1,
                status: 200, headers: ["Content-Type": "text/csv"],
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
            #expect(server.maxConcurrentRequests <= expected)
            #expect(server.requests.count == tickers.count)
            if expected > 1 { #expect(server.maxConcurrentRequests == expected, "requests did overlap") }
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
