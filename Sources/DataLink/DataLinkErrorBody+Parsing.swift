import DataLinkFormat
import Foundation

extension DataLinkErrorBody {
    /// Recognizes the API's error bodies; nil for anything else (HTML pages, empty bodies).
    ///
    /// Only small bodies are looked at (≤ 64 KiB): error bodies are a few hundred bytes, and
    /// `JSONSerialization` builds a full object tree, which is acceptable only for those.
    static func parse(_ body: Data, redactor: Redactor) -> DataLinkErrorBody? {
        guard !body.isEmpty, body.count <= 64 * 1024 else { return nil }
        let firstByte = body.first { !Redactor.isASCIIWhitespace($0) }
        if firstByte == UInt8(ascii: "{") {
            guard let object = try? JSONSerialization.jsonObject(with: body) as? [String: Any],
                  let error = object["quandl_error"] as? [String: Any]
            else { return nil }
            let code = error["code"] as? String ?? ""
            let message = error["message"] as? String ?? ""
            guard !(code.isEmpty && message.isEmpty) else { return nil }
            return DataLinkErrorBody(code: redactor.oneLine(code), message: redactor.oneLine(message))
        }
        let text = String(decoding: body, as: UTF8.self)
        let lines = text.split(whereSeparator: { $0 == "\n" || $0 == "\r\n" || $0 == "\r" })
        guard lines.count >= 2, lines[0].trimmingASCIIWhitespace() == "code,message" else { return nil }
        let row = lines[1]
        guard let comma = row.firstIndex(of: ",") else {
            return DataLinkErrorBody(code: redactor.oneLine(String(row)), message: "")
        }
        var message = String(row[row.index(after: comma)...]).trimmingASCIIWhitespace()
        if message.count >= 2, message.first == "\"", message.last == "\"" {
            message = String(message.dropFirst().dropLast()).replacingOccurrences(of: "\"\"", with: "\"")
        }
        return DataLinkErrorBody(code: redactor.oneLine(String(row[..<comma])), message: redactor.oneLine(message))
    }
}
