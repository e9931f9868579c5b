import Testing
@testable import Colonnade
import ColonnadeTestSupport

@Suite struct ExpressionParserTests {
    let table = QuoteGenerator(tickers: 3, days: 10).makeTable()
    var parser: QueryParser { QueryParser(table: table) }

    func error(_ text: String) -> QueryError? {
        do {
            _ = try parser.parse(text)
            return nil
        } catch { return error }
    }

    @Test func arithmeticAndFunctionsParseToExpressionTrees() throws {
        let close = ValueExpression.column("close"), open = ValueExpression.column("open")
        let high = ValueExpression.column("high"), low = ValueExpression.column("low"), volume = ValueExpression.column("volume")
        let cases: [(String, RowPredicate)] = [
            ("close > open", .compareExpressions(close, open, .greater(than: 0))),
            ("(high - low) / close > 0.05", .compare((high - low) / close, .greater(than: 0.05))),
            (
                "0.97 * open < close < 1.03 * open",
                .and([.compareExpressions(0.97 * open, close, .less(than: 0)), .compareExpressions(close, 1.03 * open, .less(than: 0))])
            ),
            ("open > 1.03 * prev(close)", .compareExpressions(open, 1.03 * close.prev(), .greater(than: 0))),
            ("volume > 2 * mavg(volume, 20)", .compareExpressions(volume, 2 * volume.mavg(20), .greater(than: 0))),
            (
                "close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)",
                .and([
                    .compareExpressions(close, close.mavg(50), .greater(than: 0)),
                    .compareExpressions(close.mavg(50), close.mavg(200), .greater(than: 0)),
                ])
            ),
            ("high >= mmax(high, 252)", .compareExpressions(high, high.mmax(252), .atLeast(0))),
            ("mavg(pct_change(close), 20) > 0", .compare(close.pctChange().mavg(20), .greater(than: 0))),
            ("volume > 2 * prev(mavg(volume, 20))", .compareExpressions(volume, 2 * volume.mavg(20).prev(), .greater(than: 0))),
            ("change(close, 5) <= -1", .compare(close.change(5), .atMost(-1))),
            ("-close < -5", .compare(-close, .less(than: -5))),
            ("abs(close - open) between 1 and 2", .compare((close - open).abs, .closed(1, 2))),
            (
                "close between low and high",
                .and([.compareExpressions(close, low, .atLeast(0)), .compareExpressions(close, high, .atMost(0))])
            ),
            ("sqrt(close) > 2 + 3", .compare(close.sqrt, .greater(than: 5))),
            ("ln(close) != exp(1)", .not(.compare(close.ln, .equal(to: MathFunctions.exp(1))))),
            ("2 * 3 < close", .range(column: "close", bounds: .greater(than: 6))),
            ("close > 2 - -1", .range(column: "close", bounds: .greater(than: 3))),
            ("(close > 5)", .range(column: "close", bounds: .greater(than: 5))),
            ("(close) > 5", .range(column: "close", bounds: .greater(than: 5))),
            (
                "not (close - open) / open > 0.01",
                .not(.compare((close - open) / open, .greater(than: 0.01)))
            ),
            ("mdev(close, 10) / mavg(close, 10) < 0.02", .compare(close.mdev(10) / close.mavg(10), .less(than: 0.02))),
            (
                "msum(volume, 5) > 1e7 or mmin(low, 3) < 1",
                .or([.compare(volume.msum(5), .greater(than: 1e7)), .compare(low.mmin(3), .less(than: 1))])
            ),
            ("PREV(close, 2) > 1", .compare(close.prev(2), .greater(than: 1))),
        ]
        for (text, expected) in cases {
            #expect(try parser.parse(text) == expected, "\(text)")
        }
    }

    @Test func badExpressionsNamePositionAndCause() {
        let cases: [(String, Int, Int, String)] = [
            ("mavg(close, 0) > 1", 1, 13, "positive whole number"),
            ("mavg(close, 2.5) > 1", 1, 13, "positive whole number"),
            ("mavg(close, -3) > 1", 1, 13, "positive whole number"),
            ("mavg(close, x) > 1", 1, 13, "positive whole number"),
            ("mavg(close) > 1", 1, 11, "needs a window"),
            ("mavgg(close, 5) > 1", 1, 1, "unknown function 'mavgg'"),
            ("prev(ticker) > 1", 1, 6, "not to 'ticker'"),
            ("mavg(date, 5) > 1", 1, 6, "not to 'date'"),
            ("date + 1 > 5", 1, 1, "dates cannot be used in arithmetic"),
            ("close + ticker > 5", 1, 9, "'ticker' cannot be used"),
            ("close > date", 1, 9, "compares only with dates"),
            ("(high - low / close > 0.05", 1, 27, "expected ')'"),
            ("close * > 3", 1, 9, "expected a column or a value"),
            ("prev() > 1", 1, 6, "needs an argument"),
            ("mavg(close, 5 > 1", 1, 15, "expected ')'"),
            ("close > 2 * hgh", 1, 13, "unknown column 'hgh'"),
            ("high < 80 < 83", 1, 8, "in the middle"),
        ]
        for (text, line, column, fragment) in cases {
            guard let e = error(text) else {
                Issue.record("no error for \(text)")
                continue
            }
            #expect(e.line == line && e.column == column, "\(text): \(e)")
            #expect(e.description.contains(fragment), "\(text): \(e)")
        }
        #expect(error("mavgg(close, 5) > 1")?.suggestions.first == "mavg")
        #expect(error("close > 2 * hgh")?.suggestions.first == "high")
    }

    @Test func swiftBuilderMatchesTheText() throws {
        let pairs: [(RowPredicate, String)] = [
            (Field("close") > Field("close").mavg(50), "close > mavg(close, 50)"),
            (Field("open") > 1.03 * Field("close").prev(), "open > 1.03 * prev(close)"),
            ((Field("high") - Field("low")) / Field("close") > 0.05, "(high - low) / close > 0.05"),
            (Field("volume") > 2 * Field("volume").mavg(20), "volume > 2 * mavg(volume, 20)"),
            (Field("high") >= Field("high").mmax(252), "high >= mmax(high, 252)"),
            (Field("close") > Field("open"), "close > open"),
        ]
        for (built, text) in pairs {
            #expect(built == (try parser.parse(text)), "\(text)")
        }
    }

    @Test func expressionsPrintInTheLanguage() {
        let close = ValueExpression.column("close")
        #expect((close - close.prev()).description == "close - prev(close)")
        #expect(((close - .column("open")) / close).description == "(close - open) / close")
        #expect((close - (close - 1)).description == "close - (close - 1)")
        #expect(close.pctChange().mavg(20).description == "mavg(pct_change(close), 20)")
        #expect(ValueExpression.column("Adj. Close").description == "\"Adj. Close\"")
    }
}
