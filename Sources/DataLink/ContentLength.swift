import DataLinkFormat

/// The `Content-Length` of a response, read strictly (RFC 9110 §8.6): one or more ASCII digits
/// that fit in an `Int`; a list of the same value repeated (`42, 42`, as duplicate header lines
/// arrive joined) is that value. Anything else — a sign, a space inside, an empty value, a
/// value past `Int.max`, two different values — is a malformed response: libcurl ignores a
/// value past 2^63 - 1 and reads to the end of the connection, so a server could otherwise cut
/// a body short and have it taken as whole.
package enum ContentLength {
    /// Why a `Content-Length` value cannot be used.
    package struct Problem: Error, Sendable, Equatable {
        /// One line, quoting (a prefix of) the value.
        package var reason: String
    }

    /// The declared length, nil when there is no header.
    /// - Complexity: O(n) in the value's length.
    package static func parse(_ value: String?) -> Result<Int?, Problem> {
        guard let value else { return .success(nil) }
        var declared: Int?
        for part in value.split(separator: ",", omittingEmptySubsequences: false) {
            let digits = part.utf8.drop { $0 == 0x20 || $0 == 0x09 }.reversed().drop { $0 == 0x20 || $0 == 0x09 }.reversed()
            guard !digits.isEmpty, digits.allSatisfy({ $0 >= 0x30 && $0 <= 0x39 }) else {
                return .failure(Problem(reason: "Content-Length '\(quoted(value))' is not a number"))
            }
            var n = 0
            for digit in digits {
                let (times10, o1) = n.multipliedReportingOverflow(by: 10)
                let (sum, o2) = times10.addingReportingOverflow(Int(digit - 0x30))
                guard !o1, !o2 else {
                    return .failure(Problem(reason: "Content-Length '\(quoted(value))' is too large to be a length"))
                }
                n = sum
            }
            if let declared, declared != n {
                return .failure(Problem(reason: "Content-Length '\(quoted(value))' declares different lengths"))
            }
            declared = n
        }
        return .success(declared)
    }

    /// The value for a message: at most 40 characters, control characters as `?`.
    private static func quoted(_ value: String) -> String {
        let shown = value.unicodeScalars.prefix(40).map { $0.value < 0x20 || $0.value == 0x7F ? "?" : String($0) }.joined()
        return value.unicodeScalars.count > 40 ? shown + "…" : shown
    }

    /// Whether a body of `count` bytes is what `headers` declare: true without a
    /// `Content-Length`, with a `Content-Encoding` other than `identity` (the transport hands on
    /// the decoded bytes, the header counts the encoded ones), and for statuses that carry no
    /// body (1xx, 204, 304).
    static func matches(_ count: Int, declared: Int?, headers: [String: String], status: Int) -> Bool {
        guard let declared else { return true }
        if (100 ..< 200).contains(status) || status == 204 || status == 304 { return true }
        if let encoding = headers["content-encoding"]?.trimmingASCIIWhitespace().lowercased(), !encoding.isEmpty, encoding != "identity" {
            return true
        }
        return count == declared
    }
}
