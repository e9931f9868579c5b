/// The rule every output column name obeys, in one place: `--columns` (plain, computed and
/// aliased columns), `--agg` and the group keys of `--by` all check their names here.
///
/// Output names are JSON keys, CSV headers and table headings, so a consumer finds a value by
/// its name; two columns under one name, or a price under the name `ticker`, make it read the
/// wrong value without any error (JSON parsers keep the last of duplicate keys). So:
/// - names are unique, compared without regard to case (column names match regardless of case
///   everywhere else: `--columns CLOSE` is `close`), a plain column listed twice included
///   (`--columns close,close` is refused: dropping one would shift the columns a script reads by
///   position; `close as close2` gives both);
/// - `ticker` and `date` name only the ticker and date columns.
///
///     try OutputNames.check([.init("ticker", holds: .ticker), .init("ticker", item: "close as ticker")],
///                           option: "--columns", command: "filter")   // throws: reserved
enum OutputNames {
    /// What an output column shows, for the reserved names.
    enum Content: Equatable, Sendable {
        case ticker, date, other
    }

    /// One output column: its name, what it shows, and the command-line item it comes from.
    struct Column: Sendable {
        var name: String
        var content: Content
        /// The item as given (`close as ticker`), for the message; the name when there is none.
        var item: String

        init(_ name: String, holds content: Content = .other, item: String? = nil) {
            self.name = name
            self.content = content
            self.item = item ?? name
        }
    }

    /// Checks `columns` (in output order) against the rule.
    ///
    /// - Parameters:
    ///   - option: the option the names come from (`--columns`), for the message.
    ///   - command: the command's name, for the message.
    ///   - canRename: whether the option's items take `as NAME` (the message then suggests it).
    /// - Throws: ``UsageError/invalidValue(option:value:reason:suggestion:command:)`` naming the
    ///   first offending item, its position (1-based, in output order) and the clash.
    /// - Complexity: O(*n*) for *n* columns (one dictionary).
    static func check(_ columns: [Column], option: String, command: String, canRename: Bool = true) throws(UsageError) {
        var first = [String: Int]()
        for (index, column) in columns.enumerated() {
            let key = column.name.lowercased()
            for (reserved, content) in [("ticker", Content.ticker), ("date", Content.date)]
            where key == reserved && column.content != content {
                throw UsageError.invalidValue(
                    option: option, value: column.item,
                    reason: "column \(index + 1) would be named '\(column.name)', which is reserved for the \(reserved) column"
                        + (canRename ? "; choose another name with 'as NAME'" : ""),
                    suggestion: nil, command: command)
            }
            if let earlier = first[key] {
                throw UsageError.invalidValue(
                    option: option, value: column.item,
                    reason: "columns \(earlier + 1) ('\(columns[earlier].item)') and \(index + 1) would both be named "
                        + "'\(column.name)'; output names must be unique: drop one" + (canRename ? " or rename it with 'as NAME'" : ""),
                    suggestion: nil, command: command)
            }
            first[key] = index
        }
    }
}
