// STOP-GAP: replace this file with the engine's `CivilDate` (its parser for `YYYY-MM-DD` and
// `CivilDate.format(day:)`) as soon as it lands; it exists only so the CLI can validate dates
// and print them before then. Algorithms: Howard Hinnant, "chrono-Compatible Low-Level Date
// Algorithms" (days_from_civil, civil_from_days), proleptic Gregorian calendar.

/// Calendar arithmetic on days since 1970-01-01, internal to the CLI until the engine's
/// `CivilDate` replaces it.
enum CivilDateStopgap {
    /// The days in `month` (1...12) of `year`.
    static func daysInMonth(_ month: Int, year: Int) -> Int {
        switch month {
        case 2: isLeapYear(year) ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
    }

    static func isLeapYear(_ year: Int) -> Bool {
        year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
    }

    /// What is wrong with `text` as a `YYYY-MM-DD` date, or its day number when nothing is.
    static func parse(_ text: String) -> Result<Int32, DateProblem> {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else {
            return .failure(.notYearMonthDay)
        }
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard let year = number(0..<4), let month = number(5..<7), let day = number(8..<10) else {
            return .failure(.notYearMonthDay)
        }
        guard (1...12).contains(month) else { return .failure(.noSuchMonth(month)) }
        let length = daysInMonth(month, year: year)
        guard (1...length).contains(day) else {
            return .failure(.noSuchDay(year: year, month: month, daysInMonth: length))
        }
        return .success(days(year: year, month: month, day: day))
    }

    /// Days since 1970-01-01 of a valid calendar date (days_from_civil).
    static func days(year: Int, month: Int, day: Int) -> Int32 {
        let y = month <= 2 ? year - 1 : year
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return Int32(era * 146_097 + dayOfEra - 719_468)
    }

    /// `YYYY-MM-DD` for days since 1970-01-01 (civil_from_days). Years outside 0...9999 print
    /// with as many digits as they need and a leading `-` when negative.
    static func format(day: Int32) -> String {
        let z = Int(day) + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let shiftedMonth = (5 * dayOfYear + 2) / 153
        let dayOfMonth = dayOfYear - (153 * shiftedMonth + 2) / 5 + 1
        let month = shiftedMonth < 10 ? shiftedMonth + 3 : shiftedMonth - 9
        let year = yearOfEra + era * 400 + (month <= 2 ? 1 : 0)
        return padded(year, 4) + "-" + padded(month, 2) + "-" + padded(dayOfMonth, 2)
    }

    private static func padded(_ value: Int, _ width: Int) -> String {
        let digits = String(value.magnitude)
        let zeros = String(repeating: "0", count: max(0, width - digits.count))
        return (value < 0 ? "-" : "") + zeros + digits
    }

    /// Why a string is not a date; the `description` completes "invalid value …: ".
    enum DateProblem: Error, Equatable, CustomStringConvertible {
        case notYearMonthDay
        case noSuchMonth(Int)
        case noSuchDay(year: Int, month: Int, daysInMonth: Int)

        var description: String {
            switch self {
            case .notYearMonthDay:
                "expected a date YYYY-MM-DD"
            case .noSuchMonth(let month):
                "there is no month \(month)"
            case .noSuchDay(let year, let month, let length):
                "\(monthNames[month - 1]) \(year) has \(length) days"
            }
        }

        private var monthNames: [String] {
            ["January", "February", "March", "April", "May", "June", "July",
             "August", "September", "October", "November", "December"]
        }
    }
}
