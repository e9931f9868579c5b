/// Converts between exchange tickers and the API's dataset codes.
///
/// The API writes a share class separator `.` as `_` and uses upper case:
/// `BRK.B` ↔ `BRK_B` (WIKI/BRK_B, and `ticker=BRK_B` in WIKI/PRICES).
///
/// ```swift
/// TickerCode.apiCode(forTicker: "brk.b")   // "BRK_B"
/// TickerCode.ticker(forAPICode: "BRK_B")   // "BRK.B"
/// ```
/// Neither function validates; requests check their codes when they are built
/// (see ``DataLinkError/invalidRequest(_:)``).
public enum TickerCode {
    /// The API code for an exchange ticker: upper-cased, `.` replaced by `_`, surrounding
    /// whitespace removed.
    /// - Complexity: O(n) in the ticker's length.
    public static func apiCode(forTicker ticker: String) -> String {
        String(ticker.trimmingASCIIWhitespace().uppercased().map { $0 == "." ? "_" : $0 })
    }

    /// The exchange ticker for an API code: `_` replaced by `.`.
    /// - Complexity: O(n) in the code's length.
    public static func ticker(forAPICode code: String) -> String {
        String(code.map { $0 == "_" ? "." : $0 })
    }
}

extension StringProtocol {
    /// Removes leading and trailing spaces, tabs, CR and LF.
    func trimmingASCIIWhitespace() -> String {
        let isSpace: (Character) -> Bool = { $0 == " " || $0 == "\t" || $0 == "\r" || $0 == "\n" || $0 == "\r\n" }
        guard let first = firstIndex(where: { !isSpace($0) }), let last = lastIndex(where: { !isSpace($0) }) else { return "" }
        return String(self[first...last])
    }
}
