/// Keeps credentials out of the excerpts error messages quote from an input (a saved response
/// may echo an API key: `We could not recognize your API key: '…'`, `?api_key=…`).
///
/// An excerpt is cut (32 bytes of a token, 500 of a message), and a cut inside a key would
/// show its first characters, too few for a redactor that knows the key to recognise. So the
/// rule looks at the whole *token* in the input, past the excerpt's edges: a run of
/// `[A-Za-z0-9_-]` is replaced by `<redacted>` when the whole run
/// - is key-like: 16 to 4,096 bytes with at least one letter and one digit (a Nasdaq Data Link
///   key is 20 such characters), or
/// - is the value of a credential parameter: it follows `api_key`, `apikey`, `api-key`,
///   `api_token`, `x-api-token`, `access_token`, `token`, `password` or `secret` and a `=` or
///   `:` (with optional quotes and spaces), whatever its length.
///
/// Names, dates, numbers and words stay as they are; a long identifier mixing letters and digits
/// (`adj_close_2014_v2_final`) is redacted too — an excerpt loses a little, a key never leaks.
package enum CredentialRedaction {
    /// What replaces a credential.
    package static let placeholder = "<redacted>"

    /// Whether `b` can be part of a key: ASCII letters, digits, `_` and `-`.
    @inline(__always)
    package static func isTokenByte(_ b: UInt8) -> Bool {
        (b >= 0x30 && b <= 0x39) || ((b | 0x20) >= 0x61 && (b | 0x20) <= 0x7A) || b == 0x5F || b == 0x2D
    }

    /// The longest token looked at, each way from a point in an excerpt.
    static let maximumRun = 4096

    /// Whether the token `[runStart, runEnd)` of `bytes` must not be shown.
    package static func isSecret(_ bytes: UnsafeBufferPointer<UInt8>, _ runStart: Int, _ runEnd: Int) -> Bool {
        isKeyLike(bytes, runStart, runEnd) || followsCredentialName(bytes, runStart)
    }

    private static func isKeyLike(_ bytes: UnsafeBufferPointer<UInt8>, _ runStart: Int, _ runEnd: Int) -> Bool {
        let length = runEnd - runStart
        guard length >= 16 && length <= maximumRun else { return false }
        var letter = false, digit = false
        for i in runStart ..< runEnd {
            let b = bytes[i]
            if b >= 0x30 && b <= 0x39 { digit = true } else if b != 0x5F && b != 0x2D { letter = true }
            if letter && digit { return true }
        }
        return false
    }

    private static let credentialNames: Set<String> = [
        "api_key", "apikey", "api-key", "api_token", "x-api-token", "access_token", "token", "password", "secret",
    ]

    /// Whether a credential's name and `=` or `:` come right before `runStart` (quotes and
    /// spaces allowed around the separator: `api_key=`, `"api_key": "`, `api_key: '`).
    private static func followsCredentialName(_ bytes: UnsafeBufferPointer<UInt8>, _ runStart: Int) -> Bool {
        var i = runStart
        var sawSeparator = false
        var skipped = 0
        while i > 0 && skipped < 6 {
            let b = bytes[i - 1]
            if b == UInt8(ascii: "=") || b == UInt8(ascii: ":") {
                if sawSeparator { return false }
                sawSeparator = true
            } else if b != UInt8(ascii: "\"") && b != UInt8(ascii: "'") && b != UInt8(ascii: " ") {
                break
            }
            i -= 1
            skipped += 1
        }
        guard sawSeparator else { return false }
        let nameEnd = i
        while i > 0 && nameEnd - i < 16 && isTokenByte(bytes[i - 1]) { i -= 1 }
        guard i < nameEnd else { return false }
        let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[i ..< nameEnd]), as: UTF8.self).lowercased()
        return credentialNames.contains(name)
    }

    /// The bytes `[start, limit)` of `bytes` as text, with each token that ``isSecret(_:_:_:)``
    /// (judged on the whole token, which may run on before `start` and after `limit`) replaced
    /// by `<redacted>`, and every other stretch passed to `show`.
    package static func excerpt(
        _ bytes: UnsafeBufferPointer<UInt8>, from start: Int, to limit: Int,
        show: (UnsafeBufferPointer<UInt8>) -> String
    ) -> String {
        var text = ""
        var i = start
        while i < limit {
            if isTokenByte(bytes[i]) {
                var runStart = i
                while runStart > 0 && i - runStart < maximumRun && isTokenByte(bytes[runStart - 1]) { runStart -= 1 }
                var runEnd = i
                while runEnd < bytes.count && runEnd - i < maximumRun && isTokenByte(bytes[runEnd]) { runEnd += 1 }
                let shownEnd = Swift.min(runEnd, limit)
                text += isSecret(bytes, runStart, runEnd) ? placeholder : show(UnsafeBufferPointer(rebasing: bytes[i ..< shownEnd]))
                i = shownEnd
            } else {
                var j = i + 1
                while j < limit && !isTokenByte(bytes[j]) { j += 1 }
                text += show(UnsafeBufferPointer(rebasing: bytes[i ..< j]))
                i = j
            }
        }
        return text
    }

    /// `text` with every credential token replaced by `<redacted>` (for a whole message taken
    /// from an input, such as an API error body's message, before it is cut or shown).
    package static func redacting(_ text: String) -> String {
        Array(text.utf8).withUnsafeBufferPointer { bytes in
            excerpt(bytes, from: 0, to: bytes.count) { String(decoding: $0, as: UTF8.self) }
        }
    }
}
