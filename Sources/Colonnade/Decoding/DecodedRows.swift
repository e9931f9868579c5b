/// One decoded input's rows, still in the decoder's buffers, with the permutation that sorts
/// them: what `RowBuffers.makeRows` hands to `ColumnAssembler.place`, which copies them straight
/// into their slice of the final columns (a fresh import writes each value once before the file).
package struct DecodedRows: @unchecked Sendable {
    // Safe to send: the buffers are owned by this value alone once the decoder returns, and are
    // only read after that.

    /// The decoded rows, in input order.
    package let buffers: RowBuffers
    /// Input row numbers in table order (by ticker, then date), nil when the input already is.
    package let order: [Int32]?
    /// Whether `order` is the input reversed (one ticker's rows newest first, as a dataset_data
    /// response has them): copies then read backwards instead of gathering through `order`.
    package let orderIsReversal: Bool
    /// The ticker index of the rows in table order.
    package let tickers: [TickerEntry]
    /// The value columns' names, in buffer order.
    package let valueNames: [String]
    /// The date column's name.
    package let dateColumnName: String

    /// The number of rows.
    package var rowCount: Int { buffers.count }

    /// The rows as a table of their own, built as `RowBuffers.makeTable` builds it (for a piece a
    /// `ColumnAssembler` could not take); empties the buffers.
    package func makeTable(source: String) -> QuoteTable {
        do {
            return try buffers.makeTable(valueNames: valueNames, tickers: tickers, dateColumnName: dateColumnName, source: source)
        } catch {
            preconditionFailure("rows checked by makeRows failed to build: \(error)")
        }
    }
}
