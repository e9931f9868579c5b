extension QuoteTable {
    /// Splits `rows` (rows of one ticker, dates ascending) into runs of one calendar bucket,
    /// with the bucket as a number (`AggregateGrouping.CalendarBucket.key(ofDay:_:)`).
    /// - Complexity: one binary search per run.
    func calendarRuns(_ rows: Range<Int>, _ bucket: AggregateGrouping.CalendarBucket) -> [(rows: Range<Int>, key: Int)] {
        dates.withUnsafeBufferPointer { d in
            var out = [(rows: Range<Int>, key: Int)]()
            var start = rows.lowerBound
            while start < rows.upperBound {
                if bucket == .date {  // dates are unique within a ticker: one row per run
                    out.append((start ..< start + 1, Int(d[start])))
                    start += 1
                    continue
                }
                let limit = AggregateGrouping.CalendarBucket.nextStart(afterBucketOf: d[start], bucket) ?? Int32.max
                var lo = start + 1, hi = rows.upperBound
                while lo < hi {
                    let mid = (lo + hi) >> 1
                    if d[mid] < limit { lo = mid + 1 } else { hi = mid }
                }
                out.append((start ..< lo, AggregateGrouping.CalendarBucket.key(ofDay: d[start], bucket)))
                start = lo
            }
            return out
        }
    }
}
