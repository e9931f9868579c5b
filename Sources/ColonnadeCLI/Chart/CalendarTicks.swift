import Colonnade

/// Date ticks at calendar boundaries: days, Mondays, first days of months or quarters, or 1st of
/// January every 1, 2, 5, 10… years — the finest kind that keeps at most `maxCount` ticks.
///
///     CalendarTicks(from: day(2014, 1, 2), to: day(2014, 12, 31), maxCount: 8)
///     // unit .months(3): 2014-04-01, 2014-07-01, 2014-10-01 (labels "Apr 2014", …)
struct CalendarTicks: Equatable {
    /// The spacing of the ticks.
    enum Unit: Equatable {
        /// Every `n` days (n = 1 or 2).
        case days(Int)
        /// Every Monday.
        case weeks
        /// The first day of every `n`-th month (n = 1, 3 or 6; 3 gives quarters).
        case months(Int)
        /// 1 January of every year divisible by `n`.
        case years(Int)

        /// The typical length in days, to estimate a tick count without listing the ticks.
        var approximateDays: Double {
            switch self {
            case .days(let n): Double(n)
            case .weeks: 7
            case .months(let n): 30.44 * Double(n)
            case .years(let n): 365.25 * Double(n)
            }
        }
    }

    /// The chosen spacing.
    let unit: Unit
    /// The tick days (days since 1970-01-01), ascending, all within the range.
    let days: [Int32]

    /// The finest ticks between `first` and `last` (inclusive) numbering at most `maxCount`
    /// (at least one: a range with no boundary in it gets a tick on `first`).
    ///
    /// - Precondition: `first <= last`, `maxCount >= 1`.
    init(from first: Int32, to last: Int32, maxCount: Int) {
        precondition(first <= last && maxCount >= 1, "an empty date range has no ticks")
        var candidates: [Unit] = [.days(1), .days(2), .weeks, .months(1), .months(3), .months(6)]
        var years = 1
        while years <= 1_000_000 {
            candidates += [.years(years), .years(years * 2), .years(years * 5)]
            years *= 10
        }
        let span = Double(last) - Double(first) + 1
        for unit in candidates where span / unit.approximateDays <= Double(maxCount) * 2 + 2 {
            let ticks = Self.ticks(unit, from: first, to: last)
            if ticks.count <= maxCount {
                self.unit = unit
                self.days = ticks.isEmpty ? [first] : ticks
                return
            }
        }
        unit = .years(10_000_000)
        days = [first]
    }

    /// Every boundary of `unit` in `first...last`.
    static func ticks(_ unit: Unit, from first: Int32, to last: Int32) -> [Int32] {
        var out = [Int32]()
        switch unit {
        case .days(let n):
            var d = first
            while d <= last {
                if Int(d).floorMod(n) == 0 { out.append(d) }
                if d == Int32.max { break }
                d += 1
            }
        case .weeks:
            // 1970-01-05 (day 4) was a Monday.
            var d = Int(first) + (4 - Int(first)).floorMod(7)
            while d <= Int(last) {
                out.append(Int32(d))
                d += 7
            }
        case .months(let n):
            var (year, month, _) = Day(daysSinceEpoch: first).components
            while true {
                if (month - 1) % n == 0, let d = Day(year: year, month: month, day: 1)?.daysSinceEpoch {
                    if d > last { break }
                    if d >= first { out.append(d) }
                }
                month += 1
                if month > 12 { (year, month) = (year + 1, 1) }
                if year > 6_000_000 { break }
            }
        case .years(let n):
            let (firstYear, _, _) = Day(daysSinceEpoch: first).components
            var year = firstYear + (n - firstYear.floorMod(n)) % n
            while let d = Day(year: year, month: 1, day: 1)?.daysSinceEpoch, d <= last {
                if d >= first { out.append(d) }
                year += n
            }
        }
        return out
    }

    /// The label of a tick: `2014-03-05` for days and weeks, `Mar 2014` for months and
    /// quarters, `2014` for years.
    func label(_ day: Int32) -> String {
        switch unit {
        case .days, .weeks:
            return Day(daysSinceEpoch: day).description
        case .months:
            let (year, month, _) = Day(daysSinceEpoch: day).components
            return Self.monthNames[month - 1] + " " + String(year)
        case .years:
            return String(Day(daysSinceEpoch: day).components.year)
        }
    }

    private static let monthNames = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]
}

extension Int {
    /// The remainder of floored division: never negative for a positive `divisor`.
    func floorMod(_ divisor: Int) -> Int {
        let r = self % divisor
        return r < 0 ? r + divisor : r
    }
}
