/// `Day`'s internals: proleptic Gregorian calendar dates as day numbers (days since 1970-01-01),
/// by arithmetic, on raw `Int32` day numbers (what date columns store) and raw bytes (what the
/// decoders and writers see).
///
/// The conversions are Howard Hinnant's `days_from_civil` and `civil_from_days`
/// (<https://howardhinnant.github.io/date_algorithms.html>): shift the year to start in March so
/// the leap day is last, then count 400-year eras of 146 097 days. `parseDay` gets the same
/// numbers for years 0...9999 from its digits without a division (see its doc). No `Calendar`, no
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
    /// Branch-light and division-free; the same results as checking each byte and then calling
    /// `days(year:month:day:)`, for every input (DayParsingTests compares them on every date of
    /// years 0...9999, every invalid day, and byte mutations).
    ///
    /// - Two unaligned little-endian loads (bytes 0..<8, then 8..<10), never outside the 10 bytes.
    /// - SWAR validation as in `NumberScanning`: XOR with `0000-00-` and `00` turns a digit into
    ///   0...9 and a `-` into 0; adding 0x76 per digit byte and 0x7F per separator byte then sets
    ///   a top bit somewhere exactly when some byte is wrong.
    /// - One multiply for the digit pairs (`x * 10 + x >> 8`): century, year of century and month.
    /// - A leap year's last two digits are a multiple of 4, or they are 00 and the century's are.
    /// - Month lengths and days before each month come from one 64-bit constant per kind of year
    ///   (5 bits a month); leap days before the year from century and year of century by shifts.
    ///   The day number is then sums and two multiplies by constants.
    ///
    /// - Parameters:
    ///   - start: The first byte.
    ///   - count: The number of bytes; anything but 10 gives `nil` (and nothing is read).
    /// - Returns: The day number, or `nil` if malformed (wrong length, separators, non-digits),
    ///   not a valid date, or in year 0000 (outside `Day.storableDayNumbers`).
    /// - Precondition: `start` points to `count` readable bytes.
    /// - Complexity: O(1).
    package static func parseDay(_ start: UnsafePointer<UInt8>, count: Int) -> Int32? {
        guard count == 10 else { return nil }
        let raw = UnsafeRawPointer(start)
        // Safe: count == 10, so bytes 0..<10 are readable; the loads read 0..<8 and 8..<10.
        let head = UInt64(littleEndian: raw.loadUnaligned(as: UInt64.self))  // "YYYY-MM-"
        let tail = UInt64(UInt16(littleEndian: raw.loadUnaligned(fromByteOffset: 8, as: UInt16.self)))  // "DD"
        // "0000-00-" and "00" (byte 0 lowest): digits become 0...9, the separators 0.
        let x = head ^ 0x2D30_302D_3030_3030
        let t = tail ^ 0x3030
        // Adding 0x76 to a digit byte (0x7F to a separator byte) carries into its top bit unless it
        // is 0...9 (0); a byte ≥ 0x80 has it already. The lowest bad byte always flags, as nothing
        // carries into it, so the flags are 0 exactly when all 10 bytes are right.
        let flags =
            (((x &+ 0x7F76_767F_7676_7676) | x) & 0x8080_8080_8080_8080)
            | (((t &+ 0x7676) | t) & 0x8080)
        // Byte k becomes 10 × byte k + byte k+1: at most 99 for digits, so no carry between bytes
        // (for anything else the values are garbage, and the flags reject them).
        let pairs = x &* 10 &+ (x &>> 8)
        let century = pairs & 0xFF  // the first two digits
        let yearOfCentury = (pairs &>> 16) & 0xFF
        let month = (pairs &>> 40) & 0xFF
        let day = (t &* 10 &+ (t &>> 8)) & 0xFF
        // 100 | year, so 4 | year exactly when 4 | yearOfCentury; for 00, 400 | year when 4 | century.
        let isLeap = (yearOfCentury == 0 ? century : yearOfCentury) & 3 == 0
        // Five bits per month m (1...12) at bits 5(m − 1): the month's length − 28 (2 bits), then
        // the days before it − 30(m − 1) + 1 (3 bits). Common year: lengths 31, 28, 31, 30, …, days
        // before 0, 31, 59, 90, … (1, 2, 0, 1, 1, 2, 2, 3, 4, 4, 5, 5); a leap year adds one to
        // February's length and to every later month's days before (1, 2, 1, 2, 2, 3, …, 6).
        let months: UInt64 = isLeap ? 0xDEA_F69B_DCB5_1D27 : 0xBDA_727A_D473_0D07
        let entry = months &>> (5 &* (month &- 1))
        let monthLength = 28 &+ (entry & 3)
        // month − 1 and day − 1 wrap to huge values for 0, so one unsigned compare checks each range.
        // Year 0000 is outside the storable range (`Day.storableDayNumbers`): years 0001...9999.
        guard flags == 0, month &- 1 < 12, day &- 1 < monthLength, century | yearOfCentury != 0 else { return nil }
        // 365 × year plus the leap years in 0..<year, ⌈year/4⌉ − ⌈year/100⌉ + ⌈year/400⌉, where
        // ⌈year/4⌉ = 25 century + ⌈yearOfCentury/4⌉ and ⌈year/400⌉ = ⌈⌈year/100⌉/4⌉:
        // 36 525 = 100 × 365 + 25, and (1461 y + 3) / 4 = 365 y + ⌈y/4⌉.
        let centuriesStarted = century &+ (yearOfCentury == 0 ? 0 : 1)  // ⌈year/100⌉
        let daysBeforeYear =
            century &* 36_525 &+ ((yearOfCentury &* 1461 &+ 3) &>> 2)
            &- centuriesStarted &+ ((centuriesStarted &+ 3) &>> 2)  // since 0000-01-01
        let daysBeforeMonth = 30 &* (month &- 1) &+ ((entry &>> 2) & 7) &- 1
        // 719 528 days from 0000-01-01 to 1970-01-01. Safe: years 0...9999 fit Int32 day numbers.
        let days = Int(truncatingIfNeeded: daysBeforeYear &+ daysBeforeMonth &+ day) &- 1 &- 719_528
        return Int32(truncatingIfNeeded: days)
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
