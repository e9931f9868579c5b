import Testing

@testable import Colonnade
import ColonnadeTestSupport

// Differential tests of `Day.parseDay` (two loads, SWAR validation, division-free day number)
// against the byte-at-a-time parser it replaced, kept below verbatim as the reference: the same
// nil, the same day number, for every date of years 0...9999, every invalid day of every month,
// wrong months, and every byte position mutated on seeded random dates. The 10 bytes always sit
// right against a page the process may not read (after them, or before them), so a load outside
// them crashes the test.

/// `Day.parseDay` before the SWAR version, with the helpers it called, verbatim but for the
/// refusal of year 0000 (outside the storable range since it was written).
private func referenceParseDay(_ start: UnsafePointer<UInt8>, count: Int) -> Int32? {
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
    guard
        month >= 1 && month <= 12 && day >= 1
            && day <= referenceDaysInMonth(year: year, month: month)
    else { return nil }
    // Added with the storable range (Day.storableDayNumbers): year 0000 is refused.
    guard year >= 1 else { return nil }
    return Int32(truncatingIfNeeded: referenceUnsafeDays(year: year, month: month, day: day))
}

private func referenceDaysInMonth(year: Int, month: Int) -> Int {
    if month == 2 {
        let isLeap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        return isLeap ? 29 : 28
    }
    return 30 | ((month ^ (month &>> 3)) & 1)
}

private func referenceUnsafeDays(year: Int, month: Int, day: Int) -> Int {
    let y = month <= 2 ? year - 1 : year
    let era = (y >= 0 ? y : y - 399) / 400
    let yearOfEra = y - era * 400
    let dayOfYear = (153 * (month > 2 ? month - 3 : month + 9) + 2) / 5 + day - 1
    let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
    return era * 146_097 + dayOfEra - 719_468
}

@Suite struct DayParsingTests {
    /// Every `YYYY-MM-DD` with year 0000...9999, month 00...13 and day 00...32: every valid date,
    /// days 00, 29, 30, 31 and 32 of every month, months 00 and 13. The bytes are rewritten in
    /// place, digit by digit, at the end of a guarded page.
    @Test func everyDateOfEveryYearAndEveryInvalidDayMatchTheReference() {
        let memory = GuardedBytes(pages: 1)
        var checked = 0, valid = 0
        var mismatches: [String] = []
        memory.withBytesAtEnd(Array("0000-00-00".utf8)) { constStart in
            // Safe: GuardedBytes' pages are writable; the test rewrites its own 10 bytes.
            let start = UnsafeMutablePointer(mutating: constStart)
            let zero = UInt8(ascii: "0")
            for year in 0 ... 9999 {
                start[0] = zero &+ UInt8(year / 1000)
                start[1] = zero &+ UInt8(year / 100 % 10)
                start[2] = zero &+ UInt8(year / 10 % 10)
                start[3] = zero &+ UInt8(year % 10)
                for month in 0 ... 13 {
                    start[5] = zero &+ UInt8(month / 10)
                    start[6] = zero &+ UInt8(month % 10)
                    for day in 0 ... 32 {
                        start[8] = zero &+ UInt8(day / 10)
                        start[9] = zero &+ UInt8(day % 10)
                        let actual = Day.parseDay(constStart, count: 10)
                        let expected = referenceParseDay(constStart, count: 10)
                        checked += 1
                        if expected != nil { valid += 1 }
                        if actual != expected && mismatches.count < 10 {
                            mismatches.append("\(year)-\(month)-\(day): \(String(describing: actual)) vs \(String(describing: expected))")
                        }
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(checked == 10_000 * 14 * 33)
        #expect(valid == 3_652_059)  // 0001-01-01...9999-12-31 (year 0000, 366 days, is refused)
    }

    /// Each of the 10 positions of a seeded random valid date replaced by each of NUL, `/`, `:`,
    /// `-`, space, DEL, 0x80, 0xFF and every digit; the bytes once right before the trailing guard
    /// page, once right after the leading one.
    @Test func everyBytePositionMutatedMatchesTheReference() {
        let memory = GuardedBytes(pages: 1)
        var rng = SplitMix64(seed: 20_261_126)
        let replacements: [UInt8] =
            [
                0x00, UInt8(ascii: "/"), UInt8(ascii: ":"), UInt8(ascii: "-"), UInt8(ascii: " "),
                0x7F, 0x80, 0xFF,
            ] + Array(UInt8(ascii: "0") ... UInt8(ascii: "9"))
        let first = Int(Day.days(year: 0, month: 1, day: 1)!), last = Int(Day.days(year: 9999, month: 12, day: 31)!)
        var checked = 0, valid = 0
        var mismatches: [String] = []
        for _ in 0 ..< 1_500 {
            var bytes = [UInt8](repeating: 0, count: 10)
            bytes.withUnsafeMutableBufferPointer { Day.writeDay(Int32(rng.inRange(first ... last)), to: $0.baseAddress!) }
            for position in 0 ..< 10 {
                for replacement in replacements {
                    var mutated = bytes
                    mutated[position] = replacement
                    for atStart in [false, true] {
                        let (actual, expected) =
                            atStart
                            ? memory.withBytesAtStart(mutated) { (Day.parseDay($0, count: 10), referenceParseDay($0, count: 10)) }
                            : memory.withBytesAtEnd(mutated) { (Day.parseDay($0, count: 10), referenceParseDay($0, count: 10)) }
                        checked += 1
                        if expected != nil { valid += 1 }
                        if actual != expected && mismatches.count < 10 {
                            mismatches.append(
                                "\(String(decoding: mutated, as: UTF8.self).debugDescription)\(atStart ? " (at start)" : ""): "
                                    + "\(String(describing: actual)) vs \(String(describing: expected))")
                        }
                    }
                }
            }
        }
        #expect(mismatches.isEmpty, "\(mismatches)")
        #expect(checked == 1_500 * 10 * 18 * 2)
        // Both outcomes occur often: the comparison is not all nil.
        #expect(valid > checked / 10 && valid < checked / 2, "valid \(valid) of \(checked)")
    }

    /// Any length but 10 is nil without reading a byte past `count` (the bytes end at the guard).
    @Test func lengthsOtherThanTenAreNilAndReadNothingPastTheEnd() {
        let memory = GuardedBytes(pages: 1)
        let text = Array("2014-01-02T00:00".utf8)
        for count in 0 ... text.count {
            let bytes = Array(text.prefix(count))
            let parsed = memory.withBytesAtEnd(bytes) { Day.parseDay($0, count: count) }
            #expect(parsed == (count == 10 ? 16_072 : nil), "count \(count)")
        }
    }

    @Test func knownDays() {
        let memory = GuardedBytes(pages: 1)
        let known: [(String, Int32?)] = [
            ("1970-01-01", 0), ("1969-12-31", -1), ("2000-02-29", 11_016), ("2000-03-01", 11_017),
            ("1600-02-29", -135_081), ("0001-01-01", -719_162), ("0000-01-01", nil), ("0000-12-31", nil),
            ("9999-12-31", 2_932_896), ("2017-03-27", 17_252),
            ("1900-02-29", nil), ("2100-02-29", nil), ("2001-02-29", nil), ("2014-04-31", nil),
        ]
        for (text, expected) in known {
            #expect(memory.withBytesAtEnd(Array(text.utf8)) { Day.parseDay($0, count: 10) } == expected, "\(text)")
        }
    }
}
