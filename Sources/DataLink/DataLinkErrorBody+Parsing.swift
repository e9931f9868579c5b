import DataLinkFormat
import Foundation

extension DataLinkErrorBody {
    /// Recognizes the API's error bodies (JSON or CSV, read by `QuoteDecoder.errorBody`, the one
    /// parse of them); nil for anything else (HTML pages, empty bodies, a body naming neither a
    /// code nor a message). The code and message are redacted, the known key included, and on
    /// one line.
    ///
    /// Only small bodies are looked at (≤ 64 KiB): error bodies are a few hundred bytes.
    static func parse(_ body: Data, redactor: Redactor) -> DataLinkErrorBody? {
        guard !body.isEmpty, body.count <= 64 * 1024,
            let (code, message) = body.withUnsafeBytes({ QuoteDecoder.errorBody($0) }),
            !(code.isEmpty && message.isEmpty)
        else { return nil }
        return DataLinkErrorBody(code: redactor.oneLine(code), message: redactor.oneLine(message))
    }
}
