import Foundation
import Testing
@testable import ColonnadeCLI

/// A small result with the awkward cases: nulls, NaN, ±0, ±∞, extreme numbers, dates across
/// 1970 and far from it, commas, quotes, line breaks, control characters and non-ASCII text.
private let columns = ["ticker", "date", "close", "volume", "note"].map { ResultColumn(name: $0) }
private let rows: [[Cell]] = [
    [.text("AAPL"), .day(16_072), .number(553.13), .integer(8_398_851), .text("Apple, Inc. \"AAPL\"")],
    [.null, .null, .null, .null, .null],
    [.text("ÆØÅ 日本"), .day(-1), .number(-0.0), .integer(.max), .text("line\nbreak\r\ttab\u{1}\u{2028}")],
    [.text("BRK_A"), .day(0), .number(.nan), .integer(-5), .text("")],
    [.text("X"), .day(2_932_896), .number(.infinity), .integer(.min), .text("back\\slash 😀")],
    [.text("Y"), .day(-100_000), .number(-.infinity), .integer(0), .text(" lead and trail ")],
    [.text("Z"), .day(16_073), .number(2_411_643.0), .integer(1), .text("é")],
    [.text("Z"), .day(16_074), .number(1e-7), .integer(2), .text("x")],
    [.text("Z"), .day(16_075), .number(.greatestFiniteMagnitude), .integer(3), .text("x")],
    [.text("Z"), .day(16_076), .number(.leastNonzeroMagnitude), .integer(4), .text("x")],
    [.text("Z"), .day(16_077), .number(0.1 + 0.2), .integer(5), .text("x")],
]

private func render(_ formatter: some ResultFormatter, columns: [ResultColumn] = columns, rows: [[Cell]] = rows) throws -> String {
    var source = MaterializedRows(columns: columns, rows: rows)
    let writer = MemoryOutputWriter()
    try formatter.write(&source, to: writer)
    return writer.text
}

/// `YYYY-MM-DD` for a day number, by Foundation's calendar: the reference the formatters'
/// arithmetic is checked against. Foundation switches to the Julian calendar before
/// 1582-10-15, so it is a reference for later days only.
private func referenceDayText(_ day: Int32) -> String {
    var calendar = Calendar(identifier: .gregorian)
    calendar.timeZone = TimeZone(identifier: "UTC")!
    let date = Date(timeIntervalSince1970: TimeInterval(day) * 86_400)
    let parts = calendar.dateComponents([.year, .month, .day], from: date)
    return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
}

@Suite struct FormatterTests {
    // MARK: CSV

    @Test func csvParsesBackToTheSameCells() throws {
        let text = try render(CSVFormatter())
        let records = try parseCSV(text)
        #expect(records.count == rows.count + 1)
        #expect(records[0].map(\.text) == columns.map(\.name))
        for (row, record) in zip(rows, records.dropFirst()) {
            #expect(record.count == row.count)
            for (cell, field) in zip(row, record) {
                expect(field, represents: cell)
            }
        }
    }

    @Test func csvQuotesOnlyWhatRFC4180Requires() throws {
        let text = try render(CSVFormatter())
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines[0] == "ticker,date,close,volume,note")
        #expect(lines[1] == "AAPL,2014-01-02,553.13,8398851,\"Apple, Inc. \"\"AAPL\"\"\"")
        #expect(lines[2] == ",,,,")
        #expect(text.contains("BRK_A,1970-01-01,nan,-5,\"\"\n"))
        #expect(text.contains("Z,2014-01-03,2411643.0,1,é\n"))
        #expect(text.contains("Y,1696-03-17,-inf,0, lead and trail \n"))
        #expect(text.hasSuffix("\n"))
    }

    // MARK: JSON

    @Test func jsonParsesBackWithFoundation() throws {
        let text = try render(JSONFormatter(layout: .array))
        let objects = try #require(try JSONSerialization.jsonObject(with: Data(text.utf8)) as? [[String: Any]])
        #expect(objects.count == rows.count)
        for (row, object) in zip(rows, objects) {
            #expect(Set(object.keys) == Set(columns.map(\.name)))
            for (column, cell) in zip(columns, row) {
                expect(object[column.name], represents: cell)
            }
        }
    }

    @Test func ndjsonIsOneParsableObjectPerLine() throws {
        let text = try render(JSONFormatter(layout: .lines))
        let lines = text.split(separator: "\n", omittingEmptySubsequences: false)
        #expect(lines.count == rows.count + 1 && lines.last == "")
        for (row, line) in zip(rows, lines) {
            let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
            for (column, cell) in zip(columns, row) {
                expect(object[column.name], represents: cell)
            }
        }
    }

    @Test func jsonKeepsKeyOrderAndRoundTripSpellings() throws {
        let text = try render(JSONFormatter(layout: .lines))
        let lines = text.split(separator: "\n")
        #expect(lines[0] == #"{"ticker":"AAPL","date":"2014-01-02","close":553.13,"volume":8398851,"note":"Apple, Inc. \"AAPL\""}"#)
        #expect(lines[1] == #"{"ticker":null,"date":null,"close":null,"volume":null,"note":null}"#)
        #expect(
            lines[2]
                == #"{"ticker":"ÆØÅ 日本","date":"1969-12-31","close":-0.0,"volume":9223372036854775807,"note":"line\nbreak\r\ttab\u0001\u2028"}"#
        )
        #expect(lines[3].contains(#""close":null"#))  // NaN
        #expect(lines[4].contains(#""close":null"#))  // +inf
        #expect(lines[4].contains(#""note":"back\\slash 😀""#))
        #expect(lines[6].contains(#""close":2411643.0"#))
    }

    @Test func jsonNumbersRoundTripExactly() throws {
        let text = try render(JSONFormatter(layout: .lines))
        for (row, line) in zip(rows, text.split(separator: "\n")) {
            guard case .number(let number) = row[2], number.isFinite else { continue }
            let token = try #require(line.firstRange(of: #""close":"#).map { line[$0.upperBound...].prefix { $0 != "," } })
            #expect(Double(String(token))?.bitPattern == number.bitPattern, "\(token) for \(number)")
        }
    }

    @Test func emptyResultsAreStillValidDocuments() throws {
        let json = try render(JSONFormatter(layout: .array), rows: [])
        #expect(json == "[]\n")
        #expect(try JSONSerialization.jsonObject(with: Data(json.utf8)) as? [Any] != nil)
        #expect(try render(JSONFormatter(layout: .lines), rows: []) == "")
        #expect(try render(CSVFormatter(), rows: []) == "ticker,date,close,volume,note\n")
    }

    @Test func jsonArrayPutsOneObjectPerLine() throws {
        let text = try render(JSONFormatter(layout: .array), rows: Array(rows.prefix(2)))
        #expect(
            text == """
                [
                {"ticker":"AAPL","date":"2014-01-02","close":553.13,"volume":8398851,"note":"Apple, Inc. \\"AAPL\\""},
                {"ticker":null,"date":null,"close":null,"volume":null,"note":null}
                ]

                """)
    }

    // MARK: Table

    @Test func tableAlignsNumbersRightAndTextLeft() throws {
        let table = try render(
            TableFormatter(),
            columns: ["ticker", "date", "close", "volume"].map { ResultColumn(name: $0) },
            rows: [
                [.text("AAPL"), .day(16_072), .number(553.13), .number(2_411_643.0)],
                [.text("BRK_A"), .day(16_073), .null, .number(-0.0)],
                [.text("日本"), .null, .number(.nan), .number(1e-7)],
            ])
        #expect(
            table == """
                ticker  date         close   volume
                ------  ----------  ------  -------
                AAPL    2014-01-02  553.13  2411643
                BRK_A   2014-01-03               -0
                日本                     nan    1e-07

                """)
    }

    @Test func computedValuesHaveAtMostSixDecimalsAlignedOnThePoint() throws {
        let table = try render(
            TableFormatter(),
            columns: [ResultColumn(name: "ticker"), ResultColumn(name: "mean(close)", maximumDecimals: 6), ResultColumn(name: "close")],
            rows: [
                [.text("AAPL"), .number(283.1645595238097), .number(553.13)],
                [.text("KO"), .number(11.981827160493838), .number(40.5)],
                [.text("X"), .number(2.0), .number(7)],
                [.text("Y"), .number(-0.0000001), .number(.infinity)],
            ])
        #expect(
            table == """
                ticker  mean(close)   close
                ------  -----------  ------
                AAPL     283.16456   553.13
                KO        11.981827   40.5
                X          2           7
                Y          0            inf

                """)
        // --precision: every number column, at most N decimals; CSV keeps every digit.
        let two = try render(
            TableFormatter(precision: 2), columns: [ResultColumn(name: "x", maximumDecimals: 6)],
            rows: [[.number(283.1645595238097)], [.number(1.5)]])
        #expect(two == "     x\n------\n283.16\n  1.5\n")
        let csv = try render(CSVFormatter(), columns: [ResultColumn(name: "x", maximumDecimals: 6)], rows: [[.number(283.1645595238097)]])
        #expect(csv == "x\n283.1645595238097\n")
    }

    @Test(arguments: [(cap: 4, rows: 10), (cap: 5, rows: 10), (cap: 4, rows: 4), (cap: 4, rows: 5), (cap: 1, rows: 3)])
    func aCappedTableShowsTheFirstAndLastRows(cap: Int, rows count: Int) throws {
        let rows = (0 ..< count).map { [Cell.integer(Int64($0))] }
        for known in [true, false] {
            let output = MemoryOutputWriter()
            var source = MaterializedRows(columns: [ResultColumn(name: "n")], rows: rows)
            let shown = try TableFormatter(rowCap: cap).writeTable(&source, count: known ? count : nil, to: output)
            let lines = output.text.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }
            let head = (cap + 1) / 2, tail = cap / 2
            if count <= cap {
                #expect(lines == ["n", "-"] + (0 ..< count).map(String.init))
                #expect(shown == count)
            } else {
                let omitted = count - head - tail
                #expect(
                    lines == ["n", "-"] + (0 ..< head).map(String.init) + ["… \(omitted) more \(omitted == 1 ? "row" : "rows") …"]
                        + (count - tail ..< count).map(String.init), "known: \(known)")
                #expect(shown == head + tail)
            }
        }
    }

    @Test func anUncappedTableStreamsPastTheMeasuredRows() throws {
        // Rows past the first measured ones are written with the measured widths, as they come.
        let count = TableFormatter.measuredRows + 3
        var source = MaterializedRows(
            columns: [ResultColumn(name: "n")],
            rows: (0 ..< count).map { [Cell.integer($0 == count - 1 ? 123_456_789 : 1)] })
        let output = MemoryOutputWriter()
        #expect(try TableFormatter().writeTable(&source, count: nil, to: output) == count)
        let lines = output.text.split(separator: "\n")
        #expect(lines.count == count + 2)
        #expect(lines[2] == "1" && lines.last == "123456789")
    }

    @Test func tableEscapesControlCharactersToKeepOneLinePerRow() throws {
        let table = try render(
            TableFormatter(), columns: [ResultColumn(name: "note")],
            rows: [[.text("a\nb\tc\u{1B}")]])
        #expect(table == "note\n-------------\na\\nb\\tc\\u{1B}\n")
    }

    @Test func footerGroupsThousandsAndScalesDurations() {
        #expect(
            TableFooter(shown: 1_234, matched: 20_000_000, elapsed: .microseconds(3_100)).text
                == "1,234 of 20,000,000 matching rows shown in 3.1 ms")
        #expect(TableFooter(shown: 0, matched: 0).text == "0 of 0 matching rows shown")
        #expect(TableFooter(shown: 1, matched: 1).text == "1 of 1 matching row shown")
        #expect(TableFooter(shown: 5, matched: 1_000, elapsed: .microseconds(42)).text == "5 of 1,000 matching rows shown in 42 µs")
        #expect(TableFooter(shown: 5, matched: 1_000, elapsed: .milliseconds(2_345)).text == "5 of 1,000 matching rows shown in 2.35 s")
        #expect((-1_234_567).groupedText == "-1,234,567")
        #expect(100.groupedText == "100")
    }

    @Test func formatNamesMatchTheirFormatters() throws {
        #expect(OutputFormat.allCases.map(\.rawValue) == ["table", "csv", "json", "ndjson"])
        #expect(try render(OutputFormat.ndjson.formatter()) == render(JSONFormatter(layout: .lines)))
        #expect(try render(OutputFormat.csv.formatter()) == render(CSVFormatter()))
    }

    // MARK: Dates

    @Test func dayTextMatchesFoundationsCalendar() {
        var days: [Int32] = [-141_427, -1, 0, 1, 59, 60, 365, 11_016, 16_071, 16_072, 2_932_896]
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        for _ in 0 ..< 2_000 {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            days.append(Int32(truncatingIfNeeded: Int64(state >> 33) % 3_074_323) - 141_427)
        }
        for day in days {
            #expect(dayText(day) == referenceDayText(day), "day \(day)")
        }
    }

    @Test func daysBeforeTheGregorianReformAreProleptic() {
        #expect(dayText(-719_162) == "0001-01-01")  // Hinnant's days_from_civil(1, 1, 1)
        #expect(dayText(-141_428) == "1582-10-14")  // Foundation would say 1582-10-04 (Julian)
    }

    @Test func dateParsingInvertsFormatting() throws {
        for day: Int32 in [-719_162, -1, 0, 11_016, 16_072, 2_932_896] {
            #expect(try DateArgument.parse(dayText(day)).get() == day)
        }
    }
}

// MARK: Checking cells against parsed values

/// Checks that a CSV field reads back as `cell`.
private func expect(_ field: CSVField, represents cell: Cell, sourceLocation: SourceLocation = #_sourceLocation) {
    switch cell {
    case .null:
        #expect(field.text.isEmpty && !field.wasQuoted, sourceLocation: sourceLocation)
    case .integer(let value):
        #expect(Int64(field.text) == value, sourceLocation: sourceLocation)
    case .number(let value):
        let parsed = Double(field.text)
        #expect(
            parsed?.bitPattern == value.bitPattern || (parsed?.isNaN == true && value.isNaN),
            "\(field.text) for \(value)", sourceLocation: sourceLocation)
    case .day(let day):
        #expect(field.text == referenceDayText(day), sourceLocation: sourceLocation)
    case .text(let text):
        #expect(field.text == text, sourceLocation: sourceLocation)
        if text.isEmpty { #expect(field.wasQuoted, "empty text differs from null", sourceLocation: sourceLocation) }
    }
}

/// Checks that a value from `JSONSerialization` represents `cell`.
private func expect(_ value: Any?, represents cell: Cell, sourceLocation: SourceLocation = #_sourceLocation) {
    switch cell {
    case .null:
        #expect(value is NSNull, sourceLocation: sourceLocation)
    case .number(let number) where !number.isFinite:
        #expect(value is NSNull, "JSON cannot hold \(number)", sourceLocation: sourceLocation)
    case .number(let number):
        // swift-corelibs-foundation's JSON number parser is not correctly rounded (it reads
        // 0.30000000000000004 as 0.3000000000000001), so allow one ulp here; the exact
        // spelling is checked with `Double(String)` in `jsonNumbersRoundTripExactly`.
        let parsed = (value as? NSNumber)?.doubleValue ?? .nan
        #expect(
            parsed == number || parsed.nextUp == number || parsed.nextDown == number,
            "\(String(describing: value)) for \(number)", sourceLocation: sourceLocation)
    case .integer(let integer):
        #expect(
            (value as? NSNumber)?.int64Value == integer, "\(String(describing: value)) for \(integer)",
            sourceLocation: sourceLocation)
    case .day(let day):
        #expect(value as? String == referenceDayText(day), sourceLocation: sourceLocation)
    case .text(let text):
        #expect(value as? String == text, sourceLocation: sourceLocation)
    }
}

// MARK: A reference CSV reader

struct CSVField: Equatable {
    var text: String
    var wasQuoted: Bool
}

struct CSVSyntaxError: Error {
    var offset: Int
}

/// Reads RFC 4180 records (LF or CRLF line ends) the obvious way, one character at a time,
/// remembering whether each field was quoted so empty text and null can be told apart.
func parseCSV(_ text: String) throws -> [[CSVField]] {
    var records: [[CSVField]] = []
    var record: [CSVField] = []
    var field = CSVField(text: "", wasQuoted: false)
    var characters = Array(text.unicodeScalars)[...]
    var offset = 0
    var fieldStarted = false
    func next() -> Unicode.Scalar? {
        offset += 1
        return characters.popFirst()
    }
    while let character = next() {
        switch character {
        case "\"" where !fieldStarted:
            field.wasQuoted = true
            fieldStarted = true
            while true {
                guard let inner = next() else { throw CSVSyntaxError(offset: offset) }
                if inner == "\"" {
                    if characters.first == "\"" {
                        _ = next()
                        field.text.unicodeScalars.append("\"")
                    } else {
                        break
                    }
                } else {
                    field.text.unicodeScalars.append(inner)
                }
            }
        case ",":
            record.append(field)
            field = CSVField(text: "", wasQuoted: false)
            fieldStarted = false
        case "\n", "\r":
            if character == "\r", characters.first == "\n" { _ = next() }
            record.append(field)
            records.append(record)
            record = []
            field = CSVField(text: "", wasQuoted: false)
            fieldStarted = false
        default:
            if field.wasQuoted { throw CSVSyntaxError(offset: offset) }
            fieldStarted = true
            field.text.unicodeScalars.append(character)
        }
    }
    if fieldStarted || !record.isEmpty {
        record.append(field)
        records.append(record)
    }
    return records
}
