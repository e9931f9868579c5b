import Foundation

/// What the loopback server does with one request.
public enum LoopbackHTTPAction: Sendable {
    /// Sends a complete response with a `Content-Length` header, then closes the connection.
    case respond(status: Int, headers: [String: String], body: Data)
    /// Waits `seconds` (or until the server stops), then behaves like `respond`.
    case respondAfter(seconds: Double, status: Int, headers: [String: String], body: Data)
    /// Declares the full `Content-Length` of `body`, sends the headers and only the first
    /// `sentBytes` bytes of it, then closes the connection normally (FIN).
    case cutOff(status: Int, headers: [String: String], body: Data, sentBytes: Int)
    /// Sends the headers, then `body` in `pieces` parts with `interval` seconds between them
    /// (a slow but steady sender).
    case drip(status: Int, headers: [String: String], body: Data, pieces: Int, interval: Double)
    /// Closes the connection with a TCP reset (`SO_LINGER` 0, then `close`) without answering.
    case reset
    /// Sends a header block and then `byteCount` bytes of filler in 64 KiB pieces (paced at
    /// ≤ 128 MB/s), either with a `Content-Length` (when `declaresLength`) or chunked without
    /// one; stops early when the client goes away.
    case oversized(status: Int, headers: [String: String], byteCount: Int, declaresLength: Bool)
    /// Waits until the server has received `count` requests in all (counting this one), or
    /// stops, then behaves like `respondAfter(seconds: delay, …)`. Server-side synchronization:
    /// the first `count` requests are provably in flight at the same moment, however the
    /// client's tasks happen to be scheduled.
    case respondAfterRequests(count: Int, delay: Double, status: Int, headers: [String: String], body: Data)
    /// Never answers; the connection stays open until the client hangs up or the server stops
    /// (so ``LoopbackHTTPServer/waitUntilIdle(timeout:)`` tells when a client gave up).
    case hang
    /// Sends `head` exactly as given (the status line and header lines, each ending in CRLF; no
    /// framing header is added, so a hostile `Content-Length` goes out as written), the blank
    /// line, then `body`, then closes the connection normally (FIN).
    case verbatim(head: String, body: Data)
    /// Sends a header block, then `byteCount` bytes of filler chunked, in 1 MiB pieces as fast
    /// as the socket takes them (no pacing); stops early when the client goes away.
    case flood(status: Int, headers: [String: String], byteCount: Int)

    /// A JSON response (`Content-Type: application/json; charset=utf-8`).
    public static func json(_ body: String, status: Int = 200, headers: [String: String] = [:]) -> Self {
        json(Data(body.utf8), status: status, headers: headers)
    }

    /// A JSON response (`Content-Type: application/json; charset=utf-8`).
    public static func json(_ body: Data, status: Int = 200, headers: [String: String] = [:]) -> Self {
        .respond(
            status: status, headers: headers.merging(["Content-Type": "application/json; charset=utf-8"]) { mine, _ in mine }, body: body)
    }

    /// A CSV response (`Content-Type: text/csv`).
    public static func csv(_ body: Data, status: Int = 200, headers: [String: String] = [:]) -> Self {
        .respond(status: status, headers: headers.merging(["Content-Type": "text/csv"]) { mine, _ in mine }, body: body)
    }

    /// A CSV response (`Content-Type: text/csv`).
    public static func csv(_ body: String, status: Int = 200, headers: [String: String] = [:]) -> Self {
        csv(Data(body.utf8), status: status, headers: headers)
    }
}

/// The reason phrase the server writes for `status` (informational only).
func loopbackReasonPhrase(_ status: Int) -> String {
    switch status {
    case 200: "OK"
    case 202: "Accepted"
    case 400: "Bad Request"
    case 401: "Unauthorized"
    case 403: "Forbidden"
    case 404: "Not Found"
    case 410: "Gone"
    case 422: "Unprocessable Entity"
    case 429: "Too Many Requests"
    case 500: "Internal Server Error"
    case 502: "Bad Gateway"
    case 503: "Service Unavailable"
    default: "Status"
    }
}
