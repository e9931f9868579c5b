/// Aggregates over a selection: one row overall, or one row per group that has matching rows.
public struct AggregateResult: Sendable, Equatable {
    /// One output row.
    public struct Row: Sendable, Equatable {
        /// The ticker symbol when grouped by ticker.
        public var ticker: String?
        /// The calendar year when grouped by year or month.
        public var year: Int?
        /// The month (1–12) when grouped by month.
        public var month: Int?
        /// One value per aggregate; nil where it has no value (sum, min, max, mean, first, last of
        /// no values; stddev of fewer than two).
        public var values: [Double?]

        init(ticker: String? = nil, year: Int? = nil, month: Int? = nil, values: [Double?]) {
            self.ticker = ticker
            self.year = year
            self.month = month
            self.values = values
        }

        /// The calendar bucket as text: `2014` or `2014-03`; nil when not grouped by one.
        public var bucketText: String? {
            guard let year else { return nil }
            guard let month else { return String(year) }
            return String(year) + (month < 10 ? "-0" : "-") + String(month)
        }
    }

    /// The aggregates, in order.
    public var aggregates: [Aggregate]
    /// How the rows are grouped.
    public var grouping: AggregateGrouping
    /// The rows: in ticker order, then by bucket ascending.
    public var rows: [Row]

    init(aggregates: [Aggregate], grouping: AggregateGrouping = .none, rows: [Row]) {
        self.aggregates = aggregates
        self.grouping = grouping
        self.rows = rows
    }
}
