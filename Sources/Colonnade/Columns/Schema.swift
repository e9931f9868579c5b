/// One value column of a table: the name the source gave it, the identifier queries use, its type.
public struct ColumnDescriptor: Sendable, Hashable {
    /// The source's own name, for example `Adj. Close`.
    public var name: String
    /// The normalized identifier, for example `adj_close` (see `ColumnDescriptor.identifier(for:)`).
    public var identifier: String
    /// The element type.
    public var type: ElementType

    /// A descriptor whose identifier is derived from `name`.
    public init(name: String, type: ElementType) {
        self.name = name
        self.identifier = ColumnDescriptor.identifier(for: name)
        self.type = type
    }

    /// The query identifier of a source column name: lower-cased, every run of characters other
    /// than ASCII letters and digits turned into one underscore, leading and trailing underscores
    /// dropped. `Adj. Close` → `adj_close`, `Ex-Dividend` → `ex_dividend`,
    /// `Turnover (Lacs)` → `turnover_lacs`.
    ///
    /// A name with letters or digits but none of them ASCII gets one `u`+hex token per letter or
    /// digit instead, so it is never empty: `終値` → `u7d42_u5024` (queries can also use the
    /// quoted source name, `"終値"`). A name with no letter or digit at all (`%%%`) gives `""`,
    /// which no table accepts.
    public static func identifier(for name: String) -> String {
        var out = ""
        var pendingUnderscore = false
        for scalar in name.unicodeScalars {
            let isAlnum = (scalar >= "a" && scalar <= "z") || (scalar >= "A" && scalar <= "Z") || (scalar >= "0" && scalar <= "9")
            if isAlnum {
                if pendingUnderscore && !out.isEmpty { out.append("_") }
                pendingUnderscore = false
                out.unicodeScalars.append(scalar.properties.lowercaseMapping.unicodeScalars.first ?? scalar)
            } else {
                pendingUnderscore = true
            }
        }
        if out.isEmpty {
            let letters = name.unicodeScalars.filter { $0.properties.isAlphabetic || $0.properties.numericType != nil }
            return letters.map { "u" + String($0.value, radix: 16) }.joined(separator: "_")
        }
        return out
    }

    /// Why `identifier` cannot name a value column, or nil when it can: it must be non-empty,
    /// normalized (`identifier(for: identifier) == identifier`), and neither `date`, `ticker`
    /// nor the date column's own identifier — those names always mean the date and ticker
    /// columns in queries and in `--columns`, so a value column under them would be unreachable.
    public static func unusableIdentifierReason(_ identifier: String, dateColumnIdentifier: String) -> String? {
        if identifier.isEmpty { return "it has no letter or digit, so no query could name it" }
        if identifier == "date" || identifier == "ticker" || identifier == dateColumnIdentifier {
            return "its identifier '\(identifier)' is reserved for the \(identifier == "ticker" ? "ticker" : "date") column"
        }
        if ColumnDescriptor.identifier(for: identifier) != identifier { return "identifier '\(identifier)' is not normalized" }
        return nil
    }
}
