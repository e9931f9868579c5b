import Colonnade

/// Why a Nasdaq Data Link (Quandl) response could not be decoded: its bytes (`decoding`, with a
/// position), or its shape.
///
/// `description` is one line, for example:
///
///     WIKI-FDX.csv:1234:17 (byte 56789): row 1233, column 'High': expected a number, found 'abc'
///     error.json: the API returned error QECx02: You have submitted an incorrect Quandl code
public enum ResponseError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The bytes could not be decoded, or could not be read.
    case decoding(DecodeError)
    /// The input holds no bytes (or only whitespace).
    case empty(source: String)
    /// The input is well-formed but not a response shape this decoder knows (for example a test
    /// mock wrapping one, or an HTML page).
    case notADataLinkResponse(source: String, detail: String)
    /// The input is an API error body (`{"quandl_error":{…}}` or CSV `code,message`); credentials
    /// in the message are already replaced by `<redacted>` (see `CredentialRedaction`).
    case apiError(source: String, code: String, message: String)
    /// A single-ticker response whose ticker is neither given nor in the body.
    case missingTicker(source: String)
    /// The input is a zip archive that cannot be read (see `ZipError`).
    case archive(ZipError)

    /// The input's name.
    public var source: String {
        switch self {
        case .decoding(let error): error.source
        case .empty(let s), .notADataLinkResponse(let s, _), .apiError(let s, _, _), .missingTicker(let s): s
        case .archive(let error): error.archive
        }
    }

    /// The position, for the errors about bytes.
    public var position: DecodePosition? {
        if case .decoding(let error) = self { error.position } else { nil }
    }

    /// One line: control characters from the input (in names, messages, keys) are escaped.
    public var description: String {
        switch self {
        case .decoding(let error): error.description
        case .empty(let source): DecodeError.oneLine("\(source): empty input, not a Quandl response")
        case let .notADataLinkResponse(source, detail): DecodeError.oneLine("\(source): not a Quandl response: \(detail)")
        case let .apiError(source, code, message): DecodeError.oneLine("\(source): the API returned error \(code): \(message)")
        case .missingTicker(let source): DecodeError.oneLine("\(source): no ticker: the response does not name one and none was given")
        case .archive(let error): error.description
        }
    }

    /// Runs `body`, wrapping a `DecodeError` it throws in `.decoding`.
    @inline(__always)
    static func wrapping<T>(_ body: () throws(DecodeError) -> T) throws(ResponseError) -> T {
        do { return try body() } catch { throw .decoding(error) }
    }
}
