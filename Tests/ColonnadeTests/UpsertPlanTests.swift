import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// `upsert(contentsOf:threads:)` against a dictionary model: new tickers, overlapping days,
/// replaced days (the incoming row wins whole: columns it lacks become null), columns only some
/// tables have, and many tables holding one ticker (the sorted merge), for 1 to 4 threads.
@Suite struct UpsertPlanTests {
    typealias Model = [String: [Int32: [String: Double?]]]

    static let names = ["Open", "High", "Low", "Close", "Volume"]

    /// A table of random tickers from `symbols`, random days, a random subset of the columns.
    static func randomPart(_ rng: inout SplitMix64, symbols: Int, days dayRange: Range<Int> = 0 ..< 80) -> QuoteTable {
        let columns = names.filter { _ in !rng.chance(3) }
        let schema = columns.map { ColumnDescriptor(name: $0, type: .float64) }
        var entries: [TickerEntry] = []
        var dates: [Int32] = []
        var values = [[Double?]](repeating: [], count: columns.count)
        var used = Set<Int>()
        for _ in 0 ..< 1 + rng.below(4) {
            let s = rng.below(symbols)
            guard used.insert(s).inserted else { continue }
            let days = Set((0 ..< rng.below(40)).map { _ in Int32(dayRange.lowerBound + rng.below(dayRange.count)) }).sorted()
            entries.append(TickerEntry(symbol: "S\(s)", firstRow: dates.count, rowCount: days.count))
            for d in days {
                dates.append(d)
                for c in columns.indices { values[c].append(rng.chance(6) ? nil : Double(bitPattern: rng.next() & 0x7FEF_FFFF_FFFF_FFFF)) }
            }
        }
        return try! QuoteTable(schema: schema, columns: values.map { .float64(Column($0)) }, dates: Column(dates), tickers: entries)
    }

    static func apply(_ part: QuoteTable, to model: inout Model, order: inout [String]) {
        for t in part.tickers {
            if model[t.symbol] == nil { order.append(t.symbol) }
            for r in t.rows {
                var row: [String: Double?] = [:]
                for (c, d) in part.schema.enumerated() { row[d.name] = part.columns[c].doubleValue(at: r) }
                model[t.symbol, default: [:]][part.dates[r]] = row
            }
            if model[t.symbol] == nil { model[t.symbol] = [:] }
        }
    }

    @Test(arguments: [UInt64(1), 2, 3, 4])
    func batchUpsertMatchesADictionaryModelForOneToFourThreads(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let base = Self.randomPart(&rng, symbols: 6)
        var model = Model(), order = [String]()
        Self.apply(base, to: &model, order: &order)
        let parts = (0 ..< 2 + rng.below(8)).map { _ in Self.randomPart(&rng, symbols: 9) }
        for p in parts { Self.apply(p, to: &model, order: &order) }
        var results: [QuoteTable] = []
        for threads in 1 ... 4 {
            var t = base
            t.upsert(contentsOf: parts, threads: threads)
            results.append(t)
            #expect(t.tickers.map(\.symbol) == order, "threads \(threads)")
            #expect(t.hasSummaries)
            for (symbol, days) in model {
                let entry = try #require(t.ticker(symbol))
                let sortedDays = days.keys.sorted()
                #expect(entry.rows.map { t.dates[$0] } == sortedDays, "\(symbol)")
                for (i, day) in sortedDays.enumerated() {
                    for name in Self.names {
                        let expected = days[day]![name] ?? nil
                        let actual = t.column(named: name).flatMap { $0.doubleValue(at: entry.firstRow + i) }
                        #expect(actual?.bitPattern == expected?.bitPattern, "\(symbol) \(day) \(name)")
                    }
                }
            }
        }
        #expect(results.allSatisfy { $0 == results[0] })
    }

    /// Parts whose days mostly follow the earlier parts' (appends: each ticker's holders ascend,
    /// the plan's one-run-per-holder path), sometimes overlap them by a few days (the merge by
    /// date) or touch them on one day (replaced): against the model, for 1 and 2 threads.
    @Test(arguments: [UInt64(5), 6, 7, 8, 9, 10])
    func appendedDaysMatchTheModelWhetherTheyAscendOrOverlap(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let base = Self.randomPart(&rng, symbols: 6, days: 0 ..< 80)
        var model = Model(), order = [String]()
        Self.apply(base, to: &model, order: &order)
        var parts: [QuoteTable] = []
        var start = 80
        for _ in 0 ..< 3 + rng.below(10) {
            let overlap = rng.chance(3) ? 1 + rng.below(3) : 0  // 0: strictly after what came before
            let part = Self.randomPart(&rng, symbols: 8, days: start - overlap ..< start + 5)
            parts.append(part)
            Self.apply(part, to: &model, order: &order)
            start += 5
        }
        for threads in [1, 2] {
            var t = base
            t.upsert(contentsOf: parts, threads: threads)
            #expect(t.tickers.map(\.symbol) == order, "threads \(threads)")
            for (symbol, days) in model {
                let entry = try #require(t.ticker(symbol))
                let sortedDays = days.keys.sorted()
                #expect(entry.rows.map { t.dates[$0] } == sortedDays, "\(symbol)")
                for (i, day) in sortedDays.enumerated() {
                    for name in Self.names {
                        let expected = days[day]![name] ?? nil
                        let actual = t.column(named: name).flatMap { $0.doubleValue(at: entry.firstRow + i) }
                        #expect(actual?.bitPattern == expected?.bitPattern, "\(symbol) \(day) \(name)")
                    }
                }
            }
        }
    }

    @Test func upsertIntoAnEmptyTableTakesTheTableKeepingTheDateColumnNameAndMetadata() throws {
        var rng = SplitMix64(seed: 9)
        var incoming = Self.randomPart(&rng, symbols: 4)
        incoming.metadata = ["source": "in", "extra": "x"]
        incoming.dateColumnName = "day"
        var general = QuoteTable(schema: [], metadata: ["source": "mine"])
        general.upsert(contentsOf: [incoming, QuoteTable()])  // the empty one is dropped: the fast path
        var reference = QuoteTable(schema: [ColumnDescriptor(name: "Zzz", type: .float64)], metadata: ["source": "mine"])
        reference.upsert(incoming)  // a schema: the general path
        #expect(general.metadata == ["source": "mine", "extra": "x"])
        #expect(general.dateColumnName == "Date")
        #expect(general.tickers == reference.tickers && general.dates == reference.dates)
        for d in incoming.schema { #expect(general.column(named: d.name) == reference.column(named: d.name)) }
        #expect(general.hasSummaries)
    }

    @Test func largeColumnsFromMappedPagesHoldValuesAndNulls() {
        var c = Column<Double>()
        c.reserveCapacity(300_000)
        var reference: [Double?] = []
        var rng = SplitMix64(seed: 4)
        while reference.count < 300_000 {
            if rng.chance(5) {
                let n = rng.below(500)
                c.appendNulls(n)
                reference += [Double?](repeating: nil, count: n)
            } else {
                let v = Double(rng.below(1 << 20))
                c.append(v)
                reference.append(v)
            }
        }
        c.withUnsafeBufferPointer { #expect(Int(bitPattern: $0.baseAddress!) % 64 == 0) }
        #expect(c == Column<Double>(reference))
        var d = c
        d.append(1)  // a copy on write of a mapped buffer
        #expect(d.count == c.count + 1 && d.value(at: 5) == c.value(at: 5))
    }

    /// Parts of one sorted table cut anywhere (a ticker continuing across the seam) concatenate
    /// to the table; a seam repeating a date is an upsert instead, the later part winning.
    @Test func partsCutMidTickerConcatenateToTheWhole() throws {
        var rng = SplitMix64(seed: 12)
        var whole = Self.randomPart(&rng, symbols: 5)
        whole.computeSummaries()
        for cut in 0 ... whole.rowCount {
            var parts = [Self.slice(whole, 0 ..< cut), Self.slice(whole, cut ..< whole.rowCount)]
            #expect(QuoteTable.merging(&parts, threads: 2) == whole, "cut \(cut)")
        }
        guard whole.rowCount > 1 else { return }
        var overlapping = [Self.slice(whole, 0 ..< 2), Self.slice(whole, 1 ..< whole.rowCount)]
        #expect(QuoteTable.merging(&overlapping) == whole)
    }

    /// Rows `rows` of `table` as a table of their own.
    static func slice(_ table: QuoteTable, _ rows: Range<Int>) -> QuoteTable {
        var entries: [TickerEntry] = []
        for t in table.tickers {
            let r = t.rows.clamped(to: rows)
            if !r.isEmpty { entries.append(TickerEntry(symbol: t.symbol, firstRow: r.lowerBound - rows.lowerBound, rowCount: r.count)) }
        }
        var dates = Column<Int32>()
        dates.append(contentsOf: table.dates, rows: rows)
        let columns = table.columns.map { c -> AnyColumn in
            guard case .float64(let d) = c else { preconditionFailure() }
            var out = Column<Double>()
            out.append(contentsOf: d, rows: rows)
            return .float64(out)
        }
        return try! QuoteTable(schema: table.schema, columns: columns, dates: dates, tickers: entries)
    }
}
