import ColonnadeTestSupport
import Dispatch
@testable import DataLink
import DataLinkURLSession
import Foundation
import Testing

/// The client's pauses (retry backoff, export polling) wait on a Dispatch timer, like the
/// transfer timeouts, so a saturated concurrency pool cannot stretch them. No assertion here
/// depends on how long anything takes: the generous limits only turn a hang into a failure.
@Suite struct DispatchSleepTests {
    /// The timer fires while every thread of the cooperative pool is blocked — and those threads
    /// stay blocked *until* it fires, so a wake-up that needed the pool would never come.
    @Test(.timeLimit(.minutes(2)))
    func theTimerFiresWhileThePoolIsBlocked() async throws {
        let started = DispatchSemaphore(value: 0), woke = DispatchSemaphore(value: 0)
        let sleeper = Task.detached {
            // From here to the timer being armed the task does not suspend, so once `started` is
            // signalled the thread stays with it until the timer is set.
            started.signal()
            try await DispatchSleep.sleep(for: .milliseconds(100), onWake: { woke.signal() })
        }
        // The blocking waits run on a thread of their own: never on the pool (which they block)
        // nor on the executor other tests share.
        let released: Bool = await withCheckedContinuation { continuation in
            Thread {
                _ = Self.wait(started)
                let gate = PoolBlocker()
                gate.blockThePool()
                let fired = Self.wait(woke, seconds: 60)
                gate.release()
                continuation.resume(returning: fired)
            }.start()
        }
        #expect(released, "the timer fired while the pool was blocked")
        try await sleeper.value
    }

    /// Cancelling a sleeping task ends the sleep at once, not when the time is up.
    @Test(.timeLimit(.minutes(10)))
    func cancellationEndsASleepAtOnce() async {
        let sleeper = Task { try await DispatchSleep.sleep(for: .seconds(3600)) }
        sleeper.cancel()
        await #expect(throws: CancellationError.self) { try await sleeper.value }
        // Cancelled before it starts: the same.
        let early = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            try await DispatchSleep.sleep(for: .seconds(3600))
        }
        await #expect(throws: CancellationError.self) { try await early.value }
    }

    @Test(.timeLimit(.minutes(10)))
    func theDefaultSleepReturnsAndIsCancellable() async throws {
        let sleep = DataLinkConfiguration(transport: .urlSession).sleep
        try await sleep(.milliseconds(1))
        try await sleep(.zero)
        try await sleep(.milliseconds(-5))
        let long = Task { try await sleep(.seconds(3600)) }
        long.cancel()
        await #expect(throws: CancellationError.self) { try await long.value }
    }

    /// The retry after a 503 goes out while every thread of the pool is blocked: with the
    /// default backoff, nothing on the retry path needs the pool when the request runs on an
    /// executor of its own. (Measured: `Task.sleep` passes this too, since its wake-up is sent
    /// to the task's preferred executor; the test guards the path, `theTimerFiresWhileThePoolIsBlocked`
    /// the timer itself.)
    @Test(.timeLimit(.minutes(2)))
    func aRetryGoesOutWhileThePoolIsBlocked() async throws {
        try await onDedicatedThread {
            try await LoopbackHTTPServer.run({ request in
                request.sequenceNumber == 0
                    ? .respond(status: 503, headers: ["Content-Type": "application/json"], body: Data("{}".utf8))
                    : .json(#"{"dataset_data":{"column_names":["Date","Close"],"data":[["2017-01-03",1.5]]}}"#)
            }) { server in
                var configuration = testConfiguration(server, key: fakeKey, maxAttempts: 2)
                configuration.retryPolicy = RetryPolicy(
                    maxAttempts: 2, baseDelay: .milliseconds(200), maxDelay: .milliseconds(200),
                    totalBudget: .seconds(3600), jitter: 0)
                configuration.sleep = DataLinkConfiguration(transport: .urlSession).sleep  // the default, not a recorder
                let client = DataLinkClient(configuration: configuration)
                let request = Task(executorPreference: DedicatedThreadExecutor.shared) {
                    try await client.datasetData(database: "WIKI", ticker: "AAPL")
                }
                #expect(await server.waitForRequests(1))
                let gate = PoolBlocker()
                gate.blockThePool()
                let retried = await server.waitForRequests(2, timeout: .seconds(60))
                gate.release()
                #expect(retried, "the retry went out while the pool was blocked")
                let response = try await request.value
                #expect(response.attempts == 2)
            }
        }
    }

    /// A blocking wait (for the test's own thread).
    private static func wait(_ semaphore: DispatchSemaphore, seconds: Int = 60) -> Bool {
        semaphore.wait(timeout: .now() + .seconds(seconds)) == .success
    }
}
