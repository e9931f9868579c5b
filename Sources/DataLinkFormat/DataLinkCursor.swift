import Colonnade
import Foundation

/// The Tables API's pagination cursor, `meta.next_cursor_id`, read from a JSON page without
/// decoding its rows. `QuoteDecoder` reads the same field with the same code while decoding a
/// page (`DecodedResponse.nextCursorID`); use this when the page is not decoded here.
///
///     try await client.tablePages("WIKI/PRICES", tickers: ["AAPL"]) { page in
///         try DataLinkCursor.nextCursorID(inJSON: page.body)
///     }
public enum DataLinkCursor {
    /// The next page's cursor: pass it as `qopts.cursor_id`.
    ///
    /// - Returns: The cursor (a string, or a number's text); nil when it is null, empty or absent
    ///   (the last page).
    /// - Throws: `ResponseError` when the body is not one JSON object (empty, malformed, CSV, …).
    /// - Complexity: O(bytes), a structural scan that parses no numbers.
    public static func nextCursorID(inJSON bytes: UnsafeRawBufferPointer, source: String = "page") throws(ResponseError) -> String? {
        let (input, start) = try QuoteDecoder.start(of: bytes, source: source)
        guard input.base[start] == UInt8(ascii: "{") else {
            throw .notADataLinkResponse(source: source, detail: "expected a JSON object with 'meta', found \(input.found(at: start))")
        }
        var scanner = JSONScanner(input: input, position: start)
        return try ResponseError.wrapping { () throws(DecodeError) in try scanner.scanNextCursorID() }
    }

    /// The next page's cursor in a body held in `Data`; see `nextCursorID(inJSON:source:)`.
    public static func nextCursorID(inJSON body: Data, source: String = "page") throws(ResponseError) -> String? {
        var result: Result<String?, ResponseError> = .success(nil)
        body.withUnsafeBytes { bytes in
            result = Result { () throws(ResponseError) in try nextCursorID(inJSON: bytes, source: source) }
        }
        return try result.get()
    }
}
