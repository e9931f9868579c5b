/// The rows of a table that matched a predicate.
///
///     let hits = try table.select(where: "80 < high < 83 and 78 < low < 82")
///     hits.count                                   // matching rows
///     hits.rows(limit: 10)                         // row numbers, in ticker/date order
///     try hits.aggregate([.count, .sum("close")], byTicker: true)
public struct Selection: Sendable {
    /// The table the rows belong to.
    public let table: QuoteTable
    /// One bit per table row: set where the predicate holds.
    public let mask: Bitmask
    /// The number of matching rows.
    public let count: Int
    /// The matching rows, ascending, when the selection was made from a list of them (an as-of
    /// screen's, at most one a ticker): aggregates read them instead of passing over the mask.
    let knownRows: [Int]?

    /// A selection of the rows set in `mask`.
    /// - Precondition: the mask covers every row of the table.
    public init(table: QuoteTable, mask: Bitmask) {
        precondition(mask.count == table.rowCount, "mask does not cover the table")
        self.table = table
        self.mask = mask
        self.count = mask.nonzeroBitCount
        self.knownRows = nil
    }

    /// A selection of the rows set in `mask`, whose number the caller knows (no pass over the
    /// mask to count them).
    /// - Precondition: the mask covers every row of the table and has `count` bits set.
    package init(table: QuoteTable, mask: Bitmask, count: Int) {
        precondition(mask.count == table.rowCount, "mask does not cover the table")
        assert(mask.nonzeroBitCount == count, "count does not match the mask")
        self.table = table
        self.mask = mask
        self.count = count
        self.knownRows = nil
    }

    /// A selection of `rows` (ascending, distinct), whose bits `mask` has set and no others.
    /// - Precondition: the mask covers every row of the table and has exactly `rows` set.
    init(table: QuoteTable, mask: Bitmask, rows: [Int]) {
        precondition(mask.count == table.rowCount, "mask does not cover the table")
        assert(mask.nonzeroBitCount == rows.count && rows.allSatisfy { mask[$0] }, "rows do not match the mask")
        self.table = table
        self.mask = mask
        self.count = rows.count
        self.knownRows = rows
    }

    /// The matching row numbers in table order (ticker by ticker, dates ascending), at most `limit`.
    public func rows(limit: Int? = nil) -> [Int] {
        var out = [Int]()
        out.reserveCapacity(min(limit ?? count, count))
        let cap = limit ?? Int.max
        guard cap > 0 else { return [] }
        mask.forEachSetRow { row in
            out.append(row)
            return out.count < cap
        }
        return out
    }

    /// The matching rows of each ticker that has any: (ticker number, row count).
    public func countsByTicker() -> [(ticker: Int32, count: Int)] {
        table.tickers.enumerated().compactMap { number, t in
            let n = mask.nonzeroBitCount(in: t.rows)
            return n > 0 ? (Int32(number), n) : nil
        }
    }
}

extension QuoteTable {
    /// The rows matching a predicate written as text, for example
    /// `80 < high < 83 and 78 < low < 82 and ticker in (FDX, AAPL) and date >= 2005-01-01`.
    ///
    /// - Throws: `QueryError` with the position of a syntax error or an unknown column.
    /// - Complexity: O(rows) kernel work at most, usually far less: ticker and date terms cost two
    ///   binary searches per ticker, and block summaries skip or fill whole blocks.
    public func select(where expression: String, options: QueryOptions = QueryOptions()) throws(QueryError) -> Selection {
        try select(QueryParser(table: self).parse(expression), options: options)
    }

    /// The rows matching a predicate built in Swift.
    public func select(_ predicate: RowPredicate, options: QueryOptions = QueryOptions()) throws(QueryError) -> Selection {
        let plan = try plan(predicate, options: options)
        plan.prepareCrossTicker(threads: options.effectiveThreads)
        let evaluator = Evaluator(rowCount: rowCount, columns: columns, options: options)
        return Selection(table: self, mask: evaluator.mask(plan, threads: options.effectiveThreads))
    }

    /// Every row.
    public func selectAll() -> Selection {
        Selection(table: self, mask: Bitmask(count: rowCount, allSet: true))
    }
}
