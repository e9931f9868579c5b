import Foundation

/// Removes the API key from text that leaves the library (errors, log lines) and makes
/// server-provided text printable on one line.
struct Redactor: Sendable {
    static let placeholder = "<redacted>"
    private let secret: String?
    /// Further secrets (an export's signed download link and its parts), longest first.
    private let others: [String]

    init(key: APIKey?, secrets: [String] = []) {
        secret = key?.value
        others = secrets.filter { $0.count >= 8 }.sorted { $0.count > $1.count }
    }

    /// A redactor that also hides `link`: the whole URL, its path and its query (a signed
    /// download link grants access by itself).
    func hiding(_ link: URL) -> Redactor {
        var secrets = others + [link.absoluteString, link.path]
        if let query = link.query {
            secrets.append(query)
            // Each parameter's value too (a signature echoed back by an error page).
            for pair in query.split(separator: "&") {
                guard let equals = pair.firstIndex(of: "=") else { continue }
                let value = String(pair[pair.index(after: equals)...])
                secrets.append(value)
                if let decoded = value.removingPercentEncoding { secrets.append(decoded) }
            }
        }
        return Redactor(secret: secret, others: secrets)
    }

    /// A redactor that also hides every http(s) URL found in the first 64 KiB of `body` (an
    /// export-status body carries the signed download link).
    func hidingURLs(in body: Data) -> Redactor {
        let text = String(decoding: body.prefix(64 * 1024), as: UTF8.self)
        var result = self
        var rest = Substring(text)
        while let start = rest.range(of: "http")?.lowerBound {
            let tail = rest[start...]
            let end = tail.firstIndex { $0 == "\"" || $0 == "," || $0 == "<" || $0 == ">" || $0 == "'" || $0.isWhitespace } ?? tail.endIndex
            let candidate = String(tail[..<end]).replacingOccurrences(of: "\\/", with: "/")
            if let url = URL(string: candidate), url.scheme != nil, url.host != nil {
                result = result.hiding(url)
                // The JSON-escaped spelling (`https:\/\/…`) too.
                let escaped = String(tail[..<end])
                if escaped != candidate { result = Redactor(secret: result.secret, others: result.others + [escaped]) }
            }
            rest = tail[tail.index(after: tail.startIndex)...]
        }
        return result
    }

    private init(secret: String?, others: [String]) {
        self.secret = secret
        self.others = others.filter { $0.count >= 8 }.sorted { $0.count > $1.count }
    }

    /// `text` with every occurrence of the key (and the other secrets) replaced by `<redacted>`.
    func callAsFunction(_ text: String) -> String {
        var text = text
        for other in others where text.contains(other) {
            text = text.replacingOccurrences(of: other, with: Self.placeholder)
        }
        guard let secret, !secret.isEmpty, text.contains(secret) else { return text }
        return text.replacingOccurrences(of: secret, with: Self.placeholder)
    }

    /// Redacted, control characters shown as escapes, so a server message stays one line.
    func oneLine(_ text: String, limit: Int = 500) -> String {
        var result = ""
        for scalar in self(text).unicodeScalars {
            switch scalar {
            case "\n": result += "\\n"
            case "\r": result += "\\r"
            case "\t": result += "\\t"
            case _ where scalar.value < 0x20 || scalar.value == 0x7F || (0x80..<0xA0).contains(scalar.value):
                result += "\\u{\(String(scalar.value, radix: 16))}"
            default: result.unicodeScalars.append(scalar)
            }
        }
        if result.count > limit { result = String(result.prefix(limit)) + "…" }
        return result
    }

    /// The first `limit` bytes of a body as one printable, redacted line.
    ///
    /// The key is removed *before* cutting, from a window much wider than the cut (64 KiB), so
    /// a key that straddles the cut, or is shifted into view by earlier replacements, cannot
    /// leak as a fragment.
    func bodyPrefix(_ body: Data, limit: Int = 200) -> String {
        let window = body.prefix(max(limit, 64 * 1024))
        let text = self(String(decoding: window, as: UTF8.self))
        let cut = String(decoding: Array(text.utf8.prefix(limit)), as: UTF8.self)
        let suffix = body.count > limit ? "… (\(body.count) bytes)" : ""
        return oneLine(cut, limit: limit) + suffix
    }

    static func isASCIIWhitespace(_ byte: UInt8) -> Bool {
        byte == 0x20 || byte == 0x09 || byte == 0x0A || byte == 0x0D
    }
}
