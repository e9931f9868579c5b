import Foundation

/// Removes the API key from text that leaves the library (errors, log lines) and makes
/// server-provided text printable on one line.
struct Redactor: Sendable {
    static let placeholder = "<redacted>"
    private let secret: String?

    init(key: APIKey?) {
        secret = key?.value
    }

    /// `text` with every occurrence of the key replaced by `<redacted>`.
    func callAsFunction(_ text: String) -> String {
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
