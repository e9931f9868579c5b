/// Converts between exchange symbols and Nasdaq Data Link ticker codes.
///
/// The API cannot put a `.` in a dataset or ticker code, so a share-class separator is written
/// `_`: the symbol `BRK.A` is the code `BRK_A` (`WIKI/BRK_A`, `ticker=BRK_A` in WIKI/PRICES).
///
///     DataLinkSymbols.symbol(fromCode: "BRK_A")   // "BRK.A"
///     DataLinkSymbols.code(fromSymbol: "BRK.A")   // "BRK_A"
///
/// The two are inverses for symbols without `_` and codes without `.`; neither changes case.
public enum DataLinkSymbols {
    /// The symbol for an API code: every `_` becomes `.`.
    /// - Complexity: O(n) in the code's length.
    public static func symbol(fromCode code: String) -> String {
        guard code.utf8.contains(UInt8(ascii: "_")) else { return code }
        return String(decoding: code.utf8.map { $0 == UInt8(ascii: "_") ? UInt8(ascii: ".") : $0 }, as: UTF8.self)
    }

    /// The API code for a symbol: every `.` becomes `_`.
    /// - Complexity: O(n) in the symbol's length.
    public static func code(fromSymbol symbol: String) -> String {
        guard symbol.utf8.contains(UInt8(ascii: ".")) else { return symbol }
        return String(decoding: symbol.utf8.map { $0 == UInt8(ascii: ".") ? UInt8(ascii: "_") : $0 }, as: UTF8.self)
    }
}
