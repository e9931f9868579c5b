/// Merging many decoded tables into one (an import of many files).
extension QuoteTable {
    /// Merges decoded tables: concatenation when they share a schema and have distinct tickers,
    /// else one upsert of all of them (`upsert(contentsOf:)`). Columns are filled on up to
    /// `threads` threads; the result does not depend on it.
    package static func merging(_ parts: inout [QuoteTable], threads: Int = 1) -> QuoteTable {
        guard !parts.isEmpty else { return QuoteTable() }
        if parts.count > 1, let joined = concatenating(&parts, threads: threads) { return joined }
        var first = parts[0]
        parts[0] = QuoteTable()
        if parts.count == 1 {
            // A part merged before (a zip's chunks) already has them: one pass saved per column.
            if !first.hasSummaries { first.computeSummaries() }
            return first
        }
        first.upsert(contentsOf: Array(parts[1...]), threads: threads)
        parts.removeAll()
        return first
    }

    /// Parts with equal schemas, equal date column names, distinct tickers and Float64 columns,
    /// appended into columns allocated once at their final size, one column per worker (each
    /// part's column is released once copied); nil otherwise. A ticker may continue from the end
    /// of one part into the start of the next when its dates ascend across the seam (the pieces
    /// of one CSV cut at line ends).
    static func concatenating(_ parts: inout [QuoteTable], threads: Int = 1) -> QuoteTable? {
        let schema = parts[0].schema, dateColumnName = parts[0].dateColumnName
        for part in parts {
            guard part.schema == schema, part.dateColumnName == dateColumnName else { return nil }
            for column in part.columns { guard case .float64 = column else { return nil } }
        }
        guard let tickers = concatenatedIndex(parts) else { return nil }
        let total = parts.reduce(0) { $0 + $1.rowCount }
        var metadata: [String: String] = [:]
        for part in parts { metadata.merge(part.metadata) { old, _ in old } }
        // Column 0 is the dates; column c + 1 is value column c. Moved out of the parts, so each
        // is freed as soon as it is copied.
        var dateParts: [Column<Int32>] = []
        var valueParts = [[Column<Double>]](repeating: [], count: schema.count)
        for i in parts.indices {
            dateParts.append(parts[i].dates)
            for c in schema.indices {
                guard case .float64(let part) = parts[i].columns[c] else { preconditionFailure("checked above") }
                valueParts[c].append(part)
            }
        }
        parts = []
        var dates = Column<Int32>()
        var columns = [AnyColumn](repeating: .float64(Column()), count: schema.count)
        columns.withUnsafeMutableBufferPointer { out in
            valueParts.withUnsafeMutableBufferPointer { inputs in
                let slots = SharedPointer(base: out.baseAddress!), sources = SharedPointer(base: inputs.baseAddress!)
                withUnsafeMutablePointer(to: &dates) { datesSlot in
                    let dateOut = SharedPointer(base: datesSlot)
                    forEachChunk(schema.count + 1, threads: threads) { c, _ in
                        // Safe: each index is claimed by one worker only, and it touches only its
                        // own output slot and its own input list.
                        if c == 0 {
                            dateOut.base.pointee = concatenated(&dateParts, total: total)
                        } else {
                            slots.base[c - 1] = .float64(concatenated(&sources.base[c - 1], total: total))
                        }
                    }
                }
            }
        }
        do {
            var table = try QuoteTable(
                schema: schema, columns: columns, dates: dates, tickers: tickers,
                dateColumnName: dateColumnName, metadata: metadata, checkDates: false)
            table.shrinkToFit()
            table.computeSummaries()
            return table
        } catch {
            preconditionFailure("concatenated an inconsistent table: \(error)")
        }
    }

    /// The ticker index of `parts` one after another, or nil when a ticker appears twice other
    /// than continuing across a seam with ascending dates.
    private static func concatenatedIndex(_ parts: [QuoteTable]) -> [TickerEntry]? {
        concatenatedIndex(parts.map { ($0.tickers, $0.rowCount) }) { part, row in parts[part].dates[row] }
    }

    /// The ticker index of parts laid one after another, each given as its own ticker index
    /// (rows from 0) and row count, `date(part, row)` reading a part's dates; nil when a ticker
    /// appears twice other than continuing across a seam with ascending dates.
    package static func concatenatedIndex(
        _ parts: [(tickers: [TickerEntry], rowCount: Int)],
        date: (_ part: Int, _ row: Int) -> Int32
    ) -> [TickerEntry]? {
        var seen = Set<String>()
        var tickers: [TickerEntry] = []
        var offset = 0
        var lastDate: Int32?  // of the last row so far
        for (p, part) in parts.enumerated() {
            for (j, var t) in part.tickers.enumerated() {
                let localFirst = t.firstRow
                t.firstRow += offset
                if j == 0, t.rowCount > 0, let previous = tickers.last, previous.symbol == t.symbol, previous.rowCount > 0,
                    let lastDate, lastDate < date(p, localFirst)
                {
                    tickers[tickers.count - 1].rowCount += t.rowCount
                    tickers[tickers.count - 1].metadata.merge(t.metadata) { _, new in new }
                    continue
                }
                guard seen.insert(t.symbol).inserted else { return nil }
                tickers.append(t)
            }
            offset += part.rowCount
            if part.rowCount > 0 { lastDate = date(p, part.rowCount - 1) }
        }
        return tickers
    }

    /// `parts` one after another in a column allocated once; empties `parts`.
    private static func concatenated<T: ColumnElement>(_ parts: inout [Column<T>], total: Int) -> Column<T> {
        var out = Column<T>()
        out.reserveCapacity(total)
        for i in parts.indices {
            out.append(contentsOf: parts[i], rows: 0 ..< parts[i].count)
            parts[i] = Column()
        }
        parts = []
        return out
    }
}
