import Colonnade
import Foundation

/// Removes secrets — the API key, and the password of a base URL's `user:password@` — from
/// text and bodies that leave the library (errors, log lines, response bodies), and makes
/// server-provided text printable on one line. It is the library's one redaction point: every
/// string built from a response passes through it.
struct Redactor: Sendable {
    static let placeholder = "<redacted>"
    /// The strings removed, longest first (so a secret containing another is removed whole).
    private let secrets: [String]
    /// Further secrets removed from text only where they appear whole (an export's signed
    /// download link and its parts), longest first. Not scrubbed from bodies: an export-status
    /// body must keep its link for the client to read.
    private var others: [String] = []

    init(key: APIKey?, baseURL: URL? = nil) {
        var secrets: [String] = []
        if let key, !key.value.isEmpty { secrets.append(key.value) }
        // A URL's user and password are secrets too; short ones (a user named "a") would mangle
        // every message, so only those of 4 or more characters are searched for in free text.
        // URLs themselves are always shown through `displayURL`, which drops the credentials.
        for part in [baseURL?.password(percentEncoded: false), baseURL?.user(percentEncoded: false)] {
            if let part, part.count >= 4, !secrets.contains(part) { secrets.append(part) }
        }
        self.secrets = secrets.sorted { $0.count > $1.count }
    }

    /// A redactor that also hides `link`: the whole URL, its path, its query and each query
    /// value of 8 or more characters (a signed download link grants access by itself).
    func hiding(_ link: URL) -> Redactor {
        var parts = [link.absoluteString, link.path]
        if let query = link.query {
            parts.append(query)
            // Each parameter's value too (a signature echoed back by an error page).
            for pair in query.split(separator: "&") {
                guard let equals = pair.firstIndex(of: "=") else { continue }
                let value = String(pair[pair.index(after: equals)...])
                parts.append(value)
                if let decoded = value.removingPercentEncoding { parts.append(decoded) }
            }
        }
        return adding(parts)
    }

    /// A redactor that also hides every http(s) URL found in the first 64 KiB of `body` (an
    /// export-status body carries the signed download link), as `hiding(_:)` does.
    func hidingURLs(in body: Data) -> Redactor {
        let text = String(decoding: body.prefix(64 * 1024), as: UTF8.self)
        var result = self
        var rest = Substring(text)
        while let start = rest.range(of: "http")?.lowerBound {
            let tail = rest[start...]
            let end = tail.firstIndex { $0 == "\"" || $0 == "," || $0 == "<" || $0 == ">" || $0 == "'" || $0.isWhitespace } ?? tail.endIndex
            let escaped = String(tail[..<end])
            let candidate = escaped.replacingOccurrences(of: "\\/", with: "/")
            if let url = URL(string: candidate), url.scheme != nil, url.host != nil {
                result = result.hiding(url)
                // The JSON-escaped spelling (`https:\/\/…`) too.
                if escaped != candidate { result = result.adding([escaped]) }
            }
            rest = tail[tail.index(after: tail.startIndex)...]
        }
        return result
    }

    private func adding(_ parts: [String]) -> Redactor {
        var copy = self
        var all = Set(others)
        for part in parts where part.count >= 8 { all.insert(part) }
        copy.others = all.sorted { $0.count > $1.count }
        return copy
    }

    /// `text` with every occurrence of a secret replaced by `<redacted>`, and every cut-off
    /// start of one (its first 6 or more characters, as an excerpt cut inside the key shows it)
    /// too.
    func callAsFunction(_ text: String) -> String {
        var text = text
        for other in others where text.contains(other) {
            text = text.replacingOccurrences(of: other, with: Self.placeholder)
        }
        for secret in secrets where text.contains(secret) {
            text = text.replacingOccurrences(of: secret, with: Self.placeholder)
        }
        for secret in secrets where secret.count > Self.fragmentLength {
            text = Self.removingFragments(of: secret, from: text)
        }
        return text
    }

    /// The shortest start of a secret that is removed when the rest is cut off.
    static let fragmentLength = 6

    /// `text` with each run that starts with `secret`'s first `fragmentLength` characters and
    /// continues as `secret` does (but ends early) replaced by `<redacted>`.
    static func removingFragments(of secret: String, from text: String) -> String {
        let start = String(secret.prefix(fragmentLength))
        guard text.contains(start) else { return text }
        var out = ""
        var rest = Substring(text)
        while let hit = rest.range(of: start) {
            out += rest[..<hit.lowerBound]
            var end = hit.upperBound
            var s = secret.index(secret.startIndex, offsetBy: fragmentLength)
            while end < rest.endIndex, s < secret.endIndex, rest[end] == secret[s] {
                end = rest.index(after: end)
                s = secret.index(after: s)
            }
            out += placeholder
            rest = rest[end...]
        }
        return out + rest
    }

    /// `body` with every occurrence of a secret's UTF-8 bytes overwritten by `*`, byte for byte:
    /// same length, so offsets in later error messages still match the bytes the server sent,
    /// and no excerpt a decoder cuts from the body can hold a fragment of the key. Fragments at
    /// the edges are overwritten too (`scrubEdges`).
    /// - Complexity: O(body × secrets).
    func scrub(_ body: Data) -> Data {
        var out = body
        for secret in secrets {
            let needle = Array(secret.utf8)
            guard let first = needle.first else { continue }
            var positions: [Int] = []
            out.withUnsafeBytes { (raw: UnsafeRawBufferPointer) in
                let n = raw.count, m = needle.count
                guard n >= m else { return }
                var i = 0
                while i <= n - m {
                    // Safe: i + m <= n.
                    if raw[i] == first && needle.withUnsafeBytes({ memcmp(raw.baseAddress! + i, $0.baseAddress!, m) == 0 }) {
                        positions.append(i)
                        i += m
                    } else {
                        i += 1
                    }
                }
            }
            guard !positions.isEmpty else { continue }
            out.withUnsafeMutableBytes { raw in
                // Safe: each position was found within the buffer with m bytes after it.
                for p in positions { memset(raw.baseAddress! + p, Int32(UInt8(ascii: "*")), needle.count) }
            }
        }
        return scrubEdges(out)
    }

    /// `bytes` with a secret's fragment at either edge overwritten by `*`: bytes that end with
    /// the first 4 or more bytes of a secret (a body or window cut inside the key), or start
    /// with its last 4 or more.
    func scrubEdges(_ bytes: Data) -> Data {
        var out = bytes
        for secret in secrets {
            let needle = Array(secret.utf8)
            let head = [UInt8](out.prefix(needle.count)), tail = [UInt8](out.suffix(needle.count))
            var ranges: [Range<Int>] = []
            for k in stride(from: min(needle.count - 1, tail.count), through: 4, by: -1)
            where tail.suffix(k).elementsEqual(needle.prefix(k)) {
                ranges.append(out.count - k ..< out.count)
                break
            }
            for k in stride(from: min(needle.count - 1, head.count), through: 4, by: -1)
            where head.prefix(k).elementsEqual(needle.suffix(k)) {
                ranges.append(0 ..< k)
                break
            }
            guard !ranges.isEmpty else { continue }
            out.withUnsafeMutableBytes { raw in
                // Safe: every range lies within the buffer.
                for r in ranges { memset(raw.baseAddress! + r.lowerBound, Int32(UInt8(ascii: "*")), r.count) }
            }
        }
        return out
    }

    /// `url` as it may be shown: `user:password@` replaced by `<redacted>@`, the value of a
    /// credential parameter (`api_key=…`, see ``isCredentialParameter(_:)``) by `<redacted>`,
    /// the rest as is.
    static func displayURL(_ url: URL) -> String {
        let hasUser = url.user != nil || url.password != nil
        guard hasUser || hasCredentialParameter(url),
            var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url.absoluteString }
        parts.user = nil
        parts.password = nil
        // `<` and `>` may not stand in a URL: a marker of unreserved characters, replaced after.
        let marker = "REDACTED-\(UInt64.random(in: 1 ... .max))"
        parts.percentEncodedQueryItems = parts.percentEncodedQueryItems?.map { item in
            isCredentialParameter(item.name) ? URLQueryItem(name: item.name, value: marker) : item
        }
        guard var text = parts.string?.replacingOccurrences(of: marker, with: placeholder) else { return "<URL with credentials>" }
        if hasUser {
            guard let slashes = text.range(of: "://") else { return "<URL with credentials>" }
            text = text.replacingCharacters(in: slashes, with: "://\(placeholder)@")
        }
        return text
    }

    /// `url` as it may be kept (in a ``DataLinkResponse``, say): without `user:password@` and
    /// without credential parameters (`api_key=…`); the rest as is.
    static func keptURL(_ url: URL) -> URL {
        guard url.user != nil || url.password != nil || hasCredentialParameter(url),
            var parts = URLComponents(url: url, resolvingAgainstBaseURL: false)
        else { return url }
        parts.user = nil
        parts.password = nil
        if let items = parts.percentEncodedQueryItems {
            let kept = items.filter { !isCredentialParameter($0.name) }
            parts.percentEncodedQueryItems = kept.isEmpty ? nil : kept
        }
        // Dropping parts of a valid URL leaves a valid one; if not, keep only scheme, host and path.
        if let stripped = parts.url { return stripped }
        var bare = URLComponents()
        bare.scheme = url.scheme
        bare.host = url.host
        bare.port = url.port
        bare.path = url.path
        return bare.url ?? URL(fileURLWithPath: "/")
    }

    /// Whether a query parameter named `name` carries a credential: `api_key` (the API's own
    /// name for it), `apikey`, `api-key`, `api_token`, `access_token`, `token`, `password`,
    /// `secret`, in any case.
    static func isCredentialParameter(_ name: String) -> Bool {
        let lowered = (name.removingPercentEncoding ?? name).lowercased()
        return ["api_key", "apikey", "api-key", "api_token", "x-api-token", "access_token", "token", "password", "secret"]
            .contains(lowered)
    }

    private static func hasCredentialParameter(_ url: URL) -> Bool {
        guard let query = url.query, !query.isEmpty else { return false }
        return query.split(separator: "&").contains { pair in
            isCredentialParameter(String(pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)[0]))
        }
    }

    /// Redacted (the known secrets, then anything key-like or after `api_key=`: see
    /// `CredentialRedaction`), control characters (C0, DEL, C1, line separators, bidirectional
    /// controls) shown as escapes, so a server message stays one line and cannot drive a terminal.
    func oneLine(_ text: String, limit: Int = 500) -> String {
        let result = TerminalText.escaped(CredentialRedaction.redacting(self(text)))
        return result.count > limit ? String(result.prefix(limit)) + "…" : result
    }

    /// The first `limit` bytes of a body as one printable, redacted line.
    ///
    /// The key (and anything key-like) is removed *before* cutting, from a window much wider than the cut (64 KiB), so
    /// a key that straddles the cut, or is shifted into view by earlier replacements, cannot
    /// leak as a fragment; a fragment at the window's edges (a body cut inside the key) is
    /// overwritten by `*`.
    func bodyPrefix(_ body: Data, limit: Int = 200) -> String {
        let window = scrubEdges(Data(body.prefix(max(limit, 64 * 1024))))
        // Key-like tokens are judged whole, before the cut (which could leave too little of one).
        let text = CredentialRedaction.redacting(self(String(decoding: window, as: UTF8.self)))
        let cut = String(decoding: Array(text.utf8.prefix(limit)), as: UTF8.self)
        let suffix = body.count > limit ? "… (\(body.count) bytes)" : ""
        return oneLine(cut, limit: limit) + suffix
    }

    static func isASCIIWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
