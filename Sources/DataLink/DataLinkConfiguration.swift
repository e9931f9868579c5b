import Foundation

/// Everything a ``DataLinkClient`` needs to know, as a value. There is no shared default client.
///
/// ```swift
/// import DataLinkURLSession   // HTTPTransport.urlSession
///
/// var configuration = DataLinkConfiguration(transport: .urlSession, apiKey: try APIKey.resolve(
///     environment: ProcessInfo.processInfo.environment,
///     homeDirectory: FileManager.default.homeDirectoryForCurrentUser))
/// configuration.log = { line in FileHandle.standardError.write(Data((line + "\n").utf8)) }
/// let client = DataLinkClient(configuration: configuration)
/// ```
public struct DataLinkConfiguration: Sendable {
    /// How requests are sent: in this process through URLSession (`.urlSession`, module
    /// `DataLinkURLSession`), or each in a child process (``HTTPTransport/childProcess(_:)``), so
    /// that a hostile response can neither end this process nor fill its memory. Export
    /// downloads (``DataLinkClient/downloadTableExport(_:tickers:from:to:columns:to:polling:events:)``)
    /// go the same way; from a child process they are streamed back and written to their file here.
    public var transport: HTTPTransport
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

    /// A configuration sending its requests by `transport`; every other setting has a default
    /// suited to the public API.
    public init(
        transport: HTTPTransport,
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
        self.transport = transport
        self.baseURL = baseURL
        self.apiKey = apiKey
        self.requestTimeout = requestTimeout
        self.requestDeadline = requestDeadline
        self.retryPolicy = retryPolicy
        self.maxConcurrentRequests = maxConcurrentRequests
        self.maximumResponseSize = maximumResponseSize
        self.log = log
        self.sleep = sleep
    }

    /// `maxConcurrentRequests`, or 1 when it is nil; never less than 1.
    public var effectiveMaxConcurrentRequests: Int { max(1, maxConcurrentRequests ?? 1) }
}
