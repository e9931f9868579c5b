/// The groups of an aggregate answer sorted, filtered (`having`) and limited, as `--sort`,
/// `--having` and `--limit` do with `--by`.
///
///     let perTicker = try table.selectAll().aggregate(try Aggregate.parseList("avg(volume) as v", table: table), by: .ticker)
///     let top = try perTicker.having("v > 1e6").sorted(by: ["-v"]).prefix(10)
extension AggregateResult {
    /// One key to order groups by: an aggregate (by index) or a group key, ascending or not.
    public struct GroupSortKey: Sendable, Equatable {
        public enum Target: Sendable, Equatable {
            /// The aggregate at this index of `aggregates`.
            case aggregate(Int)
            /// The ticker key.
            case ticker
            /// The calendar bucket key.
            case bucket
        }

        public var target: Target
        public var descending: Bool

        public init(_ target: Target, descending: Bool = false) {
            self.target = target
            self.descending = descending
        }

        /// Resolves `text` (`-avg(volume)`, `n`, `ticker`, `week`) against aggregates and a grouping:
        /// an aggregate's `as` name or text (spaces ignored; `mean(…)` is `avg(…)`), `ticker`,
        /// the bucket's name, or `date` for a date or week bucket.
        /// - Throws: `QueryError` naming what could be sorted by.
        public static func parse(_ text: String, aggregates: [Aggregate], grouping: AggregateGrouping) throws(QueryError) -> GroupSortKey {
            var body = text.trimmingSpaces()
            let descending = body.hasPrefix("-")
            if descending { body = String(body.dropFirst()).trimmingSpaces() }
            func squeezed(_ s: String) -> String {
                var t = s.lowercased().filter { $0 != " " && $0 != "\t" }
                if t.hasPrefix("mean(") { t = "avg(" + t.dropFirst(5) }
                return t
            }
            let wanted = squeezed(body)
            if let i = aggregates.firstIndex(where: { $0.name?.lowercased() == wanted })
                ?? aggregates.firstIndex(where: { squeezed($0.text) == wanted })
            {
                return GroupSortKey(.aggregate(i), descending: descending)
            }
            if wanted == "count", let i = aggregates.firstIndex(where: { $0.function == .count && $0.argument == nil }) {
                return GroupSortKey(.aggregate(i), descending: descending)
            }
            if wanted == "ticker" && grouping.byTicker { return GroupSortKey(.ticker, descending: descending) }
            if let b = grouping.bucket, wanted == b.rawValue || (wanted == "date" && b == .week) {
                return GroupSortKey(.bucket, descending: descending)
            }
            let names = aggregates.map(\.outputName) + grouping.keyNames
            throw QueryError(
                "cannot sort the groups by '\(body)'; sort by an aggregate or a key: \(names.joined(separator: ", "))",
                suggestions: Suggestions.closest(to: body, among: names))
        }
    }

    /// The groups ordered by `keys`, ties broken by the group keys (the order they come in).
    /// Nulls sort last in either direction.
    public func sorted(by keys: [GroupSortKey]) -> AggregateResult {
        guard !keys.isEmpty else { return self }
        func compare(_ a: Int, _ b: Int, _ key: GroupSortKey) -> Int {
            switch key.target {
            case .aggregate(let i):
                let x = value(row: a, aggregate: i).flatMap { $0.isNaN ? nil : $0 }
                let y = value(row: b, aggregate: i).flatMap { $0.isNaN ? nil : $0 }
                switch (x, y) {
                case (nil, nil): return 0
                case (nil, _): return 1  // nulls last, whatever the direction
                case (_, nil): return -1
                case let (x?, y?): return x == y ? 0 : (x < y) != key.descending ? -1 : 1
                }
            case .ticker:
                let x = ticker(row: a) ?? "", y = ticker(row: b) ?? ""
                return x == y ? 0 : (x < y) != key.descending ? -1 : 1
            case .bucket:
                let x = bucketKey(row: a) ?? 0, y = bucketKey(row: b) ?? 0
                return x == y ? 0 : (x < y) != key.descending ? -1 : 1
            }
        }
        let order = (0 ..< count).sorted { l, r in
            for key in keys {
                let c = compare(l, r, key)
                if c != 0 { return c < 0 }
            }
            return l < r
        }
        return gathered(order)
    }

    /// The groups ordered by the keys written as text (see `GroupSortKey.parse`).
    public func sorted(by keys: [String]) throws(QueryError) -> AggregateResult {
        var parsed = [GroupSortKey]()
        for k in keys { parsed.append(try GroupSortKey.parse(k, aggregates: aggregates, grouping: grouping)) }
        return sorted(by: parsed)
    }

    /// The first `n` groups.
    public func prefix(_ n: Int) -> AggregateResult {
        n >= count ? self : gathered(0 ..< Swift.max(0, n))
    }

    /// The groups for which `expression` holds. It reads each aggregate as a column named by its
    /// output name (`n` for `count(*) as n`, `"avg(volume)"` quoted), the group's ticker as
    /// `ticker` and its bucket's first day as `date`; the query language's rules apply (a null
    /// never matches).
    /// - Throws: `QueryError` from the parser, or when the aggregates' names cannot be columns.
    public func having(_ expression: String) throws(QueryError) -> AggregateResult {
        // The groups as a small table, ordered by ticker then bucket (the table's invariant).
        var tickerIndex = [String: Int]()
        for r in 0 ..< count where tickerIndex[ticker(row: r) ?? ""] == nil { tickerIndex[ticker(row: r) ?? ""] = tickerIndex.count }
        let order = (0 ..< count).sorted {
            (tickerIndex[ticker(row: $0) ?? ""] ?? 0, bucketKey(row: $0) ?? 0, $0) < (
                tickerIndex[ticker(row: $1) ?? ""] ?? 0, bucketKey(row: $1) ?? 0, $1
            )
        }
        let schema = aggregates.map { ColumnDescriptor(name: $0.outputName, type: .float64) }
        let columns = aggregates.indices.map { i in
            AnyColumn(Column<Double>(order.map { value(row: $0, aggregate: i) }))
        }
        let dates = Column<Int32>(order.map { bucketKey(row: $0).map { AggregateResult.firstDay(ofKey: $0, grouping.bucket) } ?? 0 })
        var tickers = [TickerEntry]()
        var start = 0
        for (k, i) in order.enumerated() {
            let symbol = ticker(row: i) ?? ""
            if k + 1 == order.count || (ticker(row: order[k + 1]) ?? "") != symbol {
                tickers.append(TickerEntry(symbol: symbol, firstRow: start, rowCount: k + 1 - start))
                start = k + 1
            }
        }
        let table: QuoteTable
        do {
            table = try QuoteTable(schema: schema, columns: columns, dates: dates, tickers: tickers, dateColumnName: "date")
        } catch {
            throw QueryError("the aggregates cannot be filtered by name: \(error); rename them with 'as'")
        }
        let kept = try table.select(where: expression).rows()
        var keep = [Bool](repeating: false, count: count)
        for r in kept { keep[order[r]] = true }
        return gathered((0 ..< count).filter { keep[$0] })
    }

    /// The first day of a bucket key (the day of a date or week key).
    static func firstDay(ofKey key: Int, _ bucket: AggregateGrouping.CalendarBucket?) -> Int32 {
        switch bucket {
        case nil: return 0
        case .date?, .week?: return Int32(clamping: key)
        case .year?: return Day.days(year: key, month: 1, day: 1) ?? 0
        case .month?:
            let m = (key % 100 + 100) % 100
            return Day.days(year: (key - m) / 100, month: m, day: 1) ?? 0
        case .quarter?:
            let q = (key % 10 + 10) % 10
            return Day.days(year: (key - q) / 10, month: (q - 1) * 3 + 1, day: 1) ?? 0
        }
    }
}
