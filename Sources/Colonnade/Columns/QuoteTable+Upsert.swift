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
    /// - Complexity: O(rows of both tables); block summaries are recomputed.
    public mutating func upsert(_ other: QuoteTable) {
        guard other.rowCount > 0 || !other.tickers.isEmpty else { return }

        // The merged schema: ours, then other's new columns.
        var mergedSchema = schema
        for d in other.schema {
            if let i = mergedSchema.firstIndex(where: { $0.identifier == d.identifier }) {
                if mergedSchema[i].type != d.type { mergedSchema[i].type = .float64 }
            } else {
                mergedSchema.append(d)
            }
        }

        // The row plan: runs of rows from self (source 0) or other (source 1).
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
        var entries = tickers
        var otherBySymbol = [String: Int]()
        for (i, t) in other.tickers.enumerated() { otherBySymbol[t.symbol] = i }
        for t in other.tickers where codeBySymbol[t.symbol] == nil {
            entries.append(TickerEntry(symbol: t.symbol, metadata: [:]))
        }
        var next = 0
        self.dates.withUnsafeBufferPointer { mine in
            other.dates.withUnsafeBufferPointer { theirs in
                for code in entries.indices {
                    let symbol = entries[code].symbol
                    let ours = code < tickers.count ? tickers[code].rows : 0 ..< 0
                    if let oi = otherBySymbol[symbol] {
                        let theirsRange = other.tickers[oi].rows
                        entries[code].metadata.merge(other.tickers[oi].metadata) { _, new in new }
                        var a = ours.lowerBound, b = theirsRange.lowerBound
                        while a < ours.upperBound || b < theirsRange.upperBound {
                            if b == theirsRange.upperBound || (a < ours.upperBound && mine[a] < theirs[b]) {
                                emit(0, a, 1); a += 1
                            } else {
                                if a < ours.upperBound && mine[a] == theirs[b] { a += 1 }
                                emit(1, b, 1); b += 1
                            }
                        }
                    } else {
                        emit(0, ours.lowerBound, ours.count)
                    }
                    entries[code].firstRow = next
                    entries[code].rowCount = planned - next
                    next = planned
                }
            }
        }

        // Gather every column along the plan.
        var newDates = Column<Int32>()
        newDates.reserveCapacity(next)
        for run in runs {
            newDates.append(contentsOf: run.source == 0 ? dates : other.dates, rows: run.start ..< run.start + run.count)
        }
        var newColumns = [AnyColumn]()
        for d in mergedSchema {
            let mine = columnIndex(forIdentifier: d.identifier).map { columns[$0] }
            let theirs = other.columnIndex(forIdentifier: d.identifier).map { other.columns[$0] }
            newColumns.append(QuoteTable.gather(type: d.type, mine, theirs, runs: runs, total: next))
        }

        schema = mergedSchema
        columns = newColumns
        dates = newDates
        tickers = entries
        codeBySymbol = [:]
        for (i, t) in entries.enumerated() { codeBySymbol[t.symbol] = Int32(i) }
        for (k, v) in other.metadata where metadata[k] == nil { metadata[k] = v }
        shrinkToFit()
        computeSummaries()
        InternalChecks.check(self, "after upsert")
    }

    private func columnIndex(forIdentifier identifier: String) -> Int? {
        schema.firstIndex { $0.identifier == identifier }
    }

    private static func gather(type: ElementType, _ a: AnyColumn?, _ b: AnyColumn?,
                               runs: [(source: Int, start: Int, count: Int)], total: Int) -> AnyColumn {
        func typed<T: ColumnElement>(_ c: AnyColumn?, as _: T.Type) -> Column<T>? {
            guard let c else { return nil }
            return T.unwrap(c) ?? T.unwrap(.float64(c.convertedToFloat64()))
        }
        func build<T: ColumnElement>(_: T.Type) -> AnyColumn {
            let sources = [typed(a, as: T.self), typed(b, as: T.self)]
            var out = Column<T>()
            out.reserveCapacity(total)
            for run in runs {
                if let src = sources[run.source] {
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
