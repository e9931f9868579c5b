/// The bytes being decoded and their name, with the error-path helpers both decoders share:
/// turning a byte offset into a `DecodePosition` and quoting what was found there.
package struct ByteInput {
    /// The first byte.
    package let base: UnsafePointer<UInt8>
    /// The number of bytes.
    package let count: Int
    /// The input's name for messages.
    package let source: String

    /// The bytes at `base`, named `source` in messages.
    package init(base: UnsafePointer<UInt8>, count: Int, source: String) {
        self.base = base
        self.count = count
        self.source = source
    }

    /// The longest text a decoder turns into a `String` (a column name, a ticker, a key, a code):
    /// 4 KiB, far above anything a real response holds, so that a hostile input (a header line
    /// or a ticker of gigabytes, in a file mapped rather than read) cannot make one allocation of
    /// its own size. Tickers and column names longer than that are errors; other strings are cut.
    package static let maximumTextLength = 4096

    /// Whether `b` is JSON whitespace (space, LF, CR, tab).
    @inline(__always)
    package static func isBlank(_ b: UInt8) -> Bool {
        b == UInt8(ascii: " ") || b == UInt8(ascii: "\n") || b == UInt8(ascii: "\r") || b == UInt8(ascii: "\t")
    }

    /// The 1-based line and byte column of `offset` (lines end at LF). Error path only: O(offset).
    package func lineAndColumn(of offset: Int) -> (line: Int, column: Int) {
        let offset = Swift.min(Swift.max(offset, 0), count)
        var line = 1, lineStart = 0
        var i = 0
        while i < offset {
            if base[i] == UInt8(ascii: "\n") {
                line += 1
                lineStart = i + 1
            }
            i += 1
        }
        return (line, offset - lineStart + 1)
    }

    /// The position of `offset`, with the row and column name being read there.
    @inline(never)
    package func position(_ offset: Int, row: Int? = nil, column: String? = nil) -> DecodePosition {
        let (line, col) = lineAndColumn(of: offset)
        return DecodePosition(source: source, byteOffset: offset, line: line, column: col, row: row, columnName: column)
    }

    /// What is at `offset`, quoted for a message: up to 32 bytes of the token that starts there
    /// (a whole JSON string, or bytes up to a delimiter), or `end of input`.
    @inline(never)
    package func found(at offset: Int) -> String {
        guard offset < count else { return "end of input" }
        var end = offset
        if base[offset] == UInt8(ascii: "\"") {
            end += 1
            while end < count && base[end] != UInt8(ascii: "\"") {
                if base[end] == UInt8(ascii: "\\") { end += 1 }
                end += 1
            }
            end = Swift.min(end + 1, count)
        } else {
            while end < count {
                let b = base[end]
                if b == UInt8(ascii: ",") || b == UInt8(ascii: "]") || b == UInt8(ascii: "}") || b <= 32 { break }
                end += 1
            }
            if end == offset { end = offset + 1 }
        }
        return found(offset, end)
    }

    /// The bytes `[start, end)` quoted for a message (at most 32 bytes, control bytes escaped,
    /// credentials — judged on the whole token, past the cut — replaced by `<redacted>`; see
    /// ``CredentialRedaction``).
    package func found(_ start: Int, _ end: Int) -> String {
        if start >= end { return start >= count ? "end of input" : "an empty value" }
        let limit = Swift.min(end, start + 32, count)
        let text = CredentialRedaction.excerpt(UnsafeBufferPointer(start: base, count: count), from: start, to: limit) { bytes in
            var text = ""
            for scalar in String(decoding: bytes, as: UTF8.self).unicodeScalars {
                switch scalar {
                case "\n": text += "\\n"
                case "\r": text += "\\r"
                case "\t": text += "\\t"
                case "'": text += "\\'"
                default:
                    if scalar.value < 0x20 || scalar.value == 0x7F {
                        text += "\\u{\(String(scalar.value, radix: 16))}"
                    } else {
                        text.unicodeScalars.append(scalar)
                    }
                }
            }
            return text
        }
        return "'" + text + (limit < end ? "…'" : "'")
    }

    /// Whether `[start, start + literal.count)` equals `literal`.
    @inline(__always)
    package func matches(_ start: Int, _ end: Int, _ literal: StaticString) -> Bool {
        let n = literal.utf8CodeUnitCount
        guard end - start == n else { return false }
        let p = literal.utf8Start
        for i in 0 ..< n where base[start + i] != p[i] { return false }
        return true
    }
}
