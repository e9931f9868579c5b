import Colonnade

/// `--adjusted` (filter, export, the shell's `.adjusted on`): `open`, `high`, `low`, `close` and
/// `volume` read their adjusted columns (`QuoteTable.adjustedView()`, docs/ADJUSTMENTS.md).
extension FilterCommand {
    /// The note every `--adjusted` answer gets on standard error.
    static let adjustedNote =
        "--adjusted: open, high, low, close and volume are adj_open, adj_high, adj_low, adj_close and "
        + "adj_volume (adjusted for splits and dividends) in every expression and column"

    /// `table` with the raw price and volume names reading the adjusted columns.
    /// - Throws: `CommandFailure` naming the option when the table has no (or only some) adjusted columns.
    static func adjustedTable(_ table: QuoteTable, option: String = "--adjusted") throws -> QuoteTable {
        do {
            return try table.adjustedView()
        } catch {
            let other = table.schema.map(\.identifier).filter { $0.hasSuffix("adj") || $0.hasPrefix("adj") }
            throw CommandFailure(
                "\(option): \(error.description)",
                hint: other.isEmpty
                    ? "'colonnade adjust' creates them from the raw prices, ex_dividend and split_ratio"
                    : "'colonnade adjust' creates WIKI's adjusted columns (\(other.joined(separator: ", ")) follow another vendor's rule)")
        }
    }

    /// The table header of a column `--adjusted` re-reads: `close (adjusted)`; other names unchanged.
    static func adjustedHeader(_ name: String) -> String {
        QuoteTable.adjustedMeanings.contains { $0.0 == name } ? "\(name) (adjusted)" : name
    }
}

extension ColumnSelection {
    /// The same selection with the value columns `--adjusted` re-reads marked in their headers
    /// (`close (adjusted)`), for the table format; CSV and JSON keep the plain names.
    func markingAdjusted(in table: QuoteTable) -> ColumnSelection {
        var copy = self
        for (k, source) in sources.enumerated() {
            guard case .value(let i) = source else { continue }
            copy.columns[k].name = FilterCommand.adjustedHeader(table.schema[i].identifier)
        }
        return copy
    }
}
