/// The one rule between exchange symbols and Nasdaq Data Link ticker codes.
///
/// The API cannot put a `.` in a dataset or ticker code, so a share-class separator is written
/// `_`, and its codes are upper case: the symbol `BRK.A` is the code `BRK_A` (`WIKI/BRK_A`,
/// `ticker=BRK_A` in WIKI/PRICES).
///
///     DataLinkSymbols.code(fromSymbol: " brk.a ")   // "BRK_A"
///     DataLinkSymbols.symbol(fromCode: "BRK_A")     // "BRK.A"
///
/// `symbol(fromCode: code(fromSymbol: s))` is the stored spelling of what a user typed
/// (`brk.a`, `BRK_A` and `BRK.A` all become `BRK.A`). Neither function validates; requests
/// check their codes when they are built.
public enum DataLinkSymbols {
    /// The symbol for an API code: every `_` becomes `.`; case is kept.
    /// - Complexity: O(n) in the code's length.
    public static func symbol(fromCode code: String) -> String {
        guard code.utf8.contains(UInt8(ascii: "_")) else { return code }
        return String(decoding: code.utf8.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: ".") : $0 }, as: UTF8.self)
    }

    /// The API code for a symbol: surrounding spaces, tabs, CR and LF removed, upper-cased, every
    /// `.` made `_`.
    /// - Complexity: O(n) in the symbol's length.
    public static func code(fromSymbol symbol: String) -> String {
        let upper = symbol.trimmingASCIIWhitespace().uppercased()
        guard upper.utf8.contains(UInt8(ascii: ".")) else { return upper }
        return String(decoding: upper.utf8.map { $0 == UInt8(ascii: ".") ? UInt8(ascii: "_") : $0 }, as: UTF8.self)
    }
}
