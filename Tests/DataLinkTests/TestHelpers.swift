import ColonnadeTestSupport
@testable import DataLink
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
func testConfiguration(
    _ server: LoopbackHTTPServer,
    key: String? = nil,
    maxAttempts: Int = 3,
    timeout: Duration = .seconds(5),
    maximumResponseSize: Int = 512 << 20,
    maxConcurrentRequests: Int? = nil,
    log: LogRecorder? = nil,
    sleeper: SleepRecorder? = nil
) -> DataLinkConfiguration {
    var configuration = DataLinkConfiguration(
        baseURL: server.baseURL,
        apiKey: key.flatMap(APIKey.init),
        requestTimeout: timeout,
        retryPolicy: RetryPolicy(maxAttempts: maxAttempts, baseDelay: .milliseconds(10), maxDelay: .milliseconds(100),
                                 totalBudget: .seconds(20), jitter: 0),
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

/// Whether a fixture is present, as a Swift Testing condition with a clear skip message.
func fixtureTrait(_ name: String) -> ConditionTrait {
    .enabled(if: Fixtures.quandl(name) != nil, Comment(rawValue: Fixtures.missingMessage(name)))
}

/// The DataLinkError a finished task failed with, if any.
func failure<T, E: Error>(of result: Result<T, E>) -> DataLinkError? {
    if case .failure(let error) = result { return error as? DataLinkError }
    return nil
}
