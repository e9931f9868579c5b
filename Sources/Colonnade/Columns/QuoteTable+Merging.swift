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
    /// part's column is released once copied); nil otherwise.
    static func concatenating(_ parts: inout [QuoteTable], threads: Int = 1) -> QuoteTable? {
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
            var table = try QuoteTable(schema: schema, columns: columns, dates: dates, tickers: tickers,
                                       dateColumnName: dateColumnName, metadata: metadata, checkDates: false)
            table.shrinkToFit()
            table.computeSummaries()
            return table
        } catch {
            preconditionFailure("concatenated an inconsistent table: \(error)")
        }
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
