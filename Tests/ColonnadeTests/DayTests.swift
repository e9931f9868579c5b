import Foundation
import Testing

@testable import Colonnade
import ColonnadeTestSupport

@Suite struct DayTests {
    @Test func knownDays() {
        #expect(Day.days(year: 1970, month: 1, day: 1) == 0)
        #expect(Day.days(year: 1969, month: 12, day: 31) == -1)
        #expect(Day.days(year: 2000, month: 3, day: 1) == 11_017)
        #expect(Day.days(year: 1, month: 1, day: 1) == -719_162)
        #expect(Day.days(year: 9999, month: 12, day: 31) == 2_932_896)
        #expect(Day("2000-02-29")?.daysSinceEpoch == 11_016)
        #expect(Day("2017-03-27")?.daysSinceEpoch == 17_252)
        #expect(Day.format(day: 0) == "1970-01-01")
        #expect(Day.format(day: -1) == "1969-12-31")
        #expect(Day.components(ofDay: 11_016) == (2000, 2, 29))
    }

    @Test func everyDayFromYear1ToYear9999RoundTrips() {
        let first = Day.days(year: 1, month: 1, day: 1)!
        let last = Day.days(year: 9999, month: 12, day: 31)!
        var expected = (year: 1, month: 1, day: 1)
        var failures: [Int32] = []
        var bytes = [UInt8](repeating: 0, count: 10)
        for day in first ... last {
            let parts = Day.components(ofDay: day)
            bytes.withUnsafeMutableBufferPointer { Day.writeDay(day, to: $0.baseAddress!) }
            let parsed = bytes.withUnsafeBufferPointer { Day.parseDay($0.baseAddress!, count: 10) }
            if parts != expected
                || Day.days(year: parts.year, month: parts.month, day: parts.day) != day
                || parsed != day
            {
                if failures.count < 10 { failures.append(day) }
            }
            // The next calendar day, counted the slow way.
            let isLeap = expected.year % 4 == 0 && (expected.year % 100 != 0 || expected.year % 400 == 0)
            let lengths = [31, isLeap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31]
            if expected.day < lengths[expected.month - 1] {
                expected.day += 1
            } else if expected.month < 12 {
                expected = (expected.year, expected.month + 1, 1)
            } else {
                expected = (expected.year + 1, 1, 1)
            }
        }
        #expect(last - first + 1 == 3_652_059)
        #expect(failures.isEmpty, "days that do not round-trip: \(failures)")
        // format and parseDay(String) on a sample (String building is slow in debug).
        for day in stride(from: first, through: last, by: 997) {
            #expect(Day(Day.format(day: day))?.daysSinceEpoch == day)
        }
    }

    @Test(arguments: [
        "2001-02-29", "2000-02-30", "1900-02-29", "2014-13-01", "2014-00-10", "2014-01-00", "2014-01-32",
        "2014-04-31", "2014-1-01", "2014-01-1", "14-01-01", "2014/01/01", "2014-01/01", "20140101",
        "2014-01-01 ", " 2014-01-01", "2014-01-01T", "201a-01-01", "2014-0a-01", "2014-01-0a", "abcd-ef-gh",
        "", "2014-01", "+014-01-01", "-014-01-01", "2014-+1-01", "2014--1-01", "２０１４-01-01",
    ])
    func invalidDatesAreRejected(_ text: String) {
        #expect(Day(text)?.daysSinceEpoch == nil)
    }

    @Test func validationOfComponents() {
        #expect(Day.days(year: 2000, month: 2, day: 29) == 11_016)
        #expect(Day.days(year: 2001, month: 2, day: 29) == nil)
        #expect(Day.days(year: 1900, month: 2, day: 29) == nil)
        #expect(Day.days(year: 2014, month: 13, day: 1) == nil)
        #expect(Day.days(year: 2014, month: 0, day: 1) == nil)
        #expect(Day.days(year: 2014, month: 6, day: 31) == nil)
        #expect(Day.days(year: 2014, month: 6, day: 0) == nil)
        #expect(Day.days(year: Int.max, month: 1, day: 1) == nil)
        #expect(Day.days(year: Int.min, month: 1, day: 1) == nil)
        #expect(Day.days(year: 0, month: 2, day: 29) != nil)  // year 0 (1 BC) is a leap year
        let limit = Day.components(ofDay: .max)
        #expect(Day.days(year: limit.year, month: limit.month, day: limit.day) == .max)
        let lower = Day.components(ofDay: .min)
        #expect(Day.days(year: lower.year, month: lower.month, day: lower.day) == .min)
    }

    @Test func formatOutsideFourDigitYears() {
        let year10000 = Day.days(year: 10_000, month: 1, day: 1)!
        #expect(Day.format(day: year10000) == "10000-01-01")
        let yearMinus1 = Day.days(year: -1, month: 12, day: 31)!
        #expect(Day.format(day: yearMinus1) == "-0001-12-31")
        #expect(Day.format(day: Day.days(year: 0, month: 1, day: 1)!) == "0000-01-01")
    }

    @Test func agreesWithFoundationGregorianCalendarInUTC() {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        var rng = SplitMix64(seed: 7)
        var failures: [String] = []
        for _ in 0 ..< 3_000 {
            // Foundation switches to Julian before 1582; compare from 1600 on.
            let year = rng.inRange(1600 ... 9999), month = rng.inRange(1 ... 12), day = rng.inRange(1 ... 28)
            let components = DateComponents(year: year, month: month, day: day)
            guard let date = calendar.date(from: components) else { continue }
            let expected = Int32(floor(date.timeIntervalSince1970 / 86_400))
            let dayNumber = Day.days(year: year, month: month, day: day)
            let back = calendar.dateComponents([.year, .month, .day], from: Date(timeIntervalSince1970: Double(expected) * 86_400))
            if dayNumber != expected || back.year != year || back.month != month || back.day != day {
                failures.append("\(year)-\(month)-\(day)")
            }
        }
        #expect(failures.isEmpty, "\(failures.prefix(10))")
    }

    /// The public face: parse, format, components, arithmetic, order.
    @Test func publicParsingFormattingAndArithmetic() {
        let day = Day("2000-02-29")!
        #expect(day.daysSinceEpoch == 11_016)
        #expect(day.components == (2000, 2, 29))
        #expect(day.description == "2000-02-29")
        #expect(Day(day.description) == day)  // LosslessStringConvertible
        #expect(Day(year: 2000, month: 2, day: 29) == day)
        #expect(Day(year: 2001, month: 2, day: 29) == nil)
        #expect(Day(2000, 3, 1) - day == 1)
        #expect(day - Day(2000, 3, 1) == -1)
        #expect(day.adding(days: 1) == Day(2000, 3, 1))
        #expect(day.adding(days: -11_016) == Day(daysSinceEpoch: 0))
        #expect(Day(daysSinceEpoch: .max).adding(days: 1) == nil)
        #expect(Day(daysSinceEpoch: .min).adding(days: -1) == nil)
        #expect(Day(daysSinceEpoch: 0).description == "1970-01-01")
        #expect(Day(2014, 1, 2) < Day(2014, 1, 3))
        #expect(Day("2014-1-2") == nil && Day("2014/01/02") == nil && Day("") == nil)
        #expect(Day(year: 5, month: 3, day: 9)?.description == "0005-03-09")
    }
}
