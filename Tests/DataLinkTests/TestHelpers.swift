import ColonnadeTestSupport
@testable import DataLink
import DataLinkURLSession
import Foundation
import Synchronization
import Testing

/// A distinctive fake key: any appearance of it in output is a leak.
let fakeKey = "sk-TEST-9f8e7d"

/// Collects the debug hook's lines.
final class LogRecorder: Sendable {
    private let storage = Mutex<[String]>([])
    var lines: [String] { storage.withLock { $0 } }
    var hook: @Sendable (String) -> Void { { line in self.storage.withLock { $0.append(line) } } }
}

/// Records the waits the client asks for instead of sleeping (but still honours cancellation).
final class SleepRecorder: Sendable {
    private let storage = Mutex<[Duration]>([])
    var delays: [Duration] { storage.withLock { $0 } }
    var sleep: @Sendable (Duration) async throws -> Void {
        { duration in
            self.storage.withLock { $0.append(duration) }
            try Task.checkCancellation()
        }
    }
}

/// A configuration pointing at the loopback server, with fast, deterministic retries.
///
/// The timeout and the retry budget are generous on purpose: they are measured on the wall
/// clock, and under `swift test` the engine's CPU-bound tests can keep every thread of the
/// cooperative pool busy for tens of seconds, so a tight budget would give up on a request
/// that merely waited for a thread (30 s was once not enough on a machine shared by seven
/// engineers' builds): 10 minutes is a guard against a hang only. The request deadline (300 s by
/// default) is an hour for the same reason: a whole `swift test` on that machine once kept a
/// first attempt waiting past 300 s, and the client then gave up instead of retrying, failing
/// tests that count attempts. Tests about timeouts, the deadline or the budget set their own.
func testConfiguration(
    _ server: LoopbackHTTPServer,
    key: String? = nil,
    maxAttempts: Int = 3,
    timeout: Duration = .seconds(600),
    maximumResponseSize: Int = 512 << 20,
    maxConcurrentRequests: Int? = nil,
    log: LogRecorder? = nil,
    sleeper: SleepRecorder? = nil
) -> DataLinkConfiguration {
    var configuration = DataLinkConfiguration(
        transport: .urlSession, baseURL: server.baseURL,
        apiKey: key.flatMap(APIKey.init),
        requestTimeout: timeout,
        requestDeadline: .seconds(3600),
        retryPolicy: RetryPolicy(
            maxAttempts: maxAttempts, baseDelay: .milliseconds(10), maxDelay: .milliseconds(100),
            totalBudget: .seconds(3600), jitter: 0),
        maxConcurrentRequests: maxConcurrentRequests,
        maximumResponseSize: maximumResponseSize,
        log: log?.hook)
    if let sleeper { configuration.sleep = sleeper.sleep }
    return configuration
}

/// The DataLinkError thrown by `body`, or nil (recording an issue) when it succeeded or threw something else.
func dataLinkError<T>(
    sourceLocation: SourceLocation = #_sourceLocation,
    _ body: () async throws -> T
) async -> DataLinkError? {
    do {
        _ = try await body()
        Issue.record("expected a DataLinkError, got success", sourceLocation: sourceLocation)
        return nil
    } catch let error as DataLinkError {
        return error
    } catch {
        Issue.record("expected a DataLinkError, got \(error)", sourceLocation: sourceLocation)
        return nil
    }
}

/// A `quandl_error` JSON body.
func quandlError(_ code: String, _ message: String) -> String {
    #"{"quandl_error":{"code":"\#(code)","message":"\#(message)"}}"#
}

/// The DataLinkError a finished task failed with, if any.
func failure<T, E: Error>(of result: Result<T, E>) -> DataLinkError? {
    if case .failure(let error) = result { return error as? DataLinkError }
    return nil
}

/// Polls `condition` every few milliseconds until it holds; false when `timeout` passed first.
/// The timeout is generous by default: it ends as soon as the condition holds, and only bounds
/// how long a real bug can hold a test up.
func eventually(timeout: Duration = .seconds(60), _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + timeout
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(5))
    }
    return condition()
}

/// A task executor with its own thread, for tests that time how fast a task *resumes*.
///
/// `swift test` runs every suite at once, and the engine's CPU-bound tests are synchronous: on
/// a 2-core machine they can hold both threads of the cooperative pool for many seconds. A
/// cancelled request that is ready to return would then wait in the pool's queue behind them,
/// and "cancellation returns within 2 s" would measure the other tests, not the client. Tasks
/// that prefer this executor (and their child tasks) run on its thread instead, so the time
/// from `cancel()` to the result is the client's own. One shared thread, alive for the
/// process: the work on it is short bookkeeping, never CPU-heavy or blocking.
final class DedicatedThreadExecutor: TaskExecutor, @unchecked Sendable {
    static let shared = DedicatedThreadExecutor()

    private let condition = NSCondition()
    private var jobs: [UnownedJob] = []  // guarded by `condition`

    private init() {
        let thread = Thread { [self] in run() }
        thread.name = "DataLinkTests.DedicatedThreadExecutor"
        thread.start()
    }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        condition.lock()
        jobs.append(job)
        condition.signal()
        condition.unlock()
    }

    private func run() {
        while true {
            condition.lock()
            while jobs.isEmpty { condition.wait() }
            let job = jobs.removeFirst()
            condition.unlock()
            job.runSynchronously(on: asUnownedTaskExecutor())
        }
    }
}

/// Runs `body` (and the child tasks it creates) on ``DedicatedThreadExecutor/shared``; use
/// `Task(executorPreference: DedicatedThreadExecutor.shared)` for unstructured tasks inside.
func onDedicatedThread<T>(_ body: () async throws -> T) async throws -> T {
    try await withTaskExecutorPreference(DedicatedThreadExecutor.shared) { try await body() }
}
