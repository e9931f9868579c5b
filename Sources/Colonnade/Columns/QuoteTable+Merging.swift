/// Merging many decoded tables into one (an import of many files).
extension QuoteTable {
    /// Merges decoded tables: concatenation when they share a schema and have distinct tickers,
    /// else one upsert of all of them (`upsert(contentsOf:)`).
    package static func merging(_ parts: inout [QuoteTable]) -> QuoteTable {
        guard !parts.isEmpty else { return QuoteTable() }
        if parts.count > 1, let joined = concatenating(&parts) { return joined }
        var first = parts[0]
        parts[0] = QuoteTable()
        if parts.count == 1 {
            // A part merged before (a zip's chunks) already has them: one pass saved per column.
            if !first.hasSummaries { first.computeSummaries() }
            return first
        }
        first.upsert(contentsOf: Array(parts[1...]))
        parts.removeAll()
        return first
    }

    /// Parts with equal schemas, equal date column names, distinct tickers and Float64 columns,
    /// appended one column at a time (each part's column is released once copied); nil otherwise.
    static func concatenating(_ parts: inout [QuoteTable]) -> QuoteTable? {
        let schema = parts[0].schema, dateColumnName = parts[0].dateColumnName
        var seen = Set<String>()
        for part in parts {
            guard part.schema == schema, part.dateColumnName == dateColumnName else { return nil }
            for column in part.columns { guard case .float64 = column else { return nil } }
            for t in part.tickers { guard seen.insert(t.symbol).inserted else { return nil } }
        }
        let total = parts.reduce(0) { $0 + $1.rowCount }
        var tickers: [TickerEntry] = []
        var offset = 0
        for part in parts {
            for var t in part.tickers {
                t.firstRow += offset
                tickers.append(t)
            }
            offset += part.rowCount
        }
        var dates = Column<Int32>()
        dates.reserveCapacity(total)
        for i in parts.indices {
            dates.append(contentsOf: parts[i].dates, rows: 0 ..< parts[i].rowCount)
            parts[i].dates = Column()
        }
        var columns: [AnyColumn] = []
        for c in schema.indices {
            var column = Column<Double>()
            column.reserveCapacity(total)
            for i in parts.indices {
                guard case .float64(let part) = parts[i].columns[c] else { preconditionFailure("checked above") }
                column.append(contentsOf: part, rows: 0 ..< part.count)
                parts[i].columns[c] = .float64(Column())
            }
            columns.append(.float64(column))
        }
        var metadata: [String: String] = [:]
        for part in parts { metadata.merge(part.metadata) { old, _ in old } }
        parts = []
        do {
            var table = try QuoteTable(schema: schema, columns: columns, dates: dates, tickers: tickers,
                                       dateColumnName: dateColumnName, metadata: metadata, checkDates: false)
            table.shrinkToFit()
            table.computeSummaries()
            return table
        } catch {
            preconditionFailure("concatenated an inconsistent table: \(error)")
        }
    }
}
