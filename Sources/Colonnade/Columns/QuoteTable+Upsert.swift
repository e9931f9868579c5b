extension QuoteTable {
    /// Merges `other` into this table as an upsert by (ticker, date).
    ///
    /// For each ticker of `other`, its rows are merged with the stored ones by date: a date present
    /// in both takes `other`'s row (a re-fetched day replaces the stored one — columns `other`
    /// lacks are null in it), new dates are inserted in order, and dates stay unique and ascending.
    /// Tickers `other` does not mention are untouched (their rows are copied as they are). New
    /// tickers are added after the existing ones; their metadata, and new metadata of existing
    /// tickers, is merged in. Columns only one side has are filled with nulls on the other; a
    /// column whose types differ becomes Float64.
    ///
    /// - Complexity: O(rows of both tables); block summaries are recomputed. To merge many tables,
    ///   use `upsert(contentsOf:)`, which copies the table once rather than once per table.
    public mutating func upsert(_ other: QuoteTable) {
        upsert(contentsOf: [other])
    }

    /// Merges several tables at once, as if `upsert(_:)` were called with each in order (so a later
    /// table's row wins over an earlier one's for the same ticker and date), in one pass.
    ///
    /// - Complexity: O(rows of all tables); tickers present in one table only are copied as whole
    ///   runs.
    public mutating func upsert(contentsOf others: [QuoteTable]) {
        let others = others.filter { $0.rowCount > 0 || !$0.tickers.isEmpty }
        guard !others.isEmpty else { return }
        let sources = [self] + others  // source 0 is this table

        // The merged schema: ours, then each other table's new columns.
        // Dictionaries, not searches: a wide input (thousands of columns) stays linear.
        var mergedSchema = schema
        var mergedIndex = [String: Int](minimumCapacity: schema.count)
        for (i, d) in schema.enumerated() { mergedIndex[d.identifier] = i }
        for other in others {
            for d in other.schema {
                if let i = mergedIndex[d.identifier] {
                    if mergedSchema[i].type != d.type { mergedSchema[i].type = .float64 }
                } else {
                    mergedIndex[d.identifier] = mergedSchema.count
                    mergedSchema.append(d)
                }
            }
        }

        // Tickers: ours first, then new ones in order of first appearance; per ticker, which
        // sources hold it, in order.
        var entries = tickers
        var codeOf = codeBySymbol
        var holders = [[(source: Int, rows: Range<Int>)]](repeating: [], count: tickers.count)
        for (code, t) in tickers.enumerated() where t.rowCount > 0 { holders[code].append((0, t.rows)) }
        for (s, other) in others.enumerated() {
            for t in other.tickers {
                let code: Int
                if let c = codeOf[t.symbol] {
                    code = Int(c)
                } else {
                    code = entries.count
                    codeOf[t.symbol] = Int32(code)
                    entries.append(TickerEntry(symbol: t.symbol))
                    holders.append([])
                }
                entries[code].metadata.merge(t.metadata) { _, new in new }
                if t.rowCount > 0 { holders[code].append((s + 1, t.rows)) }
            }
        }

        // The row plan: runs of rows from one source each.
        var runs: [(source: Int, start: Int, count: Int)] = []
        var planned = 0
        func emit(_ source: Int, _ start: Int, _ count: Int) {
            guard count > 0 else { return }
            planned += count
            if let last = runs.last, last.source == source, last.start + last.count == start {
                runs[runs.count - 1].count += count
            } else {
                runs.append((source, start, count))
            }
        }
        for code in entries.indices {
            let first = planned
            let held = holders[code]
            if held.count == 1 {
                emit(held[0].source, held[0].rows.lowerBound, held[0].rows.count)
            } else if held.count > 1 {
                for (source, row) in QuoteTable.mergeByDate(held, sources) { emit(source, row, 1) }
            }
            entries[code].firstRow = first
            entries[code].rowCount = planned - first
        }

        // Gather every column along the plan.
        var newDates = Column<Int32>()
        newDates.reserveCapacity(planned)
        for run in runs {
            newDates.append(contentsOf: sources[run.source].dates, rows: run.start ..< run.start + run.count)
        }
        let sourceIndexes = sources.map { source in
            Dictionary(source.schema.enumerated().map { ($1.identifier, $0) }, uniquingKeysWith: { first, _ in first })
        }
        let newColumns = mergedSchema.map { d in
            QuoteTable.gather(type: d.type, sources.indices.map { s in sourceIndexes[s][d.identifier].map { sources[s].columns[$0] } },
                              runs: runs, total: planned)
        }

        schema = mergedSchema
        columns = newColumns
        dates = newDates
        tickers = entries
        codeBySymbol = codeOf
        for other in others { for (k, v) in other.metadata where metadata[k] == nil { metadata[k] = v } }
        shrinkToFit()
        computeSummaries()
        InternalChecks.check(self, "after upsert")
    }

    /// One ticker's rows from several sources, merged by date; for equal dates the later source wins.
    private static func mergeByDate(_ held: [(source: Int, rows: Range<Int>)], _ sources: [QuoteTable]) -> [(Int, Int)] {
        var merged = held[0].rows.map { (held[0].source, $0) }
        for next in held.dropFirst() {
            let incoming = sources[next.source].dates
            var out = [(Int, Int)]()
            out.reserveCapacity(merged.count + next.rows.count)
            var i = 0, j = next.rows.lowerBound
            while i < merged.count || j < next.rows.upperBound {
                if j == next.rows.upperBound {
                    out.append(merged[i]); i += 1
                    continue
                }
                if i == merged.count {
                    out.append((next.source, j)); j += 1
                    continue
                }
                let a = sources[merged[i].0].dates[merged[i].1], b = incoming[j]
                if a < b {
                    out.append(merged[i]); i += 1
                } else {
                    if a == b { i += 1 }  // the later source replaces the day
                    out.append((next.source, j)); j += 1
                }
            }
            merged = out
        }
        return merged
    }

    private static func gather(type: ElementType, _ sourceColumns: [AnyColumn?],
                               runs: [(source: Int, start: Int, count: Int)], total: Int) -> AnyColumn {
        func typed<T: ColumnElement>(_ c: AnyColumn?, as _: T.Type) -> Column<T>? {
            guard let c else { return nil }
            return T.unwrap(c) ?? T.unwrap(.float64(c.convertedToFloat64()))
        }
        func build<T: ColumnElement>(_: T.Type) -> AnyColumn {
            let typedSources = sourceColumns.map { typed($0, as: T.self) }
            var out = Column<T>()
            out.reserveCapacity(total)
            for run in runs {
                if let src = typedSources[run.source] {
                    out.append(contentsOf: src, rows: run.start ..< run.start + run.count)
                } else {
                    out.appendNulls(run.count)
                }
            }
            return AnyColumn(out)
        }
        switch type {
        case .int32: return build(Int32.self)
        case .int64: return build(Int64.self)
        case .float32: return build(Float.self)
        case .float64: return build(Double.self)
        }
    }
}
