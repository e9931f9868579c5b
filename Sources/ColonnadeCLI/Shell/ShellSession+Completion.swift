import Colonnade

/// What Tab completes at the shell's prompt: dot-commands at the start of a line, `filter`'s
/// options after `-`, tickers after `.tickers`, `--tickers` or inside `ticker in (`, and
/// otherwise column names, functions and the language's words.
extension ShellSession {
    /// The dot-commands, as `.help` lists them.
    static let dotCommands = [
        ".tickers", ".from", ".to", ".on", ".max-stale", ".adjusted", ".format", ".columns", ".limit", ".maxrows", ".timing", ".show",
        ".open",
        ".info", ".help", ".quit",
    ]

    /// Where the word before the end of `prefix` starts (a character offset) and what it may
    /// become, in a stable order; matches ignore case.
    func completions(for prefix: String) -> (start: Int, candidates: [String]) {
        let characters = Array(prefix)
        var start = characters.count
        while start > 0, Self.isWordCharacter(characters[start - 1]) { start -= 1 }
        let word = String(characters[start...]).lowercased()
        let before = String(characters[..<start])
        // The word before this one; within a list (`.tickers AAPL,MS`) the one before the list.
        let tokens = before.split(whereSeparator: { $0 == " " || $0 == "\t" }).map(String.init)
        let inList = !(before.last.map { $0 == " " || $0 == "\t" } ?? true)
        let previous = (inList ? tokens.dropLast().last : tokens.last) ?? ""
        let pool: [String]
        if before.trimmingSpacesAndTabs().isEmpty && word.hasPrefix(".") {
            pool = Self.dotCommands
        } else if word.hasPrefix("-") {
            pool = CommandSpec.filter.options.map(\.displayName).filter { $0 != "--snapshot" }
        } else if previous == ".tickers" || previous == "--tickers" || Self.isInsideTickerList(before) {
            pool = table.tickers.map(\.symbol)
        } else if previous == ".format" || previous == "--format" {
            pool = OutputFormat.allCases.map(\.rawValue)
        } else if previous == ".open" {
            return (start, [])
        } else {
            pool =
                ["ticker", "date"] + table.schema.map(\.identifier)
                + ValueExpression.SeriesFunction.allCases.map { $0.rawValue + "(" }
                + ValueExpression.MathFunction.allCases.map { $0.rawValue + "(" }
                + ["avg(", "count(", "sum(", "min(", "max(", "first(", "last(", "stddev("]
                + ["and", "or", "not", "between", "in", "latest"]
        }
        return (start, pool.filter { $0.lowercased().hasPrefix(word) })
    }

    /// Letters, digits, `_`, `.` and `-` make a word (`adj_close`, `.tickers`, `--count`, `BRK.A`).
    private static func isWordCharacter(_ c: Character) -> Bool {
        c.isLetter || c.isNumber || c == "_" || c == "." || c == "-"
    }

    /// Whether `text` ends inside `ticker in (…` (an open parenthesis after `in`, not closed).
    private static func isInsideTickerList(_ text: String) -> Bool {
        guard let open = text.lowercased().range(of: "ticker in (", options: .backwards) else { return false }
        return !text[open.upperBound...].contains(")")
    }
}
