import Colonnade
import Foundation

/// One request, ready to send: where, what for, and which format is expected back.
struct PreparedRequest: Sendable {
    var target: DataLinkTarget
    var url: URL
    var format: ResponseFormat
    /// A whole-table export request: its answers carry a signed link, hidden in logs and errors.
    var export = false
}

/// Builds request URLs from untrusted parts: every path segment and query value is
/// percent-encoded strictly (only RFC 3986 unreserved characters stay literal), so a ticker
/// such as `FDX&api_key=x` or `../../x` cannot change the path or add parameters.
enum RequestBuilder {
    /// Time-series query parameters, in the order they are sent.
    static func datasetQuery(from: Day?, to: Day?, options: DatasetOptions) throws(DataLinkError) -> [(String, String)] {
        if let from, let to, to < from { throw .invalidRequest("end date \(to) is before start date \(from)") }
        var query: [(String, String)] = []
        if let from { query.append(("start_date", try dateValue(from))) }
        if let to { query.append(("end_date", try dateValue(to))) }
        query.append(("order", options.order.rawValue))
        if let columnIndex = options.columnIndex {
            guard columnIndex >= 0 else { throw .invalidRequest("column_index \(columnIndex) is negative") }
            query.append(("column_index", String(columnIndex)))
        }
        if let collapse = options.collapse { query.append(("collapse", collapse.rawValue)) }
        if let transform = options.transform { query.append(("transform", transform.rawValue)) }
        if let limit = options.limit {
            guard limit > 0 else { throw .invalidRequest("limit \(limit) is not positive") }
            query.append(("limit", String(limit)))
        }
        return query
    }

    /// `YYYY-MM-DD` of a day the API can take: years 1 to 9999.
    static func dateValue(_ day: Day) throws(DataLinkError) -> String {
        guard (1 ... 9999).contains(day.components.year) else {
            throw .invalidRequest("date \(day) is outside the years 1 to 9999")
        }
        return day.description
    }

    /// `{base}/api/v3/{segments…}{suffix}?{query}`.
    static func url(base: URL, segments: [String], suffix: String, query: [(String, String)]) throws(DataLinkError) -> URL {
        var text = base.absoluteString
        if let question = text.firstIndex(of: "?") { text = String(text[..<question]) }
        while text.hasSuffix("/") { text.removeLast() }
        text += "/api/v3"
        for segment in segments { text += "/" + percentEncode(segment) }
        text += suffix
        if !query.isEmpty {
            text += "?" + query.map { "\(percentEncode($0.0))=\(percentEncode($0.1))" }.joined(separator: "&")
        }
        guard let url = URL(string: text) else { throw .invalidRequest("cannot form a URL from base \(Redactor.displayURL(base))") }
        return url
    }

    /// Checks one code that becomes a path segment or a list element.
    /// - Throws: ``DataLinkError/invalidRequest(_:)`` for empty codes, `.`/`..`, `/`, `,` and
    ///   control characters (those could change the path or split a list); everything else is
    ///   encoded, not rejected.
    static func validate(_ code: String, as what: String) throws(DataLinkError) {
        let shown = Redactor(key: nil).oneLine(code, limit: 80)
        guard !code.isEmpty else { throw .invalidRequest("\(what) is empty") }
        guard code != ".", code != ".." else { throw .invalidRequest("\(what) \"\(shown)\" is not a valid code") }
        if code.contains("/") { throw .invalidRequest("\(what) \"\(shown)\" contains '/'") }
        if code.contains(",") { throw .invalidRequest("\(what) \"\(shown)\" contains ','") }
        if code.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) {
            throw .invalidRequest("\(what) \"\(shown)\" contains control characters")
        }
    }

    /// Splits `PUBLISHER/TABLE` into its two validated parts.
    static func tableParts(_ table: String) throws(DataLinkError) -> (String, String) {
        let parts = table.split(separator: "/", omittingEmptySubsequences: false).map(String.init)
        guard parts.count == 2 else {
            throw .invalidRequest("table \"\(Redactor(key: nil).oneLine(table, limit: 80))\" is not of the form PUBLISHER/TABLE")
        }
        try validate(parts[0], as: "table publisher")
        try validate(parts[1], as: "table name")
        return (parts[0], parts[1])
    }

    /// Percent-encodes every byte outside `A–Z a–z 0–9 - . _ ~` (RFC 3986 unreserved).
    static func percentEncode(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var bytes: [UInt8] = []
        bytes.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A") ... UInt8(ascii: "Z"), UInt8(ascii: "a") ... UInt8(ascii: "z"),
                UInt8(ascii: "0") ... UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."),
                UInt8(ascii: "_"), UInt8(ascii: "~"):
                bytes.append(byte)
            default:
                bytes += [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 0xF)]]
            }
        }
        return String(decoding: bytes, as: UTF8.self)
    }
}
