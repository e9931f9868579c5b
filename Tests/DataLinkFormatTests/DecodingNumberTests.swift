import Colonnade
import DataLinkFormat
import ColonnadeTestSupport
import DecodingTestSupport
import Testing

@Suite("Decoding numbers in context")
struct DecodingNumberTests {
    static let tokens = [
        "86.90000000000001", "0", "-0", "-0.0", "0.0", "20400871", "844", "1e10", "1E-5", "-12.5e+3", "0.1e1",
        "123456789012345678901234567890", "2.2250738585072014e-308", "4.9e-324", "2.4703282292062327e-324",
        "1e-400", "-1e-400", "1.7976931348623157e308", "1e309", "0.30000000000000004", "9007199254740993",
        "158.61642206543", "28.121945213877797", "0.42270591588018", "1.0", "7.0", "573576400.0",
    ]

    func expectValues(_ table: QuoteTable, _ tokens: [String]) {
        #expect(table.rowCount == tokens.count)
        for (r, token) in tokens.enumerated() {
            let value = table.columns[0].doubleValue(at: r)
            #expect(value?.bitPattern == Double(token)!.bitPattern, "\(token): \(String(describing: value))")
        }
    }

    /// One row per token, dates ascending from 2000-01-01.
    func rows(_ format: (String, String) -> String) -> [String] {
        Self.tokens.enumerated().map { i, token in format(Day(daysSinceEpoch: 10_957 + Int32(i)).description, token) }
    }

    @Test func jsonNumbersEqualDoubleFromString() throws {
        let text =
            #"{"dataset_data":{"column_names":["Date","Value"],"data":["# + rows { "[\"\($0)\",\($1)]" }.joined(separator: ",") + "]}}"
        expectValues(try Decode.text(text).table, Self.tokens)
    }

    @Test func quotedJSONNumbersEqualDoubleFromString() throws {
        let text =
            #"{"dataset_data":{"column_names":["Date","Value"],"data":["# + rows { "[\"\($0)\", \"\($1)\"]" }.joined(separator: ",\n")
            + "]}}"
        expectValues(try Decode.text(text).table, Self.tokens)
    }

    @Test func csvNumbersEqualDoubleFromString() throws {
        let text = "Date,Value\r\n" + rows { "\($0),\($1)" }.joined(separator: "\r\n")
        expectValues(try Decode.text(text).table, Self.tokens)
        let quoted = "Date,Value\n" + rows { "\($0),\"\($1)\"" }.joined(separator: "\n") + "\n"
        expectValues(try Decode.text(quoted).table, Self.tokens)
    }

    @Test func nonNumbersAreErrors() {
        for bad in ["true", "false", "{}", "[]", "\"abc\"", "\"\"", "1.2.3", "--1", "0x10", "NaN", "Infinity", "nul", "\"1\\u0030\""] {
            let text = #"{"dataset_data":{"column_names":["Date","Value"],"data":[["2000-01-03","# + bad + "]]}}"
            guard case .badNumber(let p, _)? = Decode.error(text) else {
                Issue.record("\(bad): \(String(describing: Decode.error(text)))")
                continue
            }
            #expect(p.byteOffset == text.utf8.count - 4 - bad.utf8.count, "\(bad)")
            #expect(p.row == 1 && p.columnName == "Value")
        }
    }

    @Test func datatableNumbersMayBeIntegersOrFloats() throws {
        let text =
            #"{"datatable":{"data":[["BRK_A","2017-04-03",844,65.81,null,"1.5e3"]],"columns":[{"name":"ticker","type":"String"},{"name":"date","type":"Date"},{"name":"open","type":"BigDecimal(34,12)"},{"name":"close","type":"double"},{"name":"volume","type":"Integer"},{"name":"x","type":"integer"}]},"meta":{"next_cursor_id":"abc=="}}"#
        let response = try Decode.text(text, ticker: nil)
        #expect(response.nextCursorID == "abc==")
        let t = response.table
        #expect(t.tickers.map(\.symbol) == ["BRK.A"])
        #expect(t.columns.map { $0.doubleValue(at: 0) } == [844, 65.81, nil, 1500])
    }

    /// Seeded random decimals of 1…22 digits, both signs, with and without fractions and
    /// exponents — the decoders' inline path and their fallback must both equal Double(String).
    @Test func randomDecimalsInJSONAndCSVEqualDoubleFromString() throws {
        var rng = SplitMix64(seed: 77)
        var tokens: [String] = []
        for _ in 0 ..< 6_000 {
            let digits = 1 + Int(rng.next() % 22)
            var text = rng.next() % 4 == 0 ? "-" : ""
            var body = (0 ..< digits).map { _ in String(rng.next() % 10) }.joined()
            let point = Int(rng.next() % UInt64(digits + 1))
            if point < digits { body.insert(".", at: body.index(body.startIndex, offsetBy: point)) }
            if body.hasPrefix(".") { body = "0" + body }
            text += body
            if rng.next() % 8 == 0 { text += "e" + String(Int(rng.next() % 60) - 30) }
            tokens.append(text)
        }
        let dates = (0 ..< tokens.count).map { Day(daysSinceEpoch: 10_957 + Int32($0)).description }
        let csv = "Date,Value\n" + zip(dates, tokens).map { "\($0),\($1)" }.joined(separator: "\n")
        let json =
            #"{"dataset_data":{"column_names":["Date","Value"],"data":["#
            + zip(dates, tokens).map { "[\"\($0)\",\($1)]" }.joined(separator: ",") + "]}}"
        for text in [csv, json] {
            let table = try Decode.text(text).table
            for (r, token) in tokens.enumerated() where table.columns[0].doubleValue(at: r)?.bitPattern != Double(token)!.bitPattern {
                Issue.record("\(token): \(String(describing: table.columns[0].doubleValue(at: r)))")
                break
            }
        }
    }
}
