import Colonnade
import ColonnadeTestSupport
import Foundation
import Testing
@testable import ColonnadeCLI

/// `--by date|week|quarter`, group `--sort`/`--limit`/`--having`, aggregate names, and the
/// cross-ticker functions, through the command line on the real multi-ticker fixture
/// (WIKI/PRICES 2014: AAPL, BRK_A, MSFT and ZEN, which starts trading in May).
@Suite struct GroupAndCrossTickerCommandTests {
    /// The fixture imported once into a snapshot.
    static let snapshot: String = {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("colonnade-groups-\(getpid())", isDirectory: true)
        try? FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        let path = directory.appendingPathComponent("prices.snapshot").path
        if !FileManager.default.fileExists(atPath: path) {
            let run = colonnade(["import", Fixtures.quandlPath("WIKI-PRICES.datatable.2014.csv"), "--snapshot", path])
            precondition(run.status == 0, "import: \(run.standardError)")
        }
        return path
    }()

    /// The fixture's rows as (ticker, date, open, high, low, close, volume), straight from the text.
    static let rows: [(ticker: String, date: String, open: Double, high: Double, low: Double, close: Double, volume: Double)] = {
        let text = (try? String(contentsOfFile: Fixtures.quandlPath("WIKI-PRICES.datatable.2014.csv"), encoding: .utf8)) ?? ""
        return text.split(separator: "\n").dropFirst().map { line in
            let f = line.split(separator: ",", omittingEmptySubsequences: false).map(String.init)
            return (f[0], f[1], Double(f[2])!, Double(f[3])!, Double(f[4])!, Double(f[5])!, Double(f[6])!)
        }
    }()

    static func filter(_ arguments: String...) -> Invocation {
        colonnade(["filter", "--snapshot", snapshot] + arguments)
    }

    static func csv(_ text: String) -> [[String]] {
        text.split(separator: "\n").map { $0.split(separator: ",", omittingEmptySubsequences: false).map(String.init) }
    }

    @Test func countByDateOnTheRealFixture() throws {
        let run = Self.filter("--count", "--by", "date", "--format", "csv")
        #expect(run.status == 0, "\(run.standardError)")
        let lines = Self.csv(run.standardOutput)
        #expect(lines.first == ["date", "count"])
        var expected = [String: Int]()
        for r in Self.rows { expected[r.date, default: 0] += 1 }
        #expect(lines.count - 1 == expected.count && expected.count == 252)
        for line in lines.dropFirst() { #expect(Int(line[1]) == expected[line[0]], "\(line)") }
        // ZEN's first day is the first with four tickers.
        let firstZen = Self.rows.first { $0.ticker == "ZEN" }!.date
        #expect(lines.dropFirst().first { $0[1] == "4" }?[0] == firstZen)
    }

    @Test func weeksStartOnMondayAcrossTheYearEndAndQuartersAreLabelled() throws {
        let weeks = Self.csv(Self.filter("--count", "--by", "week", "--format", "csv").standardOutput)
        // 2014-01-02 is a Thursday: its week is labelled by Monday 2013-12-30; the year's last
        // trading day, Wednesday 2014-12-31, is in the week of 2014-12-29.
        #expect(weeks[1] == ["2013-12-30", "6"], "\(weeks[1])")
        #expect(weeks.last?[0] == "2014-12-29")
        let quarters = Self.csv(Self.filter("--count", "--by", "quarter", "--format", "csv").standardOutput)
        var expected = [String: Int]()
        for r in Self.rows { expected["2014-Q\((Int(r.date.dropFirst(5).prefix(2))! - 1) / 3 + 1)", default: 0] += 1 }
        #expect(quarters.dropFirst().map { $0[0] } == ["2014-Q1", "2014-Q2", "2014-Q3", "2014-Q4"])
        for q in quarters.dropFirst() { #expect(Int(q[1]) == expected[q[0]], "\(q)") }
        // Weekly OHLC bars per ticker; with week first, the same bars ordered by week.
        let bars = Self.csv(
            Self.filter(
                "--agg", "first(open),max(high),min(low),last(close),sum(volume)", "--by", "ticker,week",
                "--format", "csv"
            ).standardOutput)
        #expect(bars[0] == ["ticker", "week", "first(open)", "max(high)", "min(low)", "last(close)", "sum(volume)"])
        let week = Self.rows.filter { $0.ticker == "MSFT" && $0.date >= "2014-03-10" && $0.date <= "2014-03-16" }
        let bar = bars.first { $0[0] == "MSFT" && $0[1] == "2014-03-10" }
        #expect(bar != nil)
        #expect(
            bar.map { Array($0[2...]).map { Double($0)! } } == [
                week.first!.open, week.map(\.high).max()!, week.map(\.low).min()!,
                week.last!.close, week.map(\.volume).reduce(0, +),
            ])
        let byWeek = Self.csv(Self.filter("--agg", "last(close)", "--by", "week,ticker", "--format", "csv").standardOutput)
        #expect(byWeek[0] == ["week", "ticker", "last(close)"])
        #expect(byWeek.count > 3 && byWeek[1 ... 3].map { $0[1] } == ["AAPL", "BRK.A", "MSFT"] && byWeek[1][0] == "2013-12-30")
        #expect(byWeek.count == bars.count)
    }

    @Test func groupsSortLimitAndFilter() throws {
        // The two tickers with the highest average volume, from the text.
        var sums = [String: (Double, Int)]()
        for r in Self.rows {
            sums[r.ticker, default: (0, 0)].0 += r.volume
            sums[r.ticker, default: (0, 0)].1 += 1
        }
        let top = sums.map { ($0.key, $0.value.0 / Double($0.value.1)) }.sorted { $0.1 > $1.1 }
        let run = Self.filter(
            "--agg", "avg(volume) as v, count(*) as n", "--by", "ticker", "--sort", "-v", "--limit", "2", "--format", "csv")
        #expect(run.status == 0, "\(run.standardError)")
        let lines = Self.csv(run.standardOutput)
        #expect(lines[0] == ["ticker", "v", "n"])
        #expect(lines.dropFirst().map { $0[0] } == top.prefix(2).map(\.0))
        // --having on a name; ties in the sort broken by the keys.
        let having = Self.csv(
            Self.filter(
                "--agg", "count(*) as n", "--by", "ticker", "--having", "n > 200", "--sort", "-n",
                "--format", "csv"
            ).standardOutput)
        #expect(having.dropFirst().map { $0[0] } == ["AAPL", "BRK.A", "MSFT"])
        let counts = Self.csv(Self.filter("--count", "--by", "ticker", "--having", "count < 200", "--format", "csv").standardOutput)
        #expect(counts.dropFirst().map { $0 } == [["ZEN", "160"]])
        // By aggregate text, median and quantile, and the avg label.
        let stats = Self.csv(
            Self.filter(
                "--agg", "median(close),quantile(close, 0.25) as q1,avg(close)", "--by", "ticker", "--sort",
                "median(close)", "--format", "csv"
            ).standardOutput)
        #expect(stats[0] == ["ticker", "median(close)", "q1", "avg(close)"])
        for line in stats.dropFirst() {
            let closes = Self.rows.filter { $0.ticker.replacingOccurrences(of: "_", with: ".") == line[0] }.map(\.close).sorted()
            let h = 0.5 * Double(closes.count - 1), lo = Int(h)
            let median = closes[lo] + (h - Double(lo)) * (closes[Swift.min(lo + 1, closes.count - 1)] - closes[lo])
            #expect(Double(line[1]) == median, "\(line)")
        }
        #expect(stats.dropFirst().map { Double($0[1])! } == stats.dropFirst().map { Double($0[1])! }.sorted())
        // A name may not be a key's.
        let clash = Self.filter("--agg", "avg(close) as week", "--by", "week")
        #expect(clash.status == 2 && clash.standardError.contains("names a key column"), "\(clash.standardError)")
        let asError = Self.filter("--agg", "avg(close) as 2x")
        #expect(asError.status == 2 && asError.standardError.contains("cannot name an aggregate"), "\(asError.standardError)")
    }

    /// Every combination of --sort, --limit and --having with and without --by, under rows,
    /// --count and --agg: it applies, or it is refused naming the option.
    @Test func sortLimitAndHavingEitherApplyOrAreRefused() throws {
        enum Expect { case applies, refused(String) }
        let summaries: [(name: String, arguments: [String])] = [("rows", []), ("count", ["--count"]), ("agg", ["--agg", "count(*) as n"])]
        let flags: [(name: String, arguments: [String])] = [
            ("sort", ["--sort", "-ticker"]), ("limit", ["--limit", "2"]), ("having", ["--having", "ticker = 'AAPL'"]),
        ]
        func expectation(_ summary: String, _ grouped: Bool, _ flag: String) -> Expect {
            if summary == "rows" { return grouped ? .refused("--by") : flag == "having" ? .refused("--having") : .applies }
            if grouped { return .applies }
            return .refused("--\(flag)")
        }
        var ran = 0
        for summary in summaries {
            for grouped in [false, true] {
                for flag in flags {
                    let arguments =
                        ["filter", "--snapshot", Self.snapshot, "--format", "csv"] + summary.arguments
                        + (grouped ? ["--by", "ticker"] : []) + flag.arguments
                    let run = colonnade(arguments)
                    switch expectation(summary.name, grouped, flag.name) {
                    case .applies:
                        #expect(run.status == 0, "\(arguments): \(run.standardError)")
                        let lines = Self.csv(run.standardOutput)
                        if grouped {
                            switch flag.name {
                            case "sort": #expect(lines.dropFirst().map { $0[0] } == ["ZEN", "MSFT", "BRK.A", "AAPL"], "\(arguments)")
                            case "limit": #expect(lines.count == 3, "\(arguments)")
                            default: #expect(lines.dropFirst().map { $0[0] } == ["AAPL"], "\(arguments)")
                            }
                        }
                    case .refused(let option):
                        #expect(run.status == 2, "\(arguments) is refused")
                        #expect(run.standardError.contains(option), "\(arguments): \(run.standardError)")
                        #expect(run.standardOutput.isEmpty)
                    }
                    ran += 1
                }
            }
        }
        #expect(ran == 18)
    }

    @Test func crossTickerFunctionsOnTheCommandLine() throws {
        // The universe is every ticker that day, whatever --tickers selects: MSFT's rank among four.
        let run = Self.filter(
            "--tickers", "MSFT", "--on", "2014-12-31", "--columns", "ticker,close,xrank(close),xcount(close)",
            "--format", "csv")
        #expect(run.status == 0, "\(run.standardError)")
        let last = Self.rows.filter { $0.date == "2014-12-31" }
        let rank = 1 + last.filter { $0.close < last.first { $0.ticker == "MSFT" }!.close }.count
        #expect(
            Self.csv(run.standardOutput).dropFirst().first.map { [Double($0[2]), Double($0[3])] } == [Double(rank), 4],
            "\(run.standardOutput)")
        // Relative strength against the first ticker, as the benchmark's X2 asks.
        let strength = Self.filter("--where", "close / ref(close, 'AAPL') > mmax(close / ref(close, 'AAPL'), 50)", "--count")
        #expect(strength.status == 0, "\(strength.standardError)")
        // An unknown reference ticker: did you mean.
        let unknown = Self.filter("--where", "close > ref(close, 'APPL')", "--count")
        #expect(unknown.status != 0 && unknown.standardError.contains("AAPL"), "\(unknown.standardError)")
    }
}
