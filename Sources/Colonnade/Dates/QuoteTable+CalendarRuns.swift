extension QuoteTable {
    /// Splits `rows` (rows of one ticker, dates ascending) into runs of one calendar year or
    /// month, with the bucket as a number: the year (`2014`) or year × 100 + month (`201403`).
    /// - Complexity: one binary search per run.
    func calendarRuns(_ rows: Range<Int>, _ bucket: AggregateGrouping.CalendarBucket) -> [(rows: Range<Int>, key: Int)] {
        dates.withUnsafeBufferPointer { d in
            var out = [(rows: Range<Int>, key: Int)]()
            var start = rows.lowerBound
            while start < rows.upperBound {
                let (year, month, _) = Day.components(ofDay: d[start])
                let next: Int32?
                switch bucket {
                case .year: next = Day.days(year: year + 1, month: 1, day: 1)
                case .month: next = month == 12 ? Day.days(year: year + 1, month: 1, day: 1) : Day.days(year: year, month: month + 1, day: 1)
                }
                let limit = next ?? Int32.max
                var lo = start + 1, hi = rows.upperBound
                while lo < hi {
                    let mid = (lo + hi) >> 1
                    if d[mid] < limit { lo = mid + 1 } else { hi = mid }
                }
                out.append((start ..< lo, bucket == .year ? year : year * 100 + month))
                start = lo
            }
            return out
        }
    }
}
