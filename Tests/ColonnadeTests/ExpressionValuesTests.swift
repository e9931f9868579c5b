import Colonnade
import ColonnadeTestSupport
import Testing

/// `QuoteTable.values(of:atRows:)` over a run of rows (what `colonnade chart --overlay
/// 'mavg(close,50)'` draws), against `ExpressionOracle`.
@Suite struct ExpressionValuesTests {
    /// The oracle's value as the API reports it: NaN is null.
    static func reported(_ v: Double?) -> Double? { v.flatMap { $0.isNaN ? nil : $0 } }

    /// Exact expressions (window sums exact in any order) over random row ranges, many starting
    /// mid-ticker, equal the oracle's values over the whole table bit for bit: a range sees the
    /// history before it, and never the neighbouring ticker.
    @Test(arguments: [21, 22, 23])
    func valuesOverAnyRowRangeEqualTheOracle(seed: UInt64) throws {
        var rng = SplitMix64(seed: seed)
        let lengths = (0 ..< 16).map { _ in rng.chance(5) ? rng.below(3) : rng.inRange(1 ... 260) }
        let table = SeriesTables.random(tickerLengths: lengths, seed: seed + 100)
        var oracle = ExpressionOracle(table: table)
        var generator = ExpressionGenerator(seed: seed + 200, maxWindow: 120)
        var compared = 0, nulls = 0
        for _ in 0 ..< 30 {
            let e = generator.exact(3)
            let expected = oracle.values(e).map(Self.reported)
            for _ in 0 ..< 4 {
                let a = rng.below(table.rowCount + 1), b = rng.below(table.rowCount + 1)
                let rows = min(a, b) ..< max(a, b)
                let got = try table.values(of: e, atRows: Array(rows)).map(Self.reported)
                #expect(got.count == rows.count)
                for (k, r) in rows.enumerated() {
                    let want = expected[r]
                    #expect(
                        got[k]?.bitPattern == want?.bitPattern,
                        "\(e) at row \(r) of \(rows): \(String(describing: got[k])) vs \(String(describing: want))")
                    compared += 1
                    if want == nil { nulls += 1 }
                }
            }
        }
        #expect(compared > 10_000 && nulls > 0 && nulls < compared)
    }

    /// A 50-row moving average over one ticker's rows: null for its first 49 rows, then the mean
    /// of the last 50 closes (within rounding; the engine slides its sum); the same values when
    /// the range starts mid-ticker.
    @Test func movingAverageIsNullUntilTheWindowIsFull() throws {
        let table = SeriesTables.random(tickerLengths: [30, 180, 75], seed: 9, nullRate: 0, specialRate: 0)
        let ticker = table.tickers[1]
        let rows = ticker.firstRow ..< ticker.firstRow + ticker.rowCount
        let e = ValueExpression.column("close").mavg(50)
        let got = try table.values(of: e, atRows: Array(rows)).map(Self.reported)
        let close = table.column(named: "close")!
        for (k, r) in rows.enumerated() {
            if k < 49 {
                #expect(got[k] == nil, "row \(k) of the ticker")
                continue
            }
            let window = (r - 49 ... r).map { close.doubleValue(at: $0)! }
            let mean = window.reduce(0, +) / 50
            let value = try #require(got[k], "row \(k) of the ticker")
            #expect(abs(value - mean) <= 1e-12 * abs(mean), "row \(k): \(value) vs \(mean)")
        }
        let tail = try table.values(of: e, atRows: Array(rows.lowerBound + 60 ..< rows.upperBound))
        #expect(tail.map { $0?.bitPattern } == got[60...].map { $0?.bitPattern })
        #expect(try table.values(of: e, atRows: []).isEmpty)
    }

    @Test func unknownColumnsAndNonNumbersAreErrors() {
        let table = SeriesTables.random(tickerLengths: [3], seed: 1)
        #expect(throws: QueryError.self) { try table.values(of: .column("clsoe"), atRows: [0, 1, 2]) }
        #expect(throws: QueryError.self) { try table.values(of: .column("date"), atRows: [0, 1, 2]) }
        #expect(throws: QueryError.self) { try table.values(of: .series(.mavg, .column("close"), window: 0), atRows: [0, 1, 2]) }
    }
}
