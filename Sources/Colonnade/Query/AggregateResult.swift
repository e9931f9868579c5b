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
    public private(set) var aggregates: [Aggregate]
    /// How the rows are grouped.
    public private(set) var grouping: AggregateGrouping
    /// The number of rows: groups with matching rows (one overall).
    public private(set) var count: Int

    // The rows are stored by column (a million weekly bars are a few arrays, not a million
    // arrays): `Row`s are made only when asked for (`rows`, `subscript`).

    /// The symbols `tickerNumbers` index; empty unless grouped by ticker.
    private var symbols: [String]
    /// Each row's ticker, as an index into `symbols`; empty unless grouped by ticker.
    private var tickerNumbers: [Int32]
    /// Each row's bucket key; empty unless grouped by a calendar bucket.
    private var keys: [Int]
    /// The values, aggregate after aggregate: row `r` of aggregate `a` at `a * count + r`.
    private var values: [Double]
    /// Where an aggregate has no value (same layout as `values`).
    private var isNull: [Bool]

    /// The rows, in ticker order, then by bucket ascending (unless sorted). Made on each call:
    /// for many groups, read by row number (``value(row:aggregate:)``, ``ticker(row:)``,
    /// ``bucketKey(row:)``).
    public var rows: [Row] { (0 ..< count).map { self[$0] } }

    /// Row `row` (0 ..< `count`).
    public subscript(row: Int) -> Row {
        var r = Row(values: aggregates.indices.map { value(row: row, aggregate: $0) })
        r.ticker = ticker(row: row)
        if let kind = grouping.bucket, let key = bucketKey(row: row) { r.setBucket(key, kind) }
        return r
    }

    /// The value of aggregate `aggregate` in row `row`; nil where it has none.
    public func value(row: Int, aggregate: Int) -> Double? {
        let i = aggregate * count + row
        return isNull[i] ? nil : values[i]
    }

    /// The ticker of row `row`, when grouped by ticker.
    public func ticker(row: Int) -> String? {
        tickerNumbers.isEmpty ? nil : symbols[Int(tickerNumbers[row])]
    }

    /// The bucket key of row `row` (see ``Row/bucketKey``), when grouped by a calendar bucket.
    public func bucketKey(row: Int) -> Int? {
        keys.isEmpty ? nil : keys[row]
    }

    /// The bucket of row `row` as text (see ``Row/bucketText``).
    public func bucketText(row: Int) -> String? {
        guard let kind = grouping.bucket, let key = bucketKey(row: row) else { return nil }
        return AggregateGrouping.CalendarBucket.text(ofKey: key, kind)
    }

    init(aggregates: [Aggregate], grouping: AggregateGrouping = .none, rows: [Row]) {
        self.aggregates = aggregates
        self.grouping = grouping
        count = rows.count
        let byTicker = rows.contains { $0.ticker != nil }
        symbols = byTicker ? rows.map { $0.ticker ?? "" } : []
        tickerNumbers = byTicker ? rows.indices.map { Int32(truncatingIfNeeded: $0) } : []
        keys = grouping.bucket == nil ? [] : rows.map { $0.bucketKey ?? 0 }
        values = aggregates.indices.flatMap { a in rows.map { $0.values[a] ?? 0 } }
        isNull = aggregates.indices.flatMap { a in rows.map { $0.values[a] == nil } }
    }

    /// A result of `count` rows whose columns `fill` writes: each ticker number (when grouped by
    /// ticker; an index into `symbols`), each bucket key (when grouped by a bucket), and the
    /// values and nulls, aggregate after aggregate. `fill` must initialize every element.
    init(
        aggregates: [Aggregate], grouping: AggregateGrouping, symbols: [String], count: Int,
        fill: (
            _ tickerNumbers: UnsafeMutablePointer<Int32>?, _ keys: UnsafeMutablePointer<Int>?,
            _ values: UnsafeMutablePointer<Double>, _ isNull: UnsafeMutablePointer<Bool>
        ) -> Void
    ) {
        self.aggregates = aggregates
        self.grouping = grouping
        self.count = count
        self.symbols = grouping.byTicker ? symbols : []
        let cells = count * aggregates.count
        var tickerNumbers = [Int32](), keys = [Int](), values = [Double](), isNull = [Bool]()
        values = [Double](unsafeUninitializedCapacity: cells) { v, vn in
            isNull = [Bool](unsafeUninitializedCapacity: cells) { n, nn in
                tickerNumbers = [Int32](unsafeUninitializedCapacity: grouping.byTicker ? count : 0) { t, tn in
                    keys = [Int](unsafeUninitializedCapacity: grouping.bucket == nil ? 0 : count) { k, kn in
                        // Non-nil when the capacity is not 0 (`cells` is 0 only without rows or aggregates).
                        if let vb = v.baseAddress, let nb = n.baseAddress {
                            fill(grouping.byTicker ? t.baseAddress : nil, grouping.bucket == nil ? nil : k.baseAddress, vb, nb)
                        } else if count > 0 {
                            var value = 0.0, null = false
                            fill(grouping.byTicker ? t.baseAddress : nil, grouping.bucket == nil ? nil : k.baseAddress, &value, &null)
                        }
                        kn = grouping.bucket == nil ? 0 : count
                    }
                    tn = grouping.byTicker ? count : 0
                }
                nn = cells
            }
            vn = cells
        }
        self.tickerNumbers = tickerNumbers
        self.keys = keys
        self.values = values
        self.isNull = isNull
    }

    /// The rows at `indices`, in that order.
    func gathered(_ indices: some Collection<Int>) -> AggregateResult {
        var result = self
        let n = indices.count
        result.count = n
        if !tickerNumbers.isEmpty { result.tickerNumbers = indices.map { tickerNumbers[$0] } }
        if !keys.isEmpty { result.keys = indices.map { keys[$0] } }
        result.values.removeAll(keepingCapacity: false)
        result.isNull.removeAll(keepingCapacity: false)
        result.values.reserveCapacity(n * aggregates.count)
        result.isNull.reserveCapacity(n * aggregates.count)
        for a in aggregates.indices {
            let base = a * count
            for i in indices {
                result.values.append(values[base + i])
                result.isNull.append(isNull[base + i])
            }
        }
        return result
    }

    /// Equal when the aggregates, the grouping and every row are (a NaN value is never equal, as
    /// in `[Double?]`).
    public static func == (a: AggregateResult, b: AggregateResult) -> Bool {
        guard a.aggregates == b.aggregates, a.grouping == b.grouping, a.count == b.count else { return false }
        for r in 0 ..< a.count {
            guard a.ticker(row: r) == b.ticker(row: r), a.bucketKey(row: r) == b.bucketKey(row: r) else { return false }
            for k in a.aggregates.indices where a.value(row: r, aggregate: k) != b.value(row: r, aggregate: k) { return false }
        }
        return true
    }
}
