import Foundation

/// Everything a ``DataLinkClient`` needs to know, as a value. There is no shared default client.
///
/// ```swift
/// var configuration = DataLinkConfiguration(apiKey: try APIKey.resolve(
///     environment: ProcessInfo.processInfo.environment,
///     homeDirectory: FileManager.default.homeDirectoryForCurrentUser))
/// configuration.log = { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
/// let client = DataLinkClient(configuration: configuration)
/// ```
public struct DataLinkConfiguration: Sendable {
    /// Scheme, host and port (and optionally a path prefix) in front of `/api/v3/…`. With an API
    /// key it must be `https`, or `http` to a loopback address (see ``DataLinkClient``).
    public var baseURL: URL
    /// Sent as `X-Api-Token`; nil for anonymous access (20 calls per 10 minutes, shared by all
    /// anonymous users, and some tables return sample rows only).
    public var apiKey: APIKey?
    /// A request fails with ``DataLinkError/timedOut(_:after:)`` when no byte arrives for this long.
    public var requestTimeout: Duration
    /// A request — every attempt and the waits between them — fails with
    /// ``DataLinkError/deadlineExceeded(_:after:)`` when it has not completed this long after it
    /// started, however steadily bytes arrive (a server trickling a byte at a time cannot hold
    /// the client). Default 5 minutes.
    public var requestDeadline: Duration
    /// Backoff and limits for retries.
    public var retryPolicy: RetryPolicy
    /// The most requests ``DataLinkClient/fetchMany(_:maxConcurrentRequests:_:)`` keeps in flight.
    ///
    /// nil means ``effectiveMaxConcurrentRequests`` = 1: the documented limit for a key without a
    /// premium subscription is one request in flight (plus one queued), and anonymous callers
    /// share a tiny global quota, so more parallelism only earns HTTP 429s. Premium users may
    /// raise it.
    public var maxConcurrentRequests: Int?
    /// Responses with more body bytes than this fail with ``DataLinkError/responseTooLarge(_:limit:declaredLength:)``
    /// before they are fully read (default 512 MiB).
    public var maximumResponseSize: Int
    /// Run each API request in a child process (see ``TransferProcess``), so that a hostile
    /// response can neither end this process (FoundationNetworking traps on a `Content-Length`
    /// near 2^63) nor fill its memory past ``maximumResponseSize`` (FoundationNetworking queues
    /// body pieces without backpressure). Export downloads
    /// (``DataLinkClient/downloadTableExport(_:tickers:from:to:columns:to:polling:events:)``) run
    /// there too, streamed back and written to their file here. nil (the default): in this process.
    public var transferProcess: TransferProcess?
    /// Debug hook: receives the request line and headers (the key shown as `<redacted>`), then the
    /// status, response headers and the first bytes of the body, for every attempt. The
    /// library never prints by itself.
    public var log: (@Sendable (String) -> Void)?
    /// How the client waits between attempts and between export status requests; replace it in
    /// tests to record the delays instead of sleeping. Must throw when the task is cancelled (as
    /// `Task.sleep` does). The default waits on a Dispatch timer, not on the shared concurrency
    /// pool, so a busy pool does not stretch the pauses (as for the transfer timeouts).
    public var sleep: @Sendable (Duration) async throws -> Void

    /// `https://data.nasdaq.com`
    public static let defaultBaseURL = URL(string: "https://data.nasdaq.com")!

    /// A configuration; every setting has a default suited to the public API.
    public init(
        baseURL: URL = DataLinkConfiguration.defaultBaseURL,
        apiKey: APIKey? = nil,
        requestTimeout: Duration = .seconds(60),
        requestDeadline: Duration = .seconds(300),
        retryPolicy: RetryPolicy = RetryPolicy(),
        maxConcurrentRequests: Int? = nil,
        maximumResponseSize: Int = 512 << 20,
        log: (@Sendable (String) -> Void)? = nil,
        sleep: @escaping @Sendable (Duration) async throws -> Void = { try await DispatchSleep.sleep(for: $0) }
    ) {
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.requestTimeout = requestTimeout
        self.requestDeadline = requestDeadline
        self.retryPolicy = retryPolicy
        self.maxConcurrentRequests = maxConcurrentRequests
        self.maximumResponseSize = maximumResponseSize
        self.transferProcess = nil
        self.log = log
        self.sleep = sleep
    }

    /// `maxConcurrentRequests`, or 1 when it is nil; never less than 1.
    public var effectiveMaxConcurrentRequests: Int { max(1, maxConcurrentRequests ?? 1) }
}
