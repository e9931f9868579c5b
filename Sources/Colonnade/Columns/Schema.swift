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
        return out
    }
}
