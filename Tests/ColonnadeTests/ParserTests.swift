import Testing
@testable import Colonnade
import ColonnadeTestSupport

@Suite struct ParserTests {
    let table = QuoteGenerator(tickers: 3, days: 10).makeTable()
    var parser: QueryParser { QueryParser(table: table) }

    @Test func everyFormParsesToTheExpectedTree() throws {
        let cases: [(String, RowPredicate)] = [
            ("80 < high < 83", .range(column: "high", bounds: .open(80, 83))),
            ("83 > high > 80", .range(column: "high", bounds: .open(80, 83))),
            ("80 <= high <= 83", .range(column: "high", bounds: .closed(80, 83))),
            ("80 <= high < 83", .range(column: "high", bounds: .halfOpen(80, 83))),
            ("high > 80", .range(column: "high", bounds: .greater(than: 80))),
            ("80 < high", .range(column: "high", bounds: .greater(than: 80))),
            ("high >= -1.5e2", .range(column: "high", bounds: .atLeast(-150))),
            ("volume > 1e6", .range(column: "volume", bounds: .greater(than: 1_000_000))),
            ("close = 5", .range(column: "close", bounds: .equal(to: 5))),
            ("close == 5", .range(column: "close", bounds: .equal(to: 5))),
            ("close != 5", .not(.range(column: "close", bounds: .equal(to: 5)))),
            ("close <> 5", .not(.range(column: "close", bounds: .equal(to: 5)))),
            ("close between 1 and 2", .range(column: "close", bounds: .closed(1, 2))),
            ("close not between 1 and 2", .not(.range(column: "close", bounds: .closed(1, 2)))),
            ("\"Adj. Low\" < 3", .range(column: "adj_low", bounds: .less(than: 3))),
            ("adj_low < 3", .range(column: "adj_low", bounds: .less(than: 3))),
            ("ADJ_LOW < 3", .range(column: "adj_low", bounds: .less(than: 3))),
            ("ticker in (FDX, AAPL, 'BRK.B')", .tickers(["FDX", "AAPL", "BRK.B"])),
            ("ticker = FDX", .tickers(["FDX"])),
            ("ticker not in (FDX)", .not(.tickers(["FDX"]))),
            ("date >= 2005-01-01", .dates(.atLeast(Day(2005, 1, 1).daysSinceEpoch))),
            ("date < '2005-01-01'", .dates(.less(than: Day(2005, 1, 1).daysSinceEpoch))),
            ("2005-01-01 <= date <= 2014-05-10", .dates(.closed(Day(2005, 1, 1).daysSinceEpoch, Day(2014, 5, 10).daysSinceEpoch))),
            ("date between 2005-01-01 and 2005-12-31", .dates(.closed(Day(2005, 1, 1).daysSinceEpoch, Day(2005, 12, 31).daysSinceEpoch))),
            ("close in (1, 2)", .or([.range(column: "close", bounds: .equal(to: 1)), .range(column: "close", bounds: .equal(to: 2))])),
            ("true", .constant(true)),
        ]
        for (text, expected) in cases {
            #expect(try parser.parse(text) == expected, "\(text)")
        }
    }

    /// Integer literals a Double cannot hold stay exact (fuzz finding 3); a fraction or an exponent
    /// makes a literal floating-point, rounded to the nearest Double.
    @Test func integerLiteralsADoubleCannotHoldStayExact() throws {
        let big: Int64 = 9_007_199_254_740_993  // 2^53 + 1; the nearest Double is 2^53
        let cases: [(String, RowPredicate)] = [
            ("volume > 9007199254740993", .integerRange(column: "volume", bounds: .greater(than: big))),
            ("volume >= 0009007199254740993", .integerRange(column: "volume", bounds: .atLeast(big))),
            ("9007199254740993 > volume", .integerRange(column: "volume", bounds: .less(than: big))),
            ("volume = -9007199254740993", .integerRange(column: "volume", bounds: .equal(to: -big))),
            ("volume <= -(9007199254740993)", .integerRange(column: "volume", bounds: .atMost(-big))),
            ("volume < 9223372036854775807", .integerRange(column: "volume", bounds: .less(than: .max))),
            ("volume between 9007199254740993 and 9223372036854775807", .integerRange(column: "volume", bounds: .closed(big, .max))),
            ("volume in (9007199254740993)", .integerRange(column: "volume", bounds: .equal(to: big))),
            ("volume not in (9007199254740993)", .not(.integerRange(column: "volume", bounds: .equal(to: big)))),
            (
                "1.5 < volume < 9007199254740993",
                .and([
                    .range(column: "volume", bounds: .greater(than: 1.5)),
                    .integerRange(column: "volume", bounds: .less(than: big)),
                ])
            ),
            // Exact as Doubles: plain numbers.
            ("volume > 9007199254740992", .range(column: "volume", bounds: .greater(than: 0x1p53))),
            ("volume > 9223372036854775808", .range(column: "volume", bounds: .greater(than: 0x1p63))),
            // A fraction or an exponent: floating-point, rounded.
            ("volume > 9007199254740993.0", .range(column: "volume", bounds: .greater(than: 0x1p53))),
            ("volume > 9.007199254740993e15", .range(column: "volume", bounds: .greater(than: 0x1p53))),
            // Past Int64: the Double bound that admits the same Doubles (1e20 is above the literal,
            // so `>` includes it) and every Int64 alike.
            ("volume > 99999999999999999999", .range(column: "volume", bounds: .atLeast(1e20))),
            ("volume <= 99999999999999999999", .range(column: "volume", bounds: .less(than: 1e20))),
            // An expression's values are Doubles: 2^53 + 1 lies between 2^53 and 2^53 + 2.
            ("volume * 1 > 9007199254740993", .compare(.arithmetic(.multiply, .column("volume"), .number(1)), .greater(than: 0x1p53))),
            ("volume * 1 >= 9007199254740993", .compare(.arithmetic(.multiply, .column("volume"), .number(1)), .greater(than: 0x1p53))),
            ("volume * 1 <= 9007199254740993", .compare(.arithmetic(.multiply, .column("volume"), .number(1)), .atMost(0x1p53))),
            // Arithmetic on literals is floating-point.
            ("volume > 9007199254740993 + 0", .range(column: "volume", bounds: .greater(than: 0x1p53))),
        ]
        for (text, expected) in cases {
            #expect(try parser.parse(text) == expected, "\(text)")
        }
    }

    @Test func precedenceIsNotThenAndThenOr() throws {
        let a = RowPredicate.range(column: "open", bounds: .greater(than: 1))
        let b = RowPredicate.range(column: "high", bounds: .greater(than: 2))
        let c = RowPredicate.range(column: "low", bounds: .greater(than: 3))
        #expect(try parser.parse("open > 1 or high > 2 and low > 3") == .or([a, .and([b, c])]))
        #expect(try parser.parse("(open > 1 or high > 2) and low > 3") == .and([.or([a, b]), c]))
        #expect(try parser.parse("not open > 1 and high > 2") == .and([.not(a), b]))
        #expect(try parser.parse("NOT (open > 1 AND high > 2)") == .not(.and([a, b])))
        #expect(try parser.parse("open > 1 and high > 2 and low > 3") == .and([a, b, c]))
    }

    func error(_ text: String) -> QueryError? {
        do {
            _ = try parser.parse(text)
            return nil
        } catch { return error }
    }

    @Test func badExpressionsNamePositionAndExpectation() {
        let e = error("80 < hihg < 83")
        #expect(e?.description == "unknown column 'hihg' at 1:6, did you mean 'high'?")
        let cases: [(String, Int, Int, String)] = [
            ("high >", 1, 7, "unexpected end of expression"),
            ("high > 80 and", 1, 14, "unexpected end of expression"),
            ("(high > 80", 1, 11, "expected ')'"),
            ("high > 80)", 1, 10, "unexpected ')'"),
            ("high 80", 1, 6, "expected a comparison"),
            ("high > 2014-13-01", 1, 8, "invalid date '2014-13-01'"),
            ("date > 80", 1, 8, "expected a date"),
            ("high > 2014-01-01", 1, 8, "holds numbers"),
            ("80 < high > 83", 1, 11, "same direction"),
            ("high > 1e", 1, 8, "exponent"),
            ("high > 80 @", 1, 11, "unexpected character '@'"),
            ("\"Adj. Hihg\" > 1", 1, 1, "unknown column"),
            ("ticker > FDX", 1, 10, "tickers compare only"),
            ("high > 2014-01-01 + 1", 1, 8, "dates cannot be used in arithmetic"),
            ("high between 1 or 2", 1, 16, "expected 'and'"),
            ("high >\n  80 and\n  lw < 3", 3, 3, "unknown column 'lw'"),
            ("'unterminated", 1, 1, "unterminated"),
            ("5 < 6", 1, 5, "expected a column"),
        ]
        for (text, line, column, fragment) in cases {
            guard let e = error(text) else {
                Issue.record("no error for \(text)")
                continue
            }
            #expect(e.line == line && e.column == column, "\(text): \(e)")
            #expect(e.description.contains(fragment), "\(text): \(e)")
        }
    }

    /// Callers match on `kind`, not on the message's words.
    @Test func everyErrorHasAKind() throws {
        let kinds: [(String, QueryError.Kind)] = [
            ("80 < hihg < 83", .unknownColumn), ("\"Adj. Hihg\" > 1", .unknownColumn), ("high >\n lw < 3", .unknownColumn),
            ("high >", .syntax), ("(high > 80", .syntax), ("high > 2014-13-01", .syntax), ("high > 80 @", .syntax),
            ("date > 80", .typeMismatch), ("high > 2014-01-01", .typeMismatch), ("ticker > FDX", .typeMismatch),
        ]
        for (text, kind) in kinds {
            #expect(error(text)?.kind == kind, "\(text)")
        }
        #expect(throws: QueryError.self) { try Aggregate.parseList("mode(close)") }
        do { _ = try Aggregate.parseList("mode(close)") } catch { #expect(error.kind == .unknownAggregate) }
        do { _ = try table.select(Field("hihg") > 1) } catch { #expect(error.kind == .unknownColumn) }
    }
}
