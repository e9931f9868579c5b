/// `Day`'s internals: proleptic Gregorian calendar dates as day numbers (days since 1970-01-01),
/// by arithmetic, on raw `Int32` day numbers (what date columns store) and raw bytes (what the
/// decoders and writers see).
///
/// The conversions are Howard Hinnant's `days_from_civil` and `civil_from_days`
/// (<https://howardhinnant.github.io/date_algorithms.html>): shift the year to start in March so
/// the leap day is last, then count 400-year eras of 146 097 days. No `Calendar`, no
/// `DateFormatter`, no allocation except in `format(day:)`.
///
///     Day.parseDay(bytes, count: 10)          // 11_016 for "2000-02-29"
///     Day.format(day: 11_016)                 // "2000-02-29"
///     Day.days(year: 2001, month: 2, day: 29) // nil
extension Day {
    /// Days since 1970-01-01 for a proleptic Gregorian date.
    ///
    /// - Parameters:
    ///   - year: The astronomical year (year 0 is 1 BC).
    ///   - month: 1...12.
    ///   - day: 1 up to the length of the month.
    /// - Returns: The day number, or `nil` if the date is invalid (month 13, February 30,
    ///   February 29 in a non-leap year, …) or its day number does not fit in `Int32`.
    /// - Complexity: O(1).
    static func days(year: Int, month: Int, day: Int) -> Int32? {
        guard month >= 1 && month <= 12 && day >= 1 && day <= 31 else { return nil }
        guard day <= daysInMonth(year: year, month: month) else { return nil }
        // Int32 day numbers span about ±5.8 million years; this bound also keeps the
        // arithmetic below far from overflow.
        guard year > -6_000_000 && year < 6_000_000 else { return nil }
        return Int32(exactly: _unsafeDays(year: year, month: month, day: day))
    }

    /// Parses exactly `YYYY-MM-DD` (10 bytes, ASCII digits) into days since 1970-01-01.
    ///
    /// - Parameters:
    ///   - start: The first byte.
    ///   - count: The number of bytes; anything but 10 gives `nil`.
    /// - Returns: The day number, or `nil` if malformed (wrong length, separators, non-digits)
    ///   or not a valid date.
    /// - Complexity: O(1).
    static func parseDay(_ start: UnsafePointer<UInt8>, count: Int) -> Int32? {
        guard count == 10 else { return nil }
        guard start[4] == UInt8(ascii: "-") && start[7] == UInt8(ascii: "-") else { return nil }
        let y0 = start[0] &- UInt8(ascii: "0"), y1 = start[1] &- UInt8(ascii: "0")
        let y2 = start[2] &- UInt8(ascii: "0"), y3 = start[3] &- UInt8(ascii: "0")
        let m0 = start[5] &- UInt8(ascii: "0"), m1 = start[6] &- UInt8(ascii: "0")
        let d0 = start[8] &- UInt8(ascii: "0"), d1 = start[9] &- UInt8(ascii: "0")
        // Each difference wraps to ≥ 10 unless the byte is a digit.
        guard y0 < 10, y1 < 10, y2 < 10, y3 < 10, m0 < 10, m1 < 10, d0 < 10, d1 < 10
        else { return nil }
        let year = Int(y0) &* 1000 &+ Int(y1) &* 100 &+ Int(y2) &* 10 &+ Int(y3)
        let month = Int(m0) &* 10 &+ Int(m1)
        let day = Int(d0) &* 10 &+ Int(d1)
        guard month >= 1 && month <= 12 && day >= 1
              && day <= daysInMonth(year: year, month: month)
        else { return nil }
        // Safe: years 0...9999 are within Int32 day numbers.
        return Int32(truncatingIfNeeded: _unsafeDays(year: year, month: month, day: day))
    }

    /// The (year, month, day) of a day number; years may be ≤ 0 (proleptic, astronomical).
    ///
    /// - Complexity: O(1).
    static func components(ofDay days: Int32) -> (year: Int, month: Int, day: Int) {
        let z = Int(days) + 719_468  // days since 0000-03-01
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097  // 0...146096
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)  // from March 1
        let shiftedMonth = (5 * dayOfYear + 2) / 153  // 0 = March … 11 = February
        let day = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        return (yearOfEra + era * 400 + (month <= 2 ? 1 : 0), month, day)
    }

    /// `YYYY-MM-DD` for a day number. Years 0...9999 print as four digits; later years print
    /// with more digits, earlier ones with a `-` and at least four digits (`-0001-12-31`).
    ///
    /// - Complexity: O(1).
    static func format(day: Int32) -> String {
        let (year, month, dayOfMonth) = components(ofDay: day)
        if year >= 0 && year <= 9999 {
            return String(unsafeUninitializedCapacity: 10) { buffer in
                writeDay(day, to: buffer.baseAddress!)
                return 10
            }
        }
        var yearText = String(year.magnitude)
        if yearText.count < 4 { yearText = String(repeating: "0", count: 4 - yearText.count) + yearText }
        let twoDigits = { (n: Int) in n < 10 ? "0\(n)" : "\(n)" }
        return (year < 0 ? "-" : "") + yearText + "-" + twoDigits(month) + "-" + twoDigits(dayOfMonth)
    }

    /// Writes the 10 bytes of `YYYY-MM-DD` at `out`, for fast CSV and JSON writers.
    ///
    /// - Precondition: the year of `day` is in 0...9999; `out` has room for 10 bytes.
    /// - Complexity: O(1).
    package static func writeDay(_ day: Int32, to out: UnsafeMutablePointer<UInt8>) {
        let (year, month, dayOfMonth) = components(ofDay: day)
        precondition(year >= 0 && year <= 9999, "Day.writeDay: year \(year) outside 0...9999")
        let zero = UInt8(ascii: "0")
        out[0] = zero &+ UInt8(truncatingIfNeeded: year / 1000)
        out[1] = zero &+ UInt8(truncatingIfNeeded: year / 100 % 10)
        out[2] = zero &+ UInt8(truncatingIfNeeded: year / 10 % 10)
        out[3] = zero &+ UInt8(truncatingIfNeeded: year % 10)
        out[4] = UInt8(ascii: "-")
        out[5] = zero &+ UInt8(truncatingIfNeeded: month / 10)
        out[6] = zero &+ UInt8(truncatingIfNeeded: month % 10)
        out[7] = UInt8(ascii: "-")
        out[8] = zero &+ UInt8(truncatingIfNeeded: dayOfMonth / 10)
        out[9] = zero &+ UInt8(truncatingIfNeeded: dayOfMonth % 10)
    }

    /// The number of days in `month` (1...12) of `year`.
    @inline(__always)
    static func daysInMonth(year: Int, month: Int) -> Int {
        if month == 2 {
            let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
            return isLeap ? 29 : 28
        }
        // 31 for January, March, May, July, August, October, December; 30 otherwise.
        return 30 | ((month ^ (month &>> 3)) & 1)
    }

    /// `days_from_civil` without validation.
    ///
    /// - Precondition: a valid date with |year| well below 2^60.
    @inline(__always)
    static func _unsafeDays(year: Int, month: Int, day: Int) -> Int {
        let y = month <= 2 ? year - 1 : year  // the year starts on March 1
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400  // 0...399
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1  // 0...365
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear  // 0...146096
        return era * 146_097 + dayOfEra - 719_468
    }
}
