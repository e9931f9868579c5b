/// When and how long the client waits before repeating a failed request.
///
/// Retried: timeouts, connection failures (refused, reset, body cut short), HTTP 429, HTTP 202
/// (`QEAx07`, "try again in 30 seconds") and HTTP 5xx. Never retried: any other 4xx, a response
/// that is too large or of the wrong shape, cancellation.
///
/// The wait before attempt *n + 1* is `min(maxDelay, baseDelay · 2^(n-1))`, reduced by a random
/// fraction of up to `jitter` of itself, and never shorter than a `Retry-After` the server sent.
/// The client gives up when `maxAttempts` is reached or when the next wait would end after
/// `totalBudget` (measured from the first attempt), and then throws the last error.
///
/// ```swift
/// let fast = RetryPolicy(maxAttempts: 3, baseDelay: .milliseconds(10), jitter: 0)  // tests
/// ```
public struct RetryPolicy: Sendable, Equatable {
    /// Attempts in total, the first included (1 = no retries).
    public var maxAttempts: Int
    /// The wait after the first failure.
    public var baseDelay: Duration
    /// The longest computed backoff (a server's `Retry-After` may ask for more).
    public var maxDelay: Duration
    /// No attempt starts later than this after the first one.
    public var totalBudget: Duration
    /// Fraction (0…1) of each backoff that is randomised away, so clients do not retry in step.
    public var jitter: Double

    /// - Precondition: `maxAttempts >= 1`, `0 <= jitter <= 1`, delays not negative.
    public init(
        maxAttempts: Int = 5,
        baseDelay: Duration = .milliseconds(500),
        maxDelay: Duration = .seconds(30),
        totalBudget: Duration = .seconds(120),
        jitter: Double = 0.5
    ) {
        precondition(maxAttempts >= 1, "maxAttempts must be at least 1")
        precondition((0 ... 1).contains(jitter), "jitter must be in 0...1")
        precondition(baseDelay >= .zero && maxDelay >= .zero && totalBudget >= .zero, "delays must not be negative")
        self.maxAttempts = maxAttempts
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.totalBudget = totalBudget
        self.jitter = jitter
    }

    /// One attempt only.
    public static let none = RetryPolicy(maxAttempts: 1)

    /// The wait after failed attempt number `attempt` (1-based).
    /// - Parameters:
    ///   - retryAfter: the server's `Retry-After`, a lower bound when present.
    ///   - random: a number in 0..<1 (injectable so the computation is testable).
    public func delay(afterAttempt attempt: Int, retryAfter: Duration?, random: Double) -> Duration {
        let exponent = min(max(attempt - 1, 0), 30)
        var backoff = baseDelay * (1 << exponent)
        if backoff > maxDelay { backoff = maxDelay }
        backoff = backoff * (1 - jitter * min(max(random, 0), 1))
        if let retryAfter, retryAfter > backoff { return retryAfter }
        return backoff
    }
}
