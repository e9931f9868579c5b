/// Why a Nasdaq Data Link request failed.
///
/// Every case names the request (``DataLinkTarget``) and has a one-line `description` for the
/// CLI's stderr. No case ever holds the API key: server messages and body excerpts are
/// redacted when the error is built (servers echo unknown keys back).
///
/// HTTP statuses are interpreted first, then the `QE…` code of the error body:
///
/// | status | `QE` code | case | retried |
/// |---|---|---|---|
/// | 202 | QEAx07 | ``notReady(_:retryAfter:_:)`` | yes |
/// | 401, 400/422 with `QEA…` | | ``unauthorized(_:status:_:keySent:)`` | no |
/// | 403, other 4xx with `QEP…` | | ``forbidden(_:status:_:keySent:)`` | no |
/// | 404 | QECx02 … | ``notFound(_:_:)`` | no |
/// | 410 | | ``gone(_:_:)`` | no |
/// | 429 | QELx… | ``rateLimited(_:retryAfter:_:)`` | yes |
/// | other 4xx | | ``clientError(_:status:_:)`` | no |
/// | 5xx | QEMx/QEXx | ``serverError(_:status:_:)`` | yes |
public enum DataLinkError: Error, Sendable, CustomStringConvertible {
    /// The arguments cannot form a safe request (e.g. a code containing `/`); nothing was sent.
    case invalidRequest(String)
    /// The connection failed: refused, reset, closed mid-body, DNS, TLS, …
    case transport(DataLinkTarget, reason: String)
    /// No data arrived within the configured request timeout.
    case timedOut(DataLinkTarget, after: Duration)
    /// The request did not complete within the configured whole-request deadline (attempts and
    /// retry waits together), even though data may have been arriving. Not retried.
    case deadlineExceeded(DataLinkTarget, after: Duration)
    /// An API key would have gone in clear text: the URL is plain `http` to a host that is not a
    /// loopback address. Nothing was sent.
    case insecureTransport(DataLinkTarget, host: String)
    /// HTTP 404: the dataset or table does not exist (QECx02 "incorrect … code").
    case notFound(DataLinkTarget, DataLinkErrorBody?)
    /// HTTP 410: the API no longer serves this resource.
    case gone(DataLinkTarget, DataLinkErrorBody?)
    /// HTTP 401, or a `QEA…` code: the key is missing, unknown or not accepted.
    case unauthorized(DataLinkTarget, status: Int, DataLinkErrorBody?, keySent: Bool)
    /// HTTP 403, or a `QEP…` code: the key has no access (premium data, anonymous mode, …).
    case forbidden(DataLinkTarget, status: Int, DataLinkErrorBody?, keySent: Bool)
    /// HTTP 429: a rate limit; `retryAfter` is the server's `Retry-After` when it sent one.
    case rateLimited(DataLinkTarget, retryAfter: Duration?, DataLinkErrorBody?)
    /// HTTP 202 (QEAx07 "Please try again in 30 seconds"), still not ready after all retries.
    case notReady(DataLinkTarget, retryAfter: Duration?, DataLinkErrorBody?)
    /// Any other HTTP 4xx (400 bad parameters, 422, 406, …).
    case clientError(DataLinkTarget, status: Int, DataLinkErrorBody?)
    /// HTTP 5xx.
    case serverError(DataLinkTarget, status: Int, DataLinkErrorBody?)
    /// A response that is not what was asked for (wrong content type or shape, an HTML page, a
    /// status that is neither success nor error); `bodyPrefix` is its first ~200 bytes, sanitized.
    case unexpectedResponse(DataLinkTarget, status: Int, contentType: String?, bodyPrefix: String)
    /// The body is longer than the configured maximum: before the first byte when
    /// `Content-Length` already said so (`declaredLength`), else as soon as the bytes delivered —
    /// decoded, for a compressed body — passed the limit (`received`: how many had arrived then,
    /// at most the limit plus one delivered piece).
    case responseTooLarge(DataLinkTarget, limit: Int, declaredLength: Int?, received: Int? = nil)
    /// The response cannot be trusted to be whole or readable: an unparsable, overflowing or
    /// contradictory `Content-Length`, a body whose length differs from it, or a transfer that
    /// ended the process running it (see ``HTTPTransport/childProcess(_:)``). Not retried.
    case malformedResponse(DataLinkTarget, reason: String)
    /// A paged table asked for more pages than it can have: `limit` is the cap (see
    /// ``DataLinkClient/pageLimit(tickers:from:to:perPage:)``). A server that keeps handing out
    /// cursors would otherwise be followed forever.
    case tooManyPages(DataLinkTarget, limit: Int)
    /// A page of a paged table had no rows but a cursor to a next page: a server that would
    /// hand out empty pages forever.
    case emptyPageWithCursor(DataLinkTarget, page: Int)
    /// The task was cancelled; nil target when cancelled before any request started.
    case cancelled(DataLinkTarget?)
    /// A whole-table export was still not ready (`status`, e.g. `creating`) after `waited`,
    /// the longest wait allowed, and `requests` status requests.
    case exportNotReady(DataLinkTarget, status: String, waited: Duration, requests: Int)
    /// The export file could not be downloaded from its link on `host` (the link itself is a
    /// secret and never shown): refused too often, not a zip, or the connection kept failing.
    /// `status` is the last HTTP status, nil when there was no answer.
    case exportDownloadFailed(DataLinkTarget, host: String, status: Int?, reason: String)

    /// The request the error is about, when there was one.
    public var target: DataLinkTarget? {
        switch self {
        case .invalidRequest: nil
        case let .transport(target, _), let .timedOut(target, _), let .deadlineExceeded(target, _),
            let .insecureTransport(target, _), let .notFound(target, _), let .gone(target, _),
            let .unauthorized(target, _, _, _), let .forbidden(target, _, _, _), let .rateLimited(target, _, _),
            let .notReady(target, _, _), let .clientError(target, _, _), let .serverError(target, _, _),
            let .unexpectedResponse(target, _, _, _), let .responseTooLarge(target, _, _, _),
            let .malformedResponse(target, _), let .tooManyPages(target, _), let .emptyPageWithCursor(target, _),
            let .exportNotReady(target, _, _, _), let .exportDownloadFailed(target, _, _, _):
            target
        case let .cancelled(target): target
        }
    }

    /// Whether the retry policy may repeat the request: timeouts, connection failures, 429,
    /// 202 and 5xx.
    public var isRetryable: Bool {
        switch self {
        case .transport, .timedOut, .rateLimited, .notReady, .serverError: true
        default: false
        }
    }

    /// One line: what failed, for which dataset or table, never the key.
    public var description: String {
        switch self {
        case let .invalidRequest(reason):
            return "invalid request: \(reason)"
        case let .transport(target, reason):
            return "\(target): connection failed: \(reason)"
        case let .timedOut(target, after):
            return "\(target): timed out (no response within \(Self.format(after)))"
        case let .deadlineExceeded(target, after):
            return "\(target): timed out (not complete within \(Self.format(after)), the whole-request deadline)"
        case let .insecureTransport(target, host):
            return "\(target): refusing to send the API key in clear text over plain HTTP to \(host); use an https URL"
        case let .notFound(target, body):
            return "unknown \(target) (HTTP 404\(Self.format(body)))"
        case let .gone(target, body):
            let hint: String
            if case .dataset = target {
                hint = "; the time-series API no longer serves this dataset, try the table WIKI/PRICES instead"
            } else {
                hint = "; the API no longer serves it"
            }
            return "\(target) is gone (HTTP 410\(Self.format(body)))\(hint)"
        case let .unauthorized(target, status, body, keySent):
            return "\(target): not authorized (HTTP \(status)\(Self.format(body))); \(Self.keyHint(keySent))"
        case let .forbidden(target, status, body, keySent):
            return "\(target): access forbidden (HTTP \(status)\(Self.format(body))); \(Self.keyHint(keySent))"
        case let .rateLimited(target, retryAfter, body):
            let wait = retryAfter.map { "; the server asks to retry after \(Self.format($0))" } ?? ""
            return "\(target): rate limited (HTTP 429\(Self.format(body)))\(wait)"
        case let .notReady(target, retryAfter, body):
            let wait = retryAfter.map { "; the server asks to retry after \(Self.format($0))" } ?? ""
            return "\(target): not ready, try again later (HTTP 202\(Self.format(body)))\(wait)"
        case let .clientError(target, status, body):
            return "\(target): request rejected (HTTP \(status)\(Self.format(body)))"
        case let .serverError(target, status, body):
            return "\(target): server error (HTTP \(status)\(Self.format(body)))"
        case let .unexpectedResponse(target, status, contentType, bodyPrefix):
            return "\(target): unexpected response (HTTP \(status), content type \(contentType ?? "none")): \(bodyPrefix)"
        case let .responseTooLarge(target, limit, declaredLength, received):
            if let received {
                return "\(target): response too large (\(received) bytes arrived, decoded, when reading stopped; limit \(limit) bytes)"
            }
            let declared = declaredLength.map { "declares \($0) bytes" } ?? "exceeded the limit while streaming"
            return "\(target): response too large (\(declared); limit \(limit) bytes)"
        case let .malformedResponse(target, reason):
            return "\(target): malformed response: \(reason)"
        case let .tooManyPages(target, limit):
            return "\(target): the server kept handing out next-page cursors past \(limit) pages, more than the query can have; stopped"
        case let .emptyPageWithCursor(target, page):
            return "\(target): page \(page) had no rows but a cursor to another page; stopped following the server's cursors"
        case let .cancelled(target):
            return target.map { "\($0): cancelled" } ?? "cancelled"
        case let .exportNotReady(target, status, waited, requests):
            return "\(target): the export was still '\(status)' after \(Self.format(waited)) "
                + "(\(requests) status request\(requests == 1 ? "" : "s")); nothing was downloaded"
        case let .exportDownloadFailed(target, host, status, reason):
            let answer = status.map { " (HTTP \($0))" } ?? ""
            return "\(target): downloading the export from \(host) failed\(answer): \(reason)"
        }
    }

    private static func format(_ body: DataLinkErrorBody?) -> String {
        guard let body else { return "" }
        return ", \(body)"
    }

    private static func keyHint(_ keySent: Bool) -> String {
        keySent
            ? "an API key was sent (X-Api-Token) but not accepted"
            : "no API key was sent; set NASDAQ_DATA_LINK_API_KEY or put it in ~/.nasdaq/data_link_apikey"
    }

    static func format(_ duration: Duration) -> String {
        let seconds = Double(duration.components.seconds) + Double(duration.components.attoseconds) / 1e18
        // A server's Retry-After can be any integer: Int(2^63 as a Double) would trap.
        if seconds >= 1e15 { return "\(seconds) s" }
        if seconds >= 1, seconds == seconds.rounded() { return "\(Int(seconds)) s" }
        if seconds >= 1 { return "\((seconds * 10).rounded() / 10) s" }
        return "\(Int((seconds * 1000).rounded())) ms"
    }
}

/// The code and message of an error body: JSON `{"quandl_error":{"code":…,"message":…}}` or
/// CSV `code,message\n<code>,<message>`. Already redacted and flattened to one line.
public struct DataLinkErrorBody: Sendable, Hashable, CustomStringConvertible {
    /// e.g. `QECx02`; may be empty when the body had a message only.
    public var code: String
    /// The API's message.
    public var message: String

    /// An error body from its parts.
    public init(code: String, message: String) {
        self.code = code
        self.message = message
    }

    /// `QECx02: You have submitted an incorrect Quandl code. …`
    public var description: String {
        switch (code.isEmpty, message.isEmpty) {
        case (false, false): "\(code): \(message)"
        case (false, true): code
        case (true, _): message
        }
    }
}
