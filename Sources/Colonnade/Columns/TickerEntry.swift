/// One ticker of a table: its symbol, free-form metadata, and where its rows are.
///
/// The ticker's *code* is its position in `QuoteTable.tickers`. Rows are grouped by ticker in code
/// order, so `firstRow` of each ticker is the sum of the row counts before it (the ticker index).
public struct TickerEntry: Sendable, Hashable {
    /// The symbol as users write it, for example `FDX` or `BRK.B`.
    public var symbol: String
    /// Metadata from the source, for example `["name": "FedEx Corporation (FDX) Prices, …"]`.
    public var metadata: [String: String]
    /// The first row of this ticker.
    public internal(set) var firstRow: Int
    /// The number of rows of this ticker.
    public internal(set) var rowCount: Int

    /// An entry; the table sets the row range.
    public init(symbol: String, metadata: [String: String] = [:], firstRow: Int = 0, rowCount: Int = 0) {
        self.symbol = symbol
        self.metadata = metadata
        self.firstRow = firstRow
        self.rowCount = rowCount
    }

    /// The rows of this ticker.
    public var rows: Range<Int> { firstRow ..< firstRow + rowCount }
}
