/// Why a DEFLATE stream (RFC 1951) could not be inflated. `offset` is the byte of the compressed
/// stream where the problem was found (counted from the stream's first byte).
public enum InflateError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The input ended before the final block did.
    case truncated(offset: Int)
    /// A block header with type 3 (reserved).
    case reservedBlockType(offset: Int)
    /// A stored block whose length and its one's complement disagree.
    case storedLengthMismatch(offset: Int, length: Int, complement: Int)
    /// A dynamic block header that does not describe a valid code: too many symbols, an
    /// over-subscribed or incomplete code, a repeat with nothing before it or past the end, no
    /// end-of-block code.
    case invalidCode(offset: Int, detail: String)
    /// A code the block's tables do not define, or a symbol that has no meaning (literal/length
    /// 286–287, distance 30–31).
    case invalidSymbol(offset: Int, detail: String)
    /// A match reaching back before the start of the output.
    case distanceTooFar(offset: Int, distance: Int, available: Int)

    /// The byte offset in the compressed stream.
    public var offset: Int {
        switch self {
        case .truncated(let o), .reservedBlockType(let o), .storedLengthMismatch(let o, _, _), .invalidCode(let o, _),
            .invalidSymbol(let o, _), .distanceTooFar(let o, _, _):
            o
        }
    }

    /// One line, without the offset (the zip layer places it).
    public var reason: String {
        switch self {
        case .truncated: "the compressed data ends early"
        case .reservedBlockType: "a block of reserved type 3"
        case let .storedLengthMismatch(_, length, complement):
            "a stored block's length \(length) does not match its complement \(complement)"
        case let .invalidCode(_, detail): "an invalid Huffman code: \(detail)"
        case let .invalidSymbol(_, detail): "an invalid symbol: \(detail)"
        case let .distanceTooFar(_, distance, available):
            "a match \(distance) bytes back with only \(available) bytes of output before it"
        }
    }

    /// `byte N of the compressed data: reason`.
    public var description: String { "byte \(offset) of the compressed data: \(reason)" }
}
