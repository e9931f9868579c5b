import Colonnade
import ColonnadeTestSupport
import DataLinkFormat
@testable import ColonnadeIngest
import Foundation
import Testing

/// `ema`, `rsi`, ATR and MACD on AAPL's whole WIKI history (8,993 days, 1980–2018) against TA-Lib
/// 0.8.2's C library (`Tests/Fixtures/talib`: the values, the script that made them, SOURCES.md),
/// and AAPL's 14-day RSI on a named day from a plain loop over the CSV text written here.
@Suite struct TalibReferenceTests {
    static func table() throws -> QuoteTable {
        try QuoteImporter.decodeFile(Fixtures.quandlPath("WIKI-AAPL.asc.csv")).table
    }

    /// TA-Lib's columns by name: one value per date (nil where TA-Lib gives NaN).
    static func reference() throws -> (dates: [String], columns: [String: [Double?]]) {
        let url = Fixtures.directory.appendingPathComponent("talib/AAPL.talib.csv")
        let lines = try String(contentsOf: url, encoding: .utf8).split(whereSeparator: \.isNewline).map(String.init)
        let names = lines[0].split(separator: ",").map(String.init)
        var dates = [String](), columns = [String: [Double?]]()
        for line in lines.dropFirst() {
            let fields = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            dates.append(fields[0])
            for (k, name) in names.enumerated().dropFirst() { columns[name, default: []].append(Double(fields[k])) }
        }
        return (dates, columns)
    }

    static let trueRange = "greatest(high - low, abs(high - prev(close)), abs(low - prev(close)))"

    @Test func emaRsiAtrAndMacdMatchTaLib() throws {
        let table = try Self.table()
        let (dates, reference) = try Self.reference()
        #expect(dates.count == table.rowCount && dates.first == "\(Day(daysSinceEpoch: table.dates[0]))")
        let parser = QueryParser(table: table)
        let rows = Array(0 ..< table.rowCount)
        let closes = try table.values(of: .column("close"), atRows: rows)
        func values(_ text: String) throws -> [Double?] { try table.values(of: parser.parseValue(text), atRows: rows) }
        let ema12 = try values("ema(close, 12)"), ema26 = try values("ema(close, 26)")
        // ema, rsi and ATR: on every row, null exactly where TA-Lib's is NaN, else within 1e-9 of
        // the price scale.
        for (name, ours) in [
            ("ema12", ema12), ("ema26", ema26), ("rsi14", try values("rsi(close, 14)")),
            ("atr14", try values("rma(\(Self.trueRange), 14)")),
        ] {
            let theirs = reference[name]!
            var worst = 0.0
            for r in rows {
                #expect(
                    (ours[r] == nil) == (theirs[r] == nil),
                    "\(name) \(dates[r]): \(String(describing: ours[r])) vs \(String(describing: theirs[r]))")
                guard let a = ours[r], let b = theirs[r] else { continue }
                let scale = name == "rsi14" ? 100 : max(1, Swift.abs(closes[r] ?? 1))
                worst = max(worst, Swift.abs(a - b) / scale)
            }
            #expect(worst <= 1e-9, "\(name): worst difference \(worst) of the price scale")
        }
        // MACD and its signal: TA-Lib seeds MACD's fast EMA later (at the slow one's seed), so
        // from 150 rows past its first value, within 1e-9 of the larger EMA.
        let macd = try values("ema(close, 12) - ema(close, 26)")
        let signal = try values("ema(ema(close, 12) - ema(close, 26), 9)")
        let first = reference["macdsignal"]!.firstIndex { $0 != nil }!
        var compared = 0
        for r in first + 150 ..< table.rowCount {
            let scale = max(Swift.abs(ema12[r]!), Swift.abs(ema26[r]!))
            #expect(Swift.abs(macd[r]! - reference["macd"]![r]!) <= 1e-9 * scale, "macd \(dates[r])")
            #expect(Swift.abs(signal[r]! - reference["macdsignal"]![r]!) <= 1e-9 * scale, "signal \(dates[r])")
            compared += 1
        }
        #expect(compared > 8_000)
    }

    /// AAPL's 14-day RSI on 2014-06-02 (TA-Lib: 72.902…), by Wilder's rule in a plain loop over the
    /// closes read straight from the CSV text.
    @Test func aaplRsiOnANamedDayByAPlainLoop() throws {
        let text = try String(contentsOf: URL(fileURLWithPath: Fixtures.quandlPath("WIKI-AAPL.asc.csv")), encoding: .utf8)
        var closes = [(String, Double)]()
        for line in text.split(whereSeparator: \.isNewline).dropFirst() {  // CRLF is one Character
            let f = line.split(separator: ",", omittingEmptySubsequences: false)
            closes.append((String(f[0]), Double(f[4])!))
        }
        var avgGain = 0.0, avgLoss = 0.0, rsi = [String: Double]()
        for i in 1 ..< closes.count {
            let d = closes[i].1 - closes[i - 1].1
            let gain = max(d, 0), loss = max(-d, 0)
            if i <= 14 {
                avgGain += gain / 14
                avgLoss += loss / 14
                if i < 14 { continue }
            } else {
                avgGain = (avgGain * 13 + gain) / 14
                avgLoss = (avgLoss * 13 + loss) / 14
            }
            rsi[closes[i].0] = 100 * avgGain / (avgGain + avgLoss)
        }
        let expected = try #require(rsi["2014-06-02"])
        #expect(Swift.abs(expected - 72.902) < 0.001)
        let table = try Self.table()
        let day = try table.select(where: "true", on: .day(Day(2014, 6, 2)), maxStale: .days(0)).rows()
        #expect(day.count == 1)
        let ours = try table.values(of: Field("close").rsi(14), atRows: day)[0]
        #expect(Swift.abs((ours ?? .nan) - expected) < 1e-9)
        // As of the Sunday after: the Friday's row (2014-05-30), one note's worth of difference.
        let sunday = try table.select(where: "rsi(close, 14) > 70", on: .day(Day(2014, 6, 1)))
        #expect(sunday.rows().map { Day(daysSinceEpoch: table.dates[$0]).description } == ["2014-05-30"])
    }
}
