/// Why compressed bytes (LZ4, gzip) could not be decoded. Offsets are byte offsets in the
/// compressed input as the caller gave it.
public enum CodecError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The input ends before `needed` more bytes at `offset`.
    case truncated(codec: String, offset: Int, needed: Int)
    /// The bytes at `offset` are not what the format allows.
    case malformed(codec: String, offset: Int, detail: String)
    /// A checksum the input carries does not match the data (`what`: header, block, content).
    case checksumMismatch(codec: String, offset: Int, what: String, expected: UInt32, actual: UInt32)
    /// The output would pass `limit` bytes (the caller's bound, or the size it expected).
    case tooLarge(codec: String, limit: Int)
    /// The data decodes to `actual` bytes, the caller expected `expected`.
    case sizeMismatch(codec: String, expected: Int, actual: Int)

    public var description: String {
        switch self {
        case let .truncated(codec, offset, needed):
            "\(codec): truncated: needs \(needed) more bytes at byte \(offset)"
        case let .malformed(codec, offset, detail):
            "\(codec): malformed at byte \(offset): \(detail)"
        case let .checksumMismatch(codec, offset, what, expected, actual):
            "\(codec): \(what) checksum at byte \(offset) is \(Self.hex(expected)), the data's is \(Self.hex(actual))"
        case let .tooLarge(codec, limit):
            "\(codec): decodes to more than \(limit) bytes"
        case let .sizeMismatch(codec, expected, actual):
            "\(codec): decodes to \(actual) bytes, expected \(expected)"
        }
    }

    /// The byte offset in the input, where there is one.
    public var offset: Int? {
        switch self {
        case let .truncated(_, o, _), let .malformed(_, o, _), let .checksumMismatch(_, o, _, _, _): o
        case .tooLarge, .sizeMismatch: nil
        }
    }

    static func hex(_ v: UInt32) -> String {
        let digits = String(v, radix: 16)
        return "0x" + String(repeating: "0", count: 8 - digits.count) + digits
    }
}
