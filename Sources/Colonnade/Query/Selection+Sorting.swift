extension Selection {
    /// The matching rows ordered by `keys`, at most `limit` of them. With a limit this is a top-k
    /// (a heap of `limit` rows: O(n log k), no full sort); expressions are evaluated only at the
    /// matching rows (with their lookback). Null and NaN sort last; ties keep table order.
    /// - Throws: `QueryError` for an unknown column in a key.
    public func rows(sortedBy keys: [SortKey], limit: Int? = nil) throws(QueryError) -> [Int] {
        let rows = self.rows()
        if keys.isEmpty { return limit.map { Array(rows.prefix($0)) } ?? rows }
        let scratch = ExpressionScratch()
        // One Double per row and key; NaN stands for null.
        var columns = [[Double]]()
        let cache = SeriesCache()  // a recursive series in several keys is computed once
        for key in keys {
            switch key.value {
            case .expression(let e):
                columns.append(try ExpressionProgram(e, table: table, cache: cache).values(atRows: rows, scratch: scratch))
            case .date:
                columns.append(rows.map { Double(table.dates[$0]) })
            case .ticker:
                // Symbols compared as text: rank the numbers once.
                let order = table.tickers.indices.sorted { table.tickers[$0].symbol < table.tickers[$1].symbol }
                var rank = [Double](repeating: 0, count: table.tickers.count)
                for (r, number) in order.enumerated() { rank[number] = Double(r) }
                columns.append(rows.map { rank[Int(table.tickerNumber(ofRow: $0))] })
            }
        }
        let descending = keys.map(\.descending)
        // Whether position i (in `rows`) comes before position j.
        func before(_ i: Int, _ j: Int) -> Bool {
            for k in columns.indices {
                let a = columns[k][i], b = columns[k][j]
                if a.isNaN || b.isNaN {
                    if a.isNaN != b.isNaN { return b.isNaN }
                    continue
                }
                if a != b { return descending[k] ? a > b : a < b }
            }
            return i < j
        }
        let k = min(limit ?? rows.count, rows.count)
        if k <= 0 { return [] }
        if k == rows.count || k > rows.count / 4 {
            return rows.indices.sorted(by: before).prefix(k).map { rows[$0] }
        }
        // A max-heap (by `before`) of the best k seen so far: its root is the worst of them.
        var heap = [Int]()
        heap.reserveCapacity(k)
        func siftUp(_ i: Int) {
            var c = i
            while c > 0 {
                let p = (c - 1) / 2
                if before(heap[p], heap[c]) {
                    heap.swapAt(p, c)
                    c = p
                } else {
                    break
                }
            }
        }
        func siftDown(_ i: Int) {
            var p = i
            while true {
                let l = 2 * p + 1, r = l + 1
                var worst = p
                if l < heap.count && before(heap[worst], heap[l]) { worst = l }
                if r < heap.count && before(heap[worst], heap[r]) { worst = r }
                if worst == p { return }
                heap.swapAt(p, worst)
                p = worst
            }
        }
        for i in rows.indices {
            if heap.count < k {
                heap.append(i)
                siftUp(heap.count - 1)
            } else if before(i, heap[0]) {
                heap[0] = i
                siftDown(0)
            }
        }
        return heap.sorted(by: before).map { rows[$0] }
    }
}
