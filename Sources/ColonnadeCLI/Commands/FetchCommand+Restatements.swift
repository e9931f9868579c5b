import Colonnade
import ColonnadeIngest

/// The notes of `fetch --update` about restated adjusted histories (docs/ADJUSTMENTS.md, "Updates").
extension FetchCommand {
    /// One line per restated ticker:
    /// `AAPL split 7:1 on 2014-06-09: adjusted history restated (1990-01-02 … 2014-06-06), recomputed from the stored raw prices`.
    static func restatementNote(_ r: Restatement) -> String {
        func day(_ d: Int32) -> String { Day(daysSinceEpoch: d).description }
        var causes = r.events.prefix(3).map { e -> String in
            var parts = [String]()
            if let s = e.split { parts.append("split \(splitText(s))") }
            if let d = e.dividend { parts.append("dividend \(d)") }
            return parts.joined(separator: " and ") + " on \(day(e.day))"
        }
        if r.events.count > 3 { causes.append("\(r.events.count - 3) more event\(r.events.count == 4 ? "" : "s")") }
        if causes.isEmpty, let changed = r.changedAdjustedClose {
            causes.append(": the vendor's adj_close of \(day(r.lastStoredDay)) changed from \(changed.stored) to \(changed.vendor)")
        }
        let because = causes.joined(separator: ", ")
        return
            "\(r.ticker)\(because.hasPrefix(":") ? "" : " ")\(because): adjusted history restated (\(day(r.firstStoredDay)) … \(day(r.lastStoredDay))), "
            + "recomputed from the stored raw prices"
    }

    /// `7:1`, `3:2`, `1:10` (a reverse split), else the ratio as stored (`1.0375:1`).
    static func splitText(_ ratio: Double) -> String {
        for denominator in 1 ... 10 {
            let numerator = ratio * Double(denominator)
            if numerator == numerator.rounded(), numerator >= 1, numerator < 1e6 { return "\(Int(numerator)):\(denominator)" }
        }
        return "\(ratio):1"
    }
}
