import ColonnadeTestSupport
import Dispatch
@testable import DataLink
import DataLinkURLSession
import Foundation
import Synchronization
import Testing

/// Issue 11, items 7, 8 and 13: the key never goes in clear text to a remote host, never comes
/// back out of a body, URL credentials are never shown, and a request cannot outlive its
/// deadline — not by trickling bytes, not by starving the concurrency pool.
@Suite struct TransportSafetyTests {
    // MARK: Plain HTTP

    @Test(arguments: [
        "http://example.invalid", "http://10.0.0.1:8080/mirror", "http://127.0.0.1.example.com",
        "http://localhost.evil.example", "http://0.0.0.0:9", "http://[fe80::1]", "HTTP://data.nasdaq.com",
    ])
    func theKeyIsNeverSentOverPlainHTTPToARemoteHost(base: String) async throws {
        let url = try #require(URL(string: base))
        let client = DataLinkClient(configuration: DataLinkConfiguration(transport: .urlSession, baseURL: url, apiKey: APIKey(fakeKey)))
        let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
        guard case let .insecureTransport(target, host)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(target == .dataset(database: "WIKI", code: "AAPL"))
        #expect(host == url.host)
        #expect(error!.description.contains("plain HTTP") && !error!.description.contains(fakeKey))
    }

    @Test func loopbackAndHTTPSAreAllowed() throws {
        for host in ["127.0.0.1", "127.1.2.3", "localhost", "LOCALHOST", "::1", "[::1]", "::ffff:127.0.0.1"] {
            #expect(DataLinkClient.isLoopback(host), "\(host)")
        }
        for host in ["128.0.0.1", "0.0.0.0", "::", "::2", "localhost.example", "10.0.0.1", ""] {
            #expect(!DataLinkClient.isLoopback(host), "\(host)")
        }
        #expect(DataLinkClient.insecureHost(try #require(URL(string: "https://data.nasdaq.com"))) == nil)
        #expect(DataLinkClient.insecureHost(try #require(URL(string: "http://127.0.0.1:8080"))) == nil)
        #expect(DataLinkClient.insecureHost(try #require(URL(string: "http://data.nasdaq.com"))) == "data.nasdaq.com")
    }

    @Test func anonymousRequestsMayUsePlainHTTPAndKeyedOnesToLoopbackDo() async throws {
        try await LoopbackHTTPServer.run({ _ in .json(#"{"dataset_data":{"column_names":["Date","Close"],"data":[]}}"#) }) { server in
            for key in [nil, fakeKey] {
                let client = DataLinkClient(configuration: testConfiguration(server, key: key))
                let response = try await client.datasetData(database: "WIKI", ticker: "AAPL")
                #expect(response.status == 200)
            }
            #expect(server.requests.count == 2)
        }
    }

    // MARK: Echoed keys

    @Test func aKeyEchoedInASuccessBodyOrHeaderIsOverwrittenByteForByte() async throws {
        let body = #"{"dataset_data":{"column_names":["Date","Close"],"data":[["We could not recognize your API key: '\#(fakeKey)'"]]}}"#
        try await LoopbackHTTPServer.run({ _ in .json(body, headers: ["X-Echo": "key=\(fakeKey)"]) }) { server in
            let log = LogRecorder()
            let client = DataLinkClient(configuration: testConfiguration(server, key: fakeKey, log: log))
            let response = try await client.datasetData(database: "WIKI", ticker: "AAPL")
            let text = String(decoding: response.body, as: UTF8.self)
            #expect(response.body.count == body.utf8.count, "same length: offsets still match what the server sent")
            #expect(text == body.replacingOccurrences(of: fakeKey, with: String(repeating: "*", count: fakeKey.count)))
            #expect(response.header("x-echo") == "key=<redacted>")
            #expect(!log.lines.joined().contains(fakeKey))
            #expect(!log.lines.joined().contains(String(fakeKey.prefix(8))), "no fragment of the key either")
        }
    }

    @Test func scrubFindsEveryOccurrenceIncludingAdjacentAndAtTheEdges() {
        let redactor = Redactor(key: APIKey("abcabc"))
        let stars = "******"
        for (input, expected) in [
            ("abcabc", stars), ("xabcabcabcabcy", "x" + stars + stars + "y"),
            ("abcabcabc", stars + "abc"), ("", ""),
            ("xxxxabca", "xxxx****"), ("xxxxabc", "xxxxabc"), ("bcabcxx", "*****xx"), ("cabcx", "****x"),
            ("abcab", "*****"), ("abcxx", "abcxx"),
        ] {
            #expect(String(decoding: redactor.scrub(Data(input.utf8)), as: UTF8.self) == expected, "\(input)")
        }
    }

    // MARK: URL credentials

    @Test func debugLogAndErrorsNeverShowURLCredentials() async throws {
        try await LoopbackHTTPServer.run({ _ in .respond(status: 500, headers: [:], body: Data("oops".utf8)) }) { server in
            var parts = try #require(URLComponents(url: server.baseURL, resolvingAgainstBaseURL: false))
            parts.user = "alice"
            parts.password = "hunter2secret"
            var configuration = testConfiguration(server, key: fakeKey, maxAttempts: 1)
            configuration.baseURL = try #require(parts.url)
            let log = LogRecorder()
            configuration.log = log.hook
            let client = DataLinkClient(configuration: configuration)
            let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
            let all = log.lines.joined(separator: "\n") + String(describing: error)
            #expect(!all.contains("hunter2secret") && !all.contains("alice:"), "\(all)")
            #expect(log.lines.joined().contains("GET http://<redacted>@127.0.0.1:"), "\(log.lines)")
        }
        #expect(Redactor.displayURL(try #require(URL(string: "https://u:p@h.example/x?y=1"))) == "https://<redacted>@h.example/x?y=1")
        #expect(Redactor.displayURL(try #require(URL(string: "https://h.example/x"))) == "https://h.example/x")
    }

    // MARK: Deadlines

    @Test(.timeLimit(.minutes(2)))
    func aTricklingServerCannotHoldARequestPastItsDeadline() async throws {
        // 4,000 bytes, one every 50 ms: 200 s in all, and never 6 s without a byte, so only the
        // whole-request deadline (1 s) can end it. The idle timeout leaves 5.95 s of slack for the
        // sender to be scheduled late between two bytes (as `timeoutIsAboutSilenceNotTotalTime`
        // in RetryTests: 1.95 s was not enough for its sibling while the rest of the suite ran in
        // parallel on 2 cores); a late sender ends it as `timedOut`, which fails the test, and a
        // deadline that does not work lets the drip run past the time limit.
        let body = Data(repeating: UInt8(ascii: " "), count: 4_000)
        try await LoopbackHTTPServer.run({ _ in
            .drip(status: 200, headers: ["Content-Type": "application/json"], body: body, pieces: 4_000, interval: 0.05)
        }) { server in
            var configuration = testConfiguration(server, key: fakeKey, maxAttempts: 3, timeout: .seconds(6))
            configuration.requestDeadline = .seconds(1)
            let client = DataLinkClient(configuration: configuration)
            let error = await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
            guard case .deadlineExceeded(_, after: .seconds(1))? = error else {
                Issue.record("expected deadlineExceeded, got \(String(describing: error))")
                return
            }
            #expect(server.requests.count == 1, "a deadline is not retried")
            #expect(await server.waitUntilIdle(), "the client hung up")
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func theIdleTimeoutFiresWhileTheConcurrencyPoolIsBlocked() async throws {
        try await onDedicatedThread {
            try await LoopbackHTTPServer.run({ _ in .hang }) { server in
                let client = DataLinkClient(
                    configuration: testConfiguration(
                        server, key: fakeKey, maxAttempts: 1,
                        timeout: .milliseconds(300)))
                let request = Task(executorPreference: DedicatedThreadExecutor.shared) {
                    await dataLinkError { try await client.datasetData(database: "WIKI", ticker: "AAPL") }
                }
                #expect(await eventually { server.requests.count == 1 })
                // Every thread of the cooperative pool blocks until the server sees the client
                // hang up: only a timer that does not need the pool can make that happen.
                let gate = PoolBlocker()
                gate.blockThePool()
                let hungUp = await server.waitUntilIdle(timeout: .seconds(30))
                gate.release()
                #expect(hungUp, "the timeout fired while the pool was blocked")
                let error = await request.value
                guard case .timedOut? = error else {
                    Issue.record("expected timedOut, got \(String(describing: error))")
                    return
                }
            }
        }
    }
}

/// Holds every thread of the Swift concurrency pool in a blocking wait until `release()`.
final class PoolBlocker: Sendable {
    private let semaphore = DispatchSemaphore(value: 0)
    private let count = max(8, ProcessInfo.processInfo.activeProcessorCount * 4)

    func blockThePool() {
        for _ in 0 ..< count {
            Task.detached { [semaphore] in Self.wait(semaphore) }
        }
    }

    func release() {
        for _ in 0 ..< count { semaphore.signal() }
    }

    private static func wait(_ semaphore: DispatchSemaphore) { semaphore.wait() }
}

@Suite struct RedactorFragmentTests {
    @Test func cutOffStartsOfTheKeyAreRedactedInText() {
        let redactor = Redactor(key: APIKey("sk-LIVE-0123456789"))
        #expect(redactor("found 'sk-LIVE-0123…'") == "found '<redacted>…'")
        #expect(redactor("sk-LIVE-0123456789 and sk-LIVE-01") == "<redacted> and <redacted>")
        #expect(redactor("sk-LIV is a prefix; sk-LI is too short") == "<redacted> is a prefix; sk-LI is too short")
        #expect(redactor("nothing here") == "nothing here")
        #expect(redactor.oneLine("a\u{1B}]0;t\u{7}\u{9B}\u{202E}b") == "a\\u{1B}]0;t\\u{7}\\u{9B}\\u{202E}b")
        // A short key is only removed whole.
        #expect(Redactor(key: APIKey("abcd12"))("abcd1 abcd12") == "abcd1 <redacted>")
    }
}
