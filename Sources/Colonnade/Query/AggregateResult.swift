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
        /// The bucket's key as a number that orders like the buckets (see
        /// `AggregateGrouping.CalendarBucket`): a day number for date and week (the Monday).
        public var bucketKey: Int?
        /// The bucket as text: `2014`, `2014-03`, `2014-Q2`, `2014-03-07`; nil when not grouped by one.
        /// Formatted when read (from `bucketKey`), not when the group is made: a query of a million
        /// weekly bars formats only the labels it prints.
        public var bucketLabel: String? {
            get {
                if let labelOverride { return labelOverride }
                guard let bucketKind, let bucketKey else { return nil }
                return AggregateGrouping.CalendarBucket.text(ofKey: bucketKey, bucketKind)
            }
            set {
                labelOverride = newValue
                if newValue == nil { bucketKind = nil }
            }
        }
        /// The kind of `bucketKey`, from which `bucketLabel` is formatted.
        private var bucketKind: AggregateGrouping.CalendarBucket?
        /// A label set explicitly (nil: formatted from the key).
        private var labelOverride: String?
        /// One value per aggregate; nil where it has no value (sum, min, max, mean, first, last of
        /// no values; stddev of fewer than two).
        public var values: [Double?]

        init(ticker: String? = nil, year: Int? = nil, month: Int? = nil, values: [Double?]) {
            self.ticker = ticker
            self.year = year
            self.month = month
            self.values = values
        }

        /// The calendar bucket as text: `2014`, `2014-03`, `2014-Q2` or a day `2014-03-07`; nil
        /// when not grouped by one.
        public var bucketText: String? {
            if let bucketLabel { return bucketLabel }
            guard let year else { return nil }
            guard let month else { return String(year) }
            return String(year) + (month < 10 ? "-0" : "-") + String(month)
        }

        /// Sets the bucket fields from a key of `bucket`.
        mutating func setBucket(_ key: Int, _ bucket: AggregateGrouping.CalendarBucket) {
            bucketKey = key
            bucketKind = bucket
            labelOverride = nil
            switch bucket {
            case .year: year = key
            case .month:
                let m = (key % 100 + 100) % 100
                year = (key - m) / 100
                month = m
            case .quarter: year = (key - (key % 10 + 10) % 10) / 10
            case .date, .week: break
            }
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
