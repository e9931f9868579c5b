/// Why a Zstandard stream (RFC 8878) could not be decompressed. Every `offset` is the byte of the
/// compressed input where the problem was found, counted from the input's first byte.
public enum ZstdError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The input ends at `offset`, but the structure being read there needs `needed` more bytes.
    case truncated(offset: Int, needed: Int)
    /// Bytes that do not follow the format: `detail` says what was expected.
    case malformed(offset: Int, detail: String)
    /// The frame's stored content checksum (the low 32 bits of XXH64 of its content) is not the
    /// checksum of what decoded; `offset` is the checksum's first byte.
    case checksumMismatch(offset: Int, stored: UInt32, computed: UInt32)
    /// The frame at `offset` names a dictionary; dictionaries are not supported.
    case dictionaryNotSupported(offset: Int, dictionaryID: UInt32)
    /// The frame at `offset` declares a window larger than `Zstd.maximumWindowSize`.
    case windowTooLarge(offset: Int, windowSize: UInt64, limit: Int)
    /// The content would be larger than the caller's `limit` (the maximum output size or the
    /// destination buffer); found at `offset`.
    case tooLarge(offset: Int, limit: Int)
    /// The frame at `offset` declares `declared` content bytes but its blocks decode to `actual`.
    case contentSizeMismatch(offset: Int, declared: UInt64, actual: Int)
    /// The caller expected `expected` bytes, and the input decodes to `actual`.
    case sizeMismatch(expected: Int, actual: Int)

    /// The byte offset in the compressed input (for `sizeMismatch`, the end of the input).
    public var offset: Int? {
        switch self {
        case .truncated(let o, _), .malformed(let o, _), .checksumMismatch(let o, _, _),
            .dictionaryNotSupported(let o, _), .windowTooLarge(let o, _, _), .tooLarge(let o, _),
            .contentSizeMismatch(let o, _, _):
            o
        case .sizeMismatch:
            nil
        }
    }

    /// One line, without the offset.
    public var reason: String {
        switch self {
        case let .truncated(_, needed): "the compressed data ends early (\(needed) more bytes needed)"
        case let .malformed(_, detail): detail
        case let .checksumMismatch(_, stored, computed):
            "content checksum mismatch: the frame stores \(hex(stored)), its content hashes to \(hex(computed))"
        case let .dictionaryNotSupported(_, id):
            "the frame needs dictionary \(id); Zstandard dictionaries are not supported (compress without --dict)"
        case let .windowTooLarge(_, size, limit):
            "the frame's window of \(size) bytes is larger than the supported \(limit) bytes"
        case let .tooLarge(_, limit): "the decompressed data is larger than the limit of \(limit) bytes"
        case let .contentSizeMismatch(_, declared, actual):
            "the frame declares \(declared) content bytes but its blocks hold \(actual)"
        case let .sizeMismatch(expected, actual): "expected \(expected) decompressed bytes, got \(actual)"
        }
    }

    /// `byte N of the zstd data: reason`.
    public var description: String {
        if let offset { "byte \(offset) of the zstd data: \(reason)" } else { "zstd data: \(reason)" }
    }
}

private func hex(_ value: UInt32) -> String {
    let digits = String(value, radix: 16)
    return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
}
