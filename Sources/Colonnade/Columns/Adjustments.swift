import Foundation

// WIKI's rule for adjusted prices (docs/ADJUSTMENTS.md, which says how it was established on the
// real WIKI fixtures). For a ticker's rows in date order, with raw `close`, split ratio `s` (1 when
// none or null) and dividend `D` (0 when none or null), each event day t contributes
//
//     f_t = close_t / ((close_t + D_t) · s_t)
//
// (a row with no close contributes nothing: its dividend and split are ignored). Day i's price
// factor is `anchor · Π_{t>i} f_t`, its volume factor `Π_{t>i} s_t`; the anchor is the newest
// row's `adj_close / close` when the table has adjusted values, else 1. Every function below uses
// exactly this arithmetic, in this order, so the generator, `adjust` and `fetch --update` agree
// bit for bit.

/// WIKI's adjustment rule: the one place its arithmetic is written.
public enum AdjustmentRule {
    /// The relative tolerance of the check (`verify --adjustments`): the vendor rounds its
    /// adjusted values to 11–15 decimals, which on the real fixtures leaves at most 1e-11.
    public static let defaultTolerance = 1e-6

    /// The price factor event day t contributes, `close / ((close + dividend) · split)`, or nil
    /// when the row contributes none: no close, or a factor that is not a positive finite number
    /// (a zero or negative close, `close + dividend` of 0).
    ///
    /// - Parameters:
    ///   - close: the raw close, nil for a null.
    ///   - dividend: the ex-dividend amount, nil for a null (taken as 0).
    ///   - split: the split ratio, nil for a null (taken as 1); a ratio that is not a positive
    ///     finite number is taken as 1.
    @inline(__always)
    public static func eventFactor(close: Double?, dividend: Double?, split: Double?) -> Double? {
        guard let close else { return nil }
        let f = close / ((close + (dividend ?? 0)) * splitRatio(split))
        return f.isFinite && f > 0 ? f : nil
    }

    /// The split ratio a row counts with: 1 for a null or a value that is not a positive finite number.
    @inline(__always)
    public static func splitRatio(_ split: Double?) -> Double {
        guard let split, split.isFinite, split > 0 else { return 1 }
        return split
    }

    /// The identifiers of the columns the rule reads, in WIKI's order.
    public static let rawIdentifiers = ["open", "high", "low", "close", "volume", "ex_dividend", "split_ratio"]
    /// The identifiers of the adjusted columns the rule writes, in WIKI's order.
    public static let adjustedIdentifiers = ["adj_open", "adj_high", "adj_low", "adj_close", "adj_volume"]
}

/// Why the rule cannot be applied to a table.
public enum AdjustmentError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The table lacks raw or event columns the rule reads (identifiers). `otherAdjusted` lists
    /// the table's columns that look adjusted by another vendor's rule (`closeadj`), left alone.
    case missingColumns([String], otherAdjusted: [String])
    /// The table has the raw and event columns but no adjusted ones, so there is nothing to check.
    case noAdjustedColumns
    /// Only some of the adjusted columns exist (identifiers of those missing).
    case incompleteAdjustedColumns(missing: [String])
    /// Tickers asked for that the table does not hold.
    case unknownTickers([String])

    public var description: String {
        switch self {
        case .missingColumns(let names, let other):
            "the table has no \(names.joined(separator: ", ")) column\(names.count == 1 ? "" : "s"): adjusted prices are computed from "
                + "the raw prices, ex_dividend and split_ratio (WIKI's columns)"
                + (other.isEmpty
                    ? "" : "; its adjusted columns \(other.joined(separator: ", ")) follow another vendor's rule and are left alone")
        case .noAdjustedColumns:
            "the table has no adjusted columns (adj_open, adj_high, adj_low, adj_close, adj_volume)"
        case .incompleteAdjustedColumns(let missing):
            "the table has only some adjusted columns: \(missing.joined(separator: ", ")) missing"
        case .unknownTickers(let t):
            "no such ticker\(t.count == 1 ? "" : "s") in the table: \(t.joined(separator: ", "))"
        }
    }
}

/// Where a ticker's adjusted values first break the rule.
public struct AdjustmentProblem: Sendable, Equatable {
    /// The ticker.
    public var ticker: String
    /// The row of the failing day (the later of the two rows compared).
    public var row: Int
    /// The failing day (days since 1970-01-01).
    public var day: Int32
    /// The adjusted column that fails there (`adj_close` for the consecutive form).
    public var column: String
    /// What the rule gives: for `adj_close` the ratio `adj_close_{prev} / adj_close_{day}`, for
    /// `adj_open`/`adj_high`/`adj_low` the value `raw · adj_close / close`, for `adj_volume` the
    /// ratio `adj_volume_{prev} / adj_volume_{day}`.
    public var expected: Double
    /// What the table holds, in the same terms.
    public var actual: Double

    /// `|actual − expected| / |expected|`.
    public var relativeError: Double { abs(actual - expected) / abs(expected) }
}

/// One split or dividend of a ticker.
public struct CorporateEvent: Sendable, Equatable {
    /// The ex-day (days since 1970-01-01).
    public var day: Int32
    /// The split ratio, when it is not 1.
    public var split: Double?
    /// The dividend, when it is not 0.
    public var dividend: Double?
    /// Whether the rule ignores it (the row has no close, as KO's 2001-09-12 dividend row).
    public var ignored: Bool

    /// An event.
    public init(day: Int32, split: Double?, dividend: Double?, ignored: Bool) {
        self.day = day
        self.split = split
        self.dividend = dividend
        self.ignored = ignored
    }
}

/// What `recomputeAdjustments` did to one ticker.
public struct AdjustmentSummary: Sendable, Equatable {
    /// The ticker.
    public var ticker: String
    /// Its rows.
    public var rows: Int
    /// The anchor its factors were multiplied by.
    public var anchor: Double
    /// Event days that contributed a factor.
    public var events: Int
}

/// The table's columns the rule reads and writes, by position in its schema.
struct AdjustmentLayout {
    var raw: [Int]  // open, high, low, close, volume, ex_dividend, split_ratio
    var adjusted: [Int?]  // adj_open, adj_high, adj_low, adj_close, adj_volume

    init(_ table: QuoteTable) throws(AdjustmentError) {
        let found = table.columnIndicesByIdentifier(AdjustmentRule.rawIdentifiers)
        let missing = zip(AdjustmentRule.rawIdentifiers, found).filter { $0.1 == nil }.map(\.0)
        if !missing.isEmpty {
            let wiki = Set(AdjustmentRule.adjustedIdentifiers)
            let other = table.schema.map(\.identifier).filter { $0.contains("adj") && !wiki.contains($0) }
            throw .missingColumns(missing, otherAdjusted: other)
        }
        raw = found.compactMap { $0 }
        adjusted = table.columnIndicesByIdentifier(AdjustmentRule.adjustedIdentifiers)
    }
}

/// A numeric column read as Float64: the column itself when it is one, else a converted copy.
struct DoubleColumnView {
    let column: Column<Double>

    init(_ any: AnyColumn) {
        switch any {
        case .float64(let c): column = c
        case .float32(let c): column = Self.converted(c) { Double($0) }
        case .int32(let c): column = Self.converted(c) { Double($0) }
        case .int64(let c): column = Self.converted(c) { Double($0) }
        }
    }

    private static func converted<T>(_ c: Column<T>, _ convert: (T) -> Double) -> Column<Double> {
        var out = Column<Double>(unsafeUninitializedCount: c.count) { dst in
            c.withUnsafeBufferPointer { src in for i in 0 ..< src.count { dst[i] = convert(src[i]) } }
        }
        out.setValidity(c.validity)
        return out
    }
}

/// Raw pointers to a column's values and validity words, shared by the worker threads of one pass.
struct ValuesPointer: @unchecked Sendable {
    // Safe: the columns these point into outlive the pass, which only reads them.
    let values: UnsafeBufferPointer<Double>
    let validity: UnsafePointer<UInt64>?

    @inline(__always) func value(_ row: Int) -> Double? {
        if let validity, (validity[row >> 6] >> UInt64(row & 63)) & 1 == 0 { return nil }
        return values[row]
    }
}

extension QuoteTable {
    /// The indices of the value columns whose identifier is each of `identifiers`.
    func columnIndicesByIdentifier(_ identifiers: [String]) -> [Int?] {
        identifiers.map { id in schema.firstIndex { $0.identifier == id } }
    }

    /// Whether the table has WIKI's column set: raw prices, `ex_dividend`, `split_ratio` and every
    /// `adj_*` column (the tables `verify --adjustments` checks).
    public var hasWikiAdjustmentColumns: Bool {
        guard let layout = try? AdjustmentLayout(self) else { return false }
        return layout.adjusted.allSatisfy { $0 != nil }
    }

    /// Whether the table has all five adjusted columns (`adj_open` … `adj_volume`).
    public var hasAdjustedColumns: Bool {
        columnIndicesByIdentifier(AdjustmentRule.adjustedIdentifiers).allSatisfy { $0 != nil }
    }

    /// Calls `body` with pointers to the columns at `indices`, read as Float64.
    func withValuePointers<R>(_ indices: [Int], _ body: ([ValuesPointer]) throws -> R) rethrows -> R {
        let views = indices.map { DoubleColumnView(columns[$0]).column }
        return try Self.withPointers(views, [], body)
    }

    private static func withPointers<R>(
        _ rest: ArraySlice<Column<Double>>, _ done: [ValuesPointer],
        _ body: ([ValuesPointer]) throws -> R
    ) rethrows -> R {
        guard let first = rest.first else { return try body(done) }
        return try first.withUnsafeBufferPointer { values in
            try withWords(first.validity) { words in
                let p = ValuesPointer(values: values, validity: words)
                return try withPointers(rest.dropFirst(), done + [p], body)
            }
        }
    }

    private static func withPointers<R>(
        _ all: [Column<Double>], _ done: [ValuesPointer],
        _ body: ([ValuesPointer]) throws -> R
    ) rethrows -> R {
        try withPointers(all[...], done, body)
    }

    private static func withWords<R>(_ mask: Bitmask?, _ body: (UnsafePointer<UInt64>?) throws -> R) rethrows -> R {
        guard let mask else { return try body(nil) }
        return try mask.withUnsafeWords { try body($0.baseAddress) }
    }

    // MARK: - The check

    /// Checks every ticker's adjusted columns against WIKI's rule and returns, per failing ticker
    /// (in ticker order), the first day where they break it (the first `limit` days).
    ///
    /// Between consecutive rows p < q holding a close and an adjusted close, the rule requires
    /// `adj_close_p / adj_close_q = close_p · Π_{p<t<q} f_t / ((close_q + D_q) · s_q)` (the
    /// product over rows between them with a close; with none between, the consecutive form
    /// `close_p / ((close_q + D_q) · s_q)`). On each such row it also requires `adj_open`,
    /// `adj_high` and `adj_low` to be the raw value times the row's factor `adj_close / close`,
    /// and between consecutive rows with volumes, `adj_volume_p / adj_volume_q = volume_p ·
    /// Π_{p<t≤q} s_t / volume_q`. A value fails when its relative difference from the rule's
    /// exceeds `tolerance` (or is not a number).
    ///
    /// - Parameters:
    ///   - tickers: the tickers to check (all when nil).
    ///   - tolerance: the relative tolerance, 1e-6 by default (the vendor rounds its values).
    ///   - limit: the most failing days reported per ticker (each compared with the day before
    ///     it as the table holds it, so one stale stretch fails once, at its edge).
    ///   - threads: worker threads; the answer does not depend on them.
    /// - Throws: `AdjustmentError` when the table lacks WIKI's columns or a ticker asked for.
    /// - Complexity: one pass over the 12 columns of the rows checked.
    public func adjustmentProblems(
        tickers: [String]? = nil, tolerance: Double = AdjustmentRule.defaultTolerance, limit: Int = 1,
        threads: Int = ProcessInfo.processInfo.activeProcessorCount
    ) throws(AdjustmentError) -> [AdjustmentProblem] {
        let layout = try AdjustmentLayout(self)
        let missing = zip(AdjustmentRule.adjustedIdentifiers, layout.adjusted).filter { $0.1 == nil }.map(\.0)
        if missing.count == AdjustmentRule.adjustedIdentifiers.count { throw .noAdjustedColumns }
        if !missing.isEmpty { throw .incompleteAdjustedColumns(missing: missing) }
        let numbers = try tickerNumbers(tickers)
        let indices = layout.raw + layout.adjusted.compactMap { $0 }
        var found = [[AdjustmentProblem]](repeating: [], count: numbers.count)
        withValuePointers(indices) { p in
            found.withUnsafeMutableBufferPointer { out in
                guard let base = out.baseAddress else { return }
                let shared = SharedPointer(base: base)
                forEachChunk(numbers.count, threads: threads) { i, _ in
                    shared.base[i] = Self.problems(p, rows: self.tickers[numbers[i]].rows, tolerance: tolerance, limit: limit)
                }
            }
        }
        return zip(numbers, found).flatMap { number, problems in
            problems.map { problem in
                var problem = problem
                problem.ticker = self.tickers[number].symbol
                problem.day = dates[problem.row]
                return problem
            }
        }
    }

    /// The numbers of `symbols` (every ticker's when nil), or the error naming unknown ones.
    func tickerNumbers(_ symbols: [String]?) throws(AdjustmentError) -> [Int] {
        guard let symbols else { return Array(tickers.indices) }
        let unknown = symbols.filter { tickerNumber(of: $0) == nil }
        if !unknown.isEmpty { throw .unknownTickers(unknown) }
        return Array(Set(symbols.compactMap { tickerNumber(of: $0).map(Int.init) })).sorted()
    }

    /// The first `limit` failing days of one ticker's rows (one problem per day: the first
    /// failing column); `p` holds the 7 raw then the 5 adjusted columns. A failing day still
    /// becomes the one the next is compared with, so one stale stretch fails once, at its edge.
    private static func problems(_ p: [ValuesPointer], rows: Range<Int>, tolerance: Double, limit: Int) -> [AdjustmentProblem] {
        let open = p[0], high = p[1], low = p[2], close = p[3], volume = p[4], dividend = p[5], split = p[6]
        let adjOpen = p[7], adjHigh = p[8], adjLow = p[9], adjClose = p[10], adjVolume = p[11]
        func fails(_ actual: Double, _ expected: Double) -> Bool {
            if actual == expected { return false }
            return !(abs(actual - expected) <= tolerance * abs(expected))
        }
        var found = [AdjustmentProblem]()
        // The last row with a close and an adjusted close, its values, and the product of the
        // factors of the rows with a close since (those without an adjusted close).
        var previousClose = 0.0, previousAdjusted = 0.0, carried = 1.0, havePrevious = false
        // Likewise for volumes: the last row with a volume and an adjusted volume, and the splits since.
        var previousVolume = 0.0, previousAdjustedVolume = 0.0, splitsSince = 1.0, havePreviousVolume = false
        for r in rows {
            guard let c = close.value(r) else { continue }
            let d = dividend.value(r), sv = split.value(r)
            let s = AdjustmentRule.splitRatio(sv)
            let f = AdjustmentRule.eventFactor(close: c, dividend: d, split: sv)
            if f != nil { splitsSince *= s }
            var failure: (column: String, expected: Double, actual: Double)?
            if let ac = adjClose.value(r) {
                if havePrevious {
                    let expected = previousClose * carried / ((c + (d ?? 0)) * s)
                    let actual = previousAdjusted / ac
                    if fails(actual, expected) { failure = ("adj_close", expected, actual) }
                }
                let factor = ac / c
                if failure == nil, let x = open.value(r), let ax = adjOpen.value(r), fails(ax, x * factor) {
                    failure = ("adj_open", x * factor, ax)
                }
                if failure == nil, let x = high.value(r), let ax = adjHigh.value(r), fails(ax, x * factor) {
                    failure = ("adj_high", x * factor, ax)
                }
                if failure == nil, let x = low.value(r), let ax = adjLow.value(r), fails(ax, x * factor) {
                    failure = ("adj_low", x * factor, ax)
                }
                previousClose = c
                previousAdjusted = ac
                carried = 1
                havePrevious = true
            } else if let f {
                carried *= f
            }
            if let v = volume.value(r), let av = adjVolume.value(r), v > 0, av > 0 {
                if havePreviousVolume && failure == nil {
                    let expected = previousVolume * splitsSince / v
                    let actual = previousAdjustedVolume / av
                    if fails(actual, expected) { failure = ("adj_volume", expected, actual) }
                }
                previousVolume = v
                previousAdjustedVolume = av
                splitsSince = 1
                havePreviousVolume = true
            }
            if let failure {
                found.append(
                    AdjustmentProblem(
                        ticker: "", row: r, day: 0, column: failure.column,
                        expected: failure.expected, actual: failure.actual))
                if found.count >= limit { break }
            }
        }
        return found
    }

    // MARK: - Events

    /// The splits and dividends of the ticker with number `number`, in date order: rows whose split
    /// ratio is not 1 or whose dividend is not 0 (nulls count as none).
    /// - Throws: `AdjustmentError.missingColumns` without `ex_dividend` and `split_ratio`.
    public func corporateEvents(ofTicker number: Int) throws(AdjustmentError) -> [CorporateEvent] {
        let found = columnIndicesByIdentifier(["close", "ex_dividend", "split_ratio"])
        guard let d = found[1], let s = found[2] else {
            throw .missingColumns(
                ["ex_dividend", "split_ratio"].enumerated().filter { found[$0.offset + 1] == nil }.map(\.element),
                otherAdjusted: [])
        }
        let close = found[0].map { columns[$0] }, dividend = columns[d], split = columns[s]
        var out = [CorporateEvent]()
        for r in tickers[number].rows {
            let sv = split.doubleValue(at: r), dv = dividend.doubleValue(at: r)
            let isSplit = sv.map { $0 != 1 } ?? false, isDividend = dv.map { $0 != 0 } ?? false
            guard isSplit || isDividend else { continue }
            out.append(
                CorporateEvent(
                    day: dates[r], split: isSplit ? sv : nil, dividend: isDividend ? dv : nil,
                    ignored: close.map { $0.doubleValue(at: r) == nil } ?? false))
        }
        return out
    }

    // MARK: - Recomputation

    /// Rewrites (or, when the table has none, creates) the adjusted columns of `tickers` (all
    /// when nil) from the raw ones and the events, by WIKI's rule: day i's price factor is
    /// `anchor · Π_{t>i} f_t`, its volume factor `Π_{t>i} s_t`, where the anchor is the ticker's
    /// newest `adj_close / close` (the newest row holding both) when the table has adjusted
    /// columns, else 1. A null raw value gives a null adjusted one. The adjusted columns become
    /// Float64 (`adj_open` … `adj_volume`, created after the others when missing); other tickers'
    /// rows keep their values (null in columns just created).
    ///
    /// - Parameters:
    ///   - symbols: the tickers to recompute (all when nil).
    ///   - anchored: use the newest `adj_close / close` as the anchor (true) or 1.
    ///   - threads: worker threads; the result does not depend on them.
    /// - Returns: one summary per recomputed ticker, in ticker order.
    /// - Throws: `AdjustmentError` when the table lacks the raw or event columns, or a ticker.
    /// - Complexity: one pass over the 7 raw columns and one write of the 5 adjusted ones.
    @discardableResult
    public mutating func recomputeAdjustments(
        tickers symbols: [String]? = nil, anchored: Bool = true,
        threads: Int = ProcessInfo.processInfo.activeProcessorCount
    )
        throws(AdjustmentError) -> [AdjustmentSummary]
    {
        let layout = try AdjustmentLayout(self)
        let numbers = try tickerNumbers(symbols)
        let everyTicker = numbers.count == tickers.count
        let n = rowCount
        // The output columns: fresh buffers, filled with the old values of tickers not recomputed.
        var outputs = [Column<Double>]()
        var oldAdjusted = [Column<Double>?]()
        for k in 0 ..< 5 {
            let old = layout.adjusted[k].map { DoubleColumnView(columns[$0]).column }
            oldAdjusted.append(old)
            outputs.append(
                Column<Double>(unsafeUninitializedCount: n) { dst in
                    guard !everyTicker, let old else { return }
                    old.withUnsafeBufferPointer { src in _ = dst.initialize(fromContentsOf: src) }
                })
        }
        let anchorIndex = anchored ? layout.adjusted[3] : nil
        var summaries = [AdjustmentSummary?](repeating: nil, count: numbers.count)
        if n > 0 {
            withValuePointers(layout.raw + (anchorIndex.map { [$0] } ?? [])) { p in
                // Safe: the outputs are uniquely owned and not mutated again until every worker is done,
                // so their storage stays where these pointers point.
                let targets = (0 ..< 5).compactMap { k in
                    outputs[k].withUnsafeMutableBufferPointer { $0.baseAddress.map { SharedPointer(base: $0) } }
                }
                guard targets.count == 5 else { return }
                summaries.withUnsafeMutableBufferPointer { out in
                    guard let base = out.baseAddress else { return }
                    let shared = SharedPointer(base: base)
                    forEachChunk(numbers.count, threads: threads) { i, _ in
                        let entry = self.tickers[numbers[i]]
                        let (anchor, events) = Self.adjustRows(
                            p, anchorColumn: anchorIndex == nil ? nil : p[7], rows: entry.rows, into: targets)
                        shared.base[i] = AdjustmentSummary(ticker: entry.symbol, rows: entry.rowCount, anchor: anchor, events: events)
                    }
                }
            }
        }
        // Validity: a null raw value gives a null adjusted one; other tickers keep theirs.
        let rawSources = [0, 1, 2, 3, 4].map { columns[layout.raw[$0]].validity }
        for k in 0 ..< 5 {
            let recomputedNeedMask = rawSources[k] != nil
            let keptNeedMask = !everyTicker && (oldAdjusted[k] == nil || oldAdjusted[k]?.validity != nil)
            guard recomputedNeedMask || keptNeedMask else { continue }
            var mask =
                everyTicker
                ? Bitmask(count: n, allSet: true)
                : (oldAdjusted[k].map { $0.validity ?? Bitmask(count: n, allSet: true) } ?? Bitmask(count: n, allSet: false))
            if let source = rawSources[k] {
                for number in numbers { for r in tickers[number].rows { mask[r] = source[r] } }
            } else if !everyTicker {
                for number in numbers { for r in tickers[number].rows { mask[r] = true } }
            }
            outputs[k].setValidity(mask)
        }
        for k in 0 ..< 5 {
            outputs[k].shrinkToFit()
            outputs[k].computeSummaries()
            let column = AnyColumn.float64(outputs[k])
            if let i = layout.adjusted[k] {
                columns[i] = column
                schema[i].type = .float64
            } else {
                schema.append(ColumnDescriptor(name: AdjustmentRule.adjustedIdentifiers[k], type: .float64))
                columns.append(column)
            }
        }
        return summaries.compactMap { $0 }
    }

    /// Writes one ticker's adjusted values; `p` holds the 7 raw columns (then adj_close when anchored).
    /// Returns the anchor and the number of event days that contributed a factor.
    private static func adjustRows(
        _ p: [ValuesPointer], anchorColumn: ValuesPointer?, rows: Range<Int>,
        into out: [SharedPointer<Double>]
    ) -> (anchor: Double, events: Int) {
        let close = p[3], volume = p[4], dividend = p[5], split = p[6]
        var anchor = 1.0
        if let anchorColumn {
            for r in rows.reversed() {
                guard let c = close.value(r), let ac = anchorColumn.value(r) else { continue }
                let a = ac / c
                if a.isFinite && a > 0 { anchor = a }
                break
            }
        }
        var priceFactor = anchor, volumeFactor = 1.0, events = 0
        let o0 = out[0].base, o1 = out[1].base, o2 = out[2].base, o3 = out[3].base, o4 = out[4].base
        let open = p[0].values, high = p[1].values, low = p[2].values, closeValues = close.values, volumes = volume.values
        for r in rows.reversed() {
            // Safe: r is within the ticker's rows, inside every column; nulls are masked afterwards.
            o0[r] = open[r] * priceFactor
            o1[r] = high[r] * priceFactor
            o2[r] = low[r] * priceFactor
            o3[r] = closeValues[r] * priceFactor
            o4[r] = volumes[r] * volumeFactor
            let d = dividend.value(r), s = split.value(r)
            if (d != nil && d != 0) || (s != nil && s != 1),
                let f = AdjustmentRule.eventFactor(close: close.value(r), dividend: d, split: s)
            {
                priceFactor *= f
                volumeFactor *= AdjustmentRule.splitRatio(s)
                events += 1
            }
        }
        return (anchor, events)
    }
}

extension QuoteTable {
    /// The raw columns `adjustedView()` replaces, in WIKI's order, beside their adjusted columns.
    public static let adjustedMeanings = Array(zip(["open", "high", "low", "close", "volume"], AdjustmentRule.adjustedIdentifiers))

    /// The table with `open`, `high`, `low`, `close` and `volume` holding their adjusted columns'
    /// values (`adj_open` …; those keep theirs too), so an expression written once reads adjusted
    /// prices (`filter --adjusted`, charts). No values are copied: columns share their storage.
    ///
    /// A name the table lacks (a table with `adj_close` but no `close`) is added under that
    /// name. The date column, tickers, metadata and every other column are unchanged.
    /// - Throws: `AdjustmentError.noAdjustedColumns` when the table has none of the adjusted
    ///   columns, `.incompleteAdjustedColumns` when it has only some.
    public func adjustedView() throws(AdjustmentError) -> QuoteTable {
        let adjusted = columnIndicesByIdentifier(AdjustmentRule.adjustedIdentifiers)
        let missing = zip(AdjustmentRule.adjustedIdentifiers, adjusted).filter { $0.1 == nil }.map(\.0)
        if missing.count == adjusted.count { throw .noAdjustedColumns }
        if !missing.isEmpty { throw .incompleteAdjustedColumns(missing: missing) }
        var view = self
        for ((raw, _), index) in zip(Self.adjustedMeanings, adjusted) {
            guard let index else { continue }
            if let target = view.columnIndicesByIdentifier([raw])[0] {
                view.columns[target] = columns[index]
                view.schema[target].type = schema[index].type
            } else {
                view.schema.append(ColumnDescriptor(name: raw, type: schema[index].type))
                view.columns.append(columns[index])
            }
        }
        return view
    }
}
