import Colonnade

/// A ticker whose adjusted history `fetch --update` found restated by the vendor, and rewrote
/// (docs/ADJUSTMENTS.md, "Updates").
public struct Restatement: Sendable, Equatable {
    /// The ticker.
    public var ticker: String
    /// The splits and dividends among the fetched rows after the newest stored day, in date order
    /// (empty when only the vendor's adjusted values of that day told).
    public var events: [CorporateEvent]
    /// The newest stored day (days since 1970-01-01), the one day fetched again to compare.
    public var lastStoredDay: Int32
    /// The ticker's first stored day: the restated history is `firstStoredDay … lastStoredDay`.
    public var firstStoredDay: Int32
    /// The vendor's and the stored `adj_close` of ``lastStoredDay`` when they differ (beyond
    /// `AdjustmentRule.defaultTolerance`), else nil.
    public var changedAdjustedClose: (stored: Double, vendor: Double)?

    public static func == (a: Restatement, b: Restatement) -> Bool {
        a.ticker == b.ticker && a.events == b.events && a.lastStoredDay == b.lastStoredDay && a.firstStoredDay == b.firstStoredDay
            && a.changedAdjustedClose?.stored == b.changedAdjustedClose?.stored
            && a.changedAdjustedClose?.vendor == b.changedAdjustedClose?.vendor
    }
}

extension QuoteStore {
    /// The tickers of `incoming` (an update's rows, starting on each ticker's newest stored day)
    /// whose adjusted history in `existing` the vendor has restated: a fetched row after the
    /// newest stored day carries a split or a dividend the rule does not ignore, or the vendor's
    /// `adj_close` of that day differs from the stored one by more than
    /// `AdjustmentRule.defaultTolerance` (relative).
    ///
    /// Only tables with WIKI's column set on both sides are looked at (`hasWikiAdjustmentColumns`);
    /// other vendors' adjusted columns follow other rules and are left alone.
    /// - Complexity: one pass over the incoming rows and one stored row per ticker.
    static func restatements(existing: QuoteTable, incoming: QuoteTable) -> [Restatement] {
        guard existing.hasWikiAdjustmentColumns, incoming.hasWikiAdjustmentColumns,
            let storedClose = existing.column(named: "adj_close"), let vendorClose = incoming.column(named: "adj_close")
        else { return [] }
        var out = [Restatement]()
        for (code, entry) in incoming.tickers.enumerated() where entry.rowCount > 0 {
            guard let stored = existing.ticker(entry.symbol), stored.rowCount > 0 else { continue }
            let lastRow = stored.rows.upperBound - 1
            let last = existing.dates[lastRow]
            let events = ((try? incoming.corporateEvents(ofTicker: code)) ?? []).filter { $0.day > last && !$0.ignored }
            var changed: (stored: Double, vendor: Double)?
            // The overlapping day: the incoming row dated `last`, found by binary search.
            let rows = entry.rows
            var lo = rows.lowerBound, hi = rows.upperBound
            while lo < hi {
                let mid = (lo + hi) / 2
                if incoming.dates[mid] < last { lo = mid + 1 } else { hi = mid }
            }
            if lo < rows.upperBound, incoming.dates[lo] == last,
                let s = storedClose.doubleValue(at: lastRow), let v = vendorClose.doubleValue(at: lo),
                s.isFinite, v.isFinite, abs(s - v) > AdjustmentRule.defaultTolerance * max(abs(s), abs(v))
            {
                changed = (s, v)
            }
            guard !events.isEmpty || changed != nil else { continue }
            out.append(
                Restatement(
                    ticker: entry.symbol, events: events, lastStoredDay: last,
                    firstStoredDay: existing.dates[stored.firstRow], changedAdjustedClose: changed))
        }
        return out
    }

    /// Recomputes the adjusted columns of every restated ticker of `merged` (the stored rows with
    /// the update's upserted) from its raw rows by WIKI's rule, anchored at the vendor's newest
    /// `adj_close / close`, so the result equals a fresh full fetch: every raw row is stored, so
    /// nothing needs fetching again.
    package static func restate(_ merged: inout QuoteTable, existing: QuoteTable, incoming: QuoteTable) throws -> [Restatement] {
        let restated = restatements(existing: existing, incoming: incoming)
        guard !restated.isEmpty else { return [] }
        try merged.recomputeAdjustments(tickers: restated.map(\.ticker), anchored: true)
        return restated
    }
}
