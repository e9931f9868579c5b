import Colonnade
import DataLinkFormat

/// Decoded responses taken in request order into final columns: each one's rows are copied from
/// the decoder's buffers to the end of a streaming `ColumnAssembler`'s columns while the responses
/// concatenate (the same columns, each ticker in one run), so a fetch writes each value once
/// before the merge with the stored table, as a fresh import does (ARCHITECTURE.md, *Fetching*).
/// From the first response that does not concatenate on, responses are kept as tables of their
/// own; `tables()` hands back the columns and those, in request order, for `QuoteTable.merging`,
/// which gives what merging one table per response gave.
///
/// Not thread-safe: responses are added one at a time, in order.
package final class IncomingRows {
    private var assembler: ColumnAssembler?
    private var appending = true
    private var kept: [QuoteTable] = []

    package init() {}

    /// Takes the next response's rows (`source` names it, for a table of its own).
    package func add(_ rows: DecodedRows, source: String) {
        guard rows.rowCount > 0 else { return }
        if appending {
            if assembler == nil {
                assembler = ColumnAssembler(streamingValueNames: rows.valueNames, dateColumnName: rows.dateColumnName, totalBytes: nil)
            }
            if let assembler, assembler.append(rows, bytes: 0) { return }
            appending = false
        }
        kept.append(rows.makeTable(source: source))
    }

    /// The rows taken, as tables in request order: the assembled columns, then the responses
    /// kept whole. Call once, after the last `add`.
    package func tables() -> [QuoteTable] {
        var tables: [QuoteTable] = []
        if let assembler, assembler.appendedRowCount > 0 { tables.append(assembler.finishAppending()) }
        assembler = nil
        tables.append(contentsOf: kept)
        kept = []
        return tables
    }
}
