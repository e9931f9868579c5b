import Colonnade
import DataLinkFormat
import ColonnadeTestSupport
import DecodingTestSupport
import Testing

@Suite("Decoding errors name where and what")
struct DecodingErrorTests {
    static let head = #"{"dataset_data":{"column_names":["Date","Open","High"],"data":["#

    func offset(of needle: String, in text: String) -> Int {
        let bytes = Array(text.utf8), n = Array(needle.utf8)
        for i in 0 ... bytes.count - n.count where Array(bytes[i ..< i + n.count]) == n { return i }
        return -1
    }

    @Test func csvBadNumberMessageNamesFileLineColumnByteRowAndColumn() {
        let text = "Date,Open,High\n2017-01-03,1.0,2.0\n2017-01-02,1.5,abc\n"
        let error = Decode.error(text, source: "WIKI-FDX.csv")
        guard case let .badNumber(p, found)? = error else {
            Issue.record("\(String(describing: error))")
            return
        }
        #expect(found == "'abc'")
        #expect(p.byteOffset == offset(of: "abc", in: text))
        #expect(p.line == 3 && p.column == 16 && p.row == 2 && p.columnName == "High")
        #expect(error!.description == "WIKI-FDX.csv:3:16 (byte \(p.byteOffset)): row 2, column 'High': expected a number, found 'abc'")
    }

    @Test func truncatedJSONIsTruncated() {
        let text = Self.head + #"["2017-01-03",1.0,2.0],["2017-01-02",1.5,"#
        guard case let .truncated(p, _)? = Decode.error(text) else {
            Issue.record("\(String(describing: Decode.error(text)))")
            return
        }
        #expect(p.byteOffset == text.utf8.count)
        #expect(p.row == 2 && p.columnName == "High")
        // Truncated anywhere: always an error, never a crash or a partial table.
        for cut in 0 ..< text.utf8.count {
            #expect(Decode.failure(String(decoding: Array(text.utf8)[..<cut], as: UTF8.self)) != nil)
        }
    }

    @Test func wrongNestingIsMalformed() {
        let text = Self.head + #"["2017-01-03",1.0,2.0}]}}"#
        guard case let .malformed(p, expected, found)? = Decode.error(text) else {
            Issue.record("\(String(describing: Decode.error(text)))")
            return
        }
        #expect(p.byteOffset == offset(of: "}]}}", in: text) && p.row == 1)
        #expect(expected.contains("']'") && found == "'}'")
        let nested = #"{"dataset_data":{"column_names":["Date","Open","High"],"data":{"a":1}}}"#
        guard case .malformed? = Decode.error(nested) else {
            Issue.record("\(String(describing: Decode.error(nested)))")
            return
        }
    }

    @Test func rowWithTooFewValues() {
        let text = Self.head + #"["2017-01-03",1.0,2.0],["2017-01-02",1.5]]}}"#
        guard case let .rowWidth(p, expected, found)? = Decode.error(text) else {
            Issue.record("\(String(describing: Decode.error(text)))")
            return
        }
        #expect(expected == 3 && found == 2)
        #expect(p.row == 2 && p.columnName == "High" && p.byteOffset == text.utf8.count - 4)
        #expect(Decode.error(text)!.description.contains("too few"))
    }

    @Test func rowWithTooManyValues() {
        let text = Self.head + #"["2017-01-03",1.0,2.0,3.0]]}}"#
        guard case let .rowWidth(p, expected, found)? = Decode.error(text) else {
            Issue.record("\(String(describing: Decode.error(text)))")
            return
        }
        #expect(expected == 3 && found == 4 && p.row == 1)
        #expect(p.byteOffset == offset(of: ",3.0", in: text))
    }

    @Test func csvRowWidthMismatchesTheHeader() {
        let short = "Date,Open,High\r\n2017-01-03,1.0,2.0\r\n2017-01-02,1.5\r\n"
        guard case let .rowWidth(p, 3, 2)? = Decode.error(short) else {
            Issue.record("\(String(describing: Decode.error(short)))")
            return
        }
        #expect(p.line == 3 && p.column == 15 && p.row == 2 && p.columnName == "High")
        let long = "Date,Open,High\n2017-01-03,1.0,2.0,9\n"
        guard case let .rowWidth(q, 3, 4)? = Decode.error(long) else {
            Issue.record("\(String(describing: Decode.error(long)))")
            return
        }
        #expect(q.line == 2 && q.column == 19 && q.row == 1)
    }

    @Test func invalidDates() {
        for bad in ["2017-02-30", "2017-13-01", "17-01-01", "2017/01/01", "", "2017-01-01T00:00"] {
            let csv = "Date,Open\n2017-01-03,1.0\n\(bad),2.0\n"
            guard case let .badDate(p, _)? = Decode.error(csv) else {
                Issue.record("\(bad): \(String(describing: Decode.error(csv)))")
                continue
            }
            #expect(p.line == 3 && p.column == 1 && p.row == 2 && p.columnName == "Date")
            let json = #"{"dataset_data":{"column_names":["Date","Open"],"data":[[""# + bad + #"",1.0]]}}"#
            guard case let .badDate(q, _)? = Decode.error(json) else {
                Issue.record("\(bad): \(String(describing: Decode.error(json)))")
                continue
            }
            #expect(q.row == 1 && q.columnName == "Date" && q.byteOffset == offset(of: "[[", in: json) + 2)
        }
    }

    @Test func unknownColumnTypeIsAnError() {
        let text =
            #"{"datatable":{"data":[],"columns":[{"name":"ticker","type":"String"},{"name":"date","type":"Date"},{"name":"open","type":"Boolean"}]},"meta":{"next_cursor_id":null}}"#
        guard case let .unknownColumnType(p, type)? = Decode.error(text) else {
            Issue.record("\(String(describing: Decode.error(text)))")
            return
        }
        #expect(type == "Boolean" && p.columnName == "open" && p.byteOffset == offset(of: #"{"name":"open""#, in: text))
    }

    @Test func datatableStringColumnsOtherThanTickerAreSkipped() throws {
        let text =
            #"{"datatable":{"data":[["AAPL","x","2017-04-03",1.5,"2017-01-01"]],"columns":[{"name":"ticker","type":"String"},{"name":"exchange","type":"String"},{"name":"date","type":"Date"},{"name":"open","type":"double"},{"name":"lastupdated","type":"Date"}]},"meta":{"next_cursor_id":null}}"#
        let table = try Decode.text(text).table
        #expect(table.schema.map(\.name) == ["open"])
        #expect(table.columns[0].doubleValue(at: 0) == 1.5)
    }

    @Test func emptyInputs() {
        for text in ["", "   \n\r\n", "\u{FEFF}"] {
            guard case .empty(let source)? = Decode.failure(text, source: "x.json") else {
                Issue.record("\(String(describing: Decode.failure(text)))")
                continue
            }
            #expect(source == "x.json")
        }
    }

    @Test func duplicateDateInOneResponse() {
        let csv = "Date,Open\n2017-01-03,1.0\n2017-01-05,2.0\n2017-01-03,3.0\n"
        guard case let .duplicateDate(source, ticker, date, rows)? = Decode.error(csv, ticker: "FDX", source: "WIKI-FDX.csv") else {
            Issue.record("\(String(describing: Decode.error(csv)))")
            return
        }
        #expect(source == "WIKI-FDX.csv" && ticker == "FDX" && date == "2017-01-03" && rows == [1, 3])
        let adjacent = "Date,Open\n2017-01-05,1.0\n2017-01-03,2.0\n2017-01-03,3.0\n"
        guard case .duplicateDate(_, _, "2017-01-03", [2, 3])? = Decode.error(adjacent) else {
            Issue.record("\(String(describing: Decode.error(adjacent)))")
            return
        }
    }

    @Test func invalidUTF8InStringsPassesThrough() throws {
        var bytes =
            Array(#"{"dataset":{"name":"Caf"#.utf8) + [0xE9, 0xFF] + Array(#"","dataset_code":"X\u00e9","column_names":["Date","Op"#.utf8)
        bytes += [0xC3] + Array(#""],"data":[["2017-01-03",1.0]]}}"#.utf8)
        let table = try QuoteDecoder.decode(bytes, source: "u.json").table
        #expect(table.tickers.map(\.symbol) == ["Xé"])
        #expect(table.tickers[0].metadata["name"] == "Caf\u{FFFD}\u{FFFD}")
        #expect(table.schema[0].name == "Op\u{FFFD}")
    }

    @Test func responsesThatAreNotQuandls() {
        for text in ["[1,2]", "<html><body>Incapsula</body></html>", #"{"foo":{"dataset":{}}}"#] {
            guard case .notADataLinkResponse? = Decode.failure(text) else {
                Issue.record("\(text): \(String(describing: Decode.failure(text)))")
                continue
            }
        }
        let expected = try? QuoteDecoder.decode(Array("Date,Open\n2017-01-03,1\n".utf8), format: .datasetDataJSON, ticker: "T", source: "s")
        #expect(expected == nil)
    }

    @Test func missingPartsAndTicker() {
        guard case .missing(_, let what)? = Decode.error(#"{"dataset_data":{"column_names":["Date"]}}"#) else {
            Issue.record("data")
            return
        }
        #expect(what.contains("'data'"))
        guard case .missing? = Decode.error(#"{"dataset_data":{"data":[]}}"#) else {
            Issue.record("column_names")
            return
        }
        guard case .missingTicker("s")? = Decode.failure("Date,Open\n2017-01-03,1\n", ticker: nil, source: "s") else {
            Issue.record("ticker")
            return
        }
        guard case .duplicateColumn? = Decode.error("Date,Open,open\n2017-01-03,1,2\n") else {
            Issue.record("duplicate")
            return
        }
    }

    @Test func apiErrorBodies() {
        let json = #"{"quandl_error":{"code":"QELx01","message":"You have exceeded the anonymous user limit of 50 calls per day."}}"#
        #expect(
            Decode.failure(json)
                == .apiError(source: "input", code: "QELx01", message: "You have exceeded the anonymous user limit of 50 calls per day."))
        let csv = "code,message\r\nQECx02,\"You have submitted an incorrect Quandl code, \"\"really\"\".\"\r\n"
        #expect(
            Decode.failure(csv)
                == .apiError(source: "input", code: "QECx02", message: "You have submitted an incorrect Quandl code, \"really\"."))
    }

    @Test func dataBeforeColumnNamesAndUnknownNestedKeysAreFine() throws {
        let text =
            #"{"x":[{"a":[1,{"b":null}]}],"dataset_data":{"data":[["2017-01-03",1,2],["2017-01-02",3,4]],"junk":{"k":[true,false,"s\"]"]},"column_names":["Date","Open","High"]},"y":-1.5e3}"#
        let table = try Decode.text(text).table
        #expect(table.rowCount == 2 && Day(daysSinceEpoch: table.dates[0]).description == "2017-01-02")
        #expect(table.columns[1].doubleValue(at: 0) == 4)
    }
}
