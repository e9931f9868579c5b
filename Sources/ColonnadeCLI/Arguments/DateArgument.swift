import Colonnade

/// `YYYY-MM-DD` option values: the engine's `Day` does the calendar; this only says, for a
/// usage error, what is wrong with a value it rejects.
enum DateArgument {
    /// The day number of `text`, or why it is not a date.
    static func parse(_ text: String) -> Result<Int32, DateProblem> {
        if let day = Day(text) { return .success(day.daysSinceEpoch) }
        let bytes = Array(text.utf8)
        func number(_ range: Range<Int>) -> Int? {
            var value = 0
            for byte in bytes[range] {
                guard byte >= UInt8(ascii: "0"), byte <= UInt8(ascii: "9") else { return nil }
                value = value * 10 + Int(byte - UInt8(ascii: "0"))
            }
            return value
        }
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-"),
            let year = number(0 ..< 4), let month = number(5 ..< 7), number(8 ..< 10) != nil
        else {
            return .failure(.notYearMonthDay)
        }
        guard (1 ... 12).contains(month) else { return .failure(.noSuchMonth(month)) }
        let length = (28 ... 31).last { Day(year: year, month: month, day: $0) != nil } ?? 28
        return .failure(.noSuchDay(year: year, month: month, daysInMonth: length))
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
            [
                "January", "February", "March", "April", "May", "June", "July",
                "August", "September", "October", "November", "December",
            ]
        }
    }
}
