import Foundation

/// A successful response: the whole body, undecoded, and where it came from.
public struct DataLinkResponse: Sendable {
    /// What was asked for.
    public var target: DataLinkTarget
    /// The HTTP status (2xx, never 202).
    public var status: Int
    /// Response headers, names lower-cased.
    public var headers: [String: String]
    /// The body bytes (at most the configured maximum response size).
    public var body: Data
    /// The URL that answered, after redirects, without credentials: the API key travels in a
    /// header, and a base URL's `user:password@` and any `api_key=…` parameter (of a redirect,
    /// say) are removed.
    public var url: URL
    /// How many attempts it took (1 when the first one succeeded).
    public var attempts: Int

    /// A response from its parts.
    public init(target: DataLinkTarget, status: Int, headers: [String: String], body: Data, url: URL, attempts: Int) {
        self.target = target
        self.status = status
        self.headers = Dictionary(headers.map { ($0.key.lowercased(), $0.value) }, uniquingKeysWith: { first, _ in first })
        self.body = body
        self.url = url
        self.attempts = attempts
    }

    /// The `Content-Type` header, if any (e.g. `application/json; charset=utf-8`).
    public var contentType: String? { headers["content-type"] }

    /// The value of the header `name` (case-insensitive).
    public func header(_ name: String) -> String? { headers[name.lowercased()] }
}
