import Foundation

/// One HTTP request as the loopback server received it.
///
/// `target` and `path` are kept exactly as they arrived on the wire (still percent-encoded),
/// so tests can assert on the encoding a client used; `queryItems` are decoded the way a
/// typical server framework decodes them (`%XX` escapes, and `+` as a space).
public struct LoopbackHTTPRequest: Sendable, CustomStringConvertible {
    /// A header line: the name as sent (compare case-insensitively) and the trimmed value.
    public struct Header: Sendable, Equatable {
        public var name: String
        public var value: String
    }

    /// A decoded `name=value` pair of the query string (a bare `name` has the value "").
    public struct QueryItem: Sendable, Equatable {
        public var name: String
        public var value: String
    }

    /// 0 for the first request this server saw, then 1, 2, … across all connections.
    public var sequenceNumber: Int
    public var method: String
    /// The request-target exactly as sent, e.g. `/api/v3/datatables/WIKI/PRICES.json?ticker=A%2CB`.
    public var target: String
    /// The part of `target` before `?`, still percent-encoded.
    public var path: String
    /// The part of `target` after `?` (empty when absent), still percent-encoded.
    public var rawQuery: String
    public var queryItems: [QueryItem]
    public var headers: [Header]

    /// The value of the first header called `name` (case-insensitive), or nil.
    public func header(_ name: String) -> String? {
        headers.first { $0.name.caseInsensitiveCompare(name) == .orderedSame }?.value
    }

    /// The decoded value of the first query item called `name`, or nil.
    public func query(_ name: String) -> String? {
        queryItems.first { $0.name == name }?.value
    }

    /// The decoded query as a dictionary (last value wins for repeated names).
    public var queryDictionary: [String: String] {
        Dictionary(queryItems.map { ($0.name, $0.value) }, uniquingKeysWith: { _, last in last })
    }

    /// The path with its percent-escapes decoded, or nil when they are malformed.
    public var decodedPath: String? { path.removingPercentEncoding }

    public var description: String { "#\(sequenceNumber) \(method) \(target)" }

    /// Parses the request line and header block (without the terminating blank line); nil when malformed.
    public static func parse(head: String, sequenceNumber: Int) -> LoopbackHTTPRequest? {
        var lines = head.components(separatedBy: "\r\n")
        guard !lines.isEmpty else { return nil }
        let requestLine = lines.removeFirst().split(separator: " ", omittingEmptySubsequences: true)
        guard requestLine.count == 3, requestLine[2].hasPrefix("HTTP/1.") else { return nil }
        let target = String(requestLine[1])
        var headers: [Header] = []
        for line in lines where !line.isEmpty {
            guard let colon = line.firstIndex(of: ":") else { return nil }
            let name = String(line[..<colon])
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            headers.append(Header(name: name, value: value))
        }
        let path: String
        let rawQuery: String
        if let question = target.firstIndex(of: "?") {
            path = String(target[..<question])
            rawQuery = String(target[target.index(after: question)...])
        } else {
            path = target
            rawQuery = ""
        }
        return LoopbackHTTPRequest(
            sequenceNumber: sequenceNumber, method: String(requestLine[0]), target: target,
            path: path, rawQuery: rawQuery, queryItems: decodeQuery(rawQuery), headers: headers)
    }

    static func decodeQuery(_ rawQuery: String) -> [QueryItem] {
        func decode(_ part: Substring) -> String {
            let spaced = part.replacingOccurrences(of: "+", with: " ")
            return spaced.removingPercentEncoding ?? spaced
        }
        return rawQuery.split(separator: "&", omittingEmptySubsequences: true).map { pair in
            if let equals = pair.firstIndex(of: "=") {
                return QueryItem(name: decode(pair[..<equals]), value: decode(pair[pair.index(after: equals)...]))
            }
            return QueryItem(name: decode(pair), value: "")
        }
    }
}
