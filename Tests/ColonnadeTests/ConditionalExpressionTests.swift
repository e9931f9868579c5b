import Foundation
import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// `if`, `case when … end`, `greatest`, `least`, `coalesce`, `is [not] null` against
/// `ExpressionOracle` (SQL's rules written row by row), alone and mixed with recursive series.
@Suite struct ConditionalExpressionTests {
    @Test(arguments: [1, 2, 3, 4])
    func randomConditionalsMatchTheOracleExactly(seed: UInt64) throws {
        var rng = SplitMix64(seed: 700 + seed)
        let lengths = (0 ..< 14).map { _ in rng.chance(5) ? rng.below(3) : rng.inRange(0 ... 200) }
        let table = SeriesTables.random(tickerLengths: lengths, seed: seed)
        var oracle = ExpressionOracle(table: table)
        var generator = ExpressionGenerator(seed: 800 + seed, maxWindow: 30)
        let parser = QueryParser(table: table)
        var nonTrivial = 0
        for _ in 0 ..< 30 {
            let e = generator.conditional(3)
            let p = RowPredicate.compare(e, generator.bounds())
            let expected = oracle.rows(p)
            if !expected.isEmpty && expected.count < table.rowCount { nonTrivial += 1 }
            let single = try table.select(p, options: QueryOptions(threads: 1))
            #expect(single.rows() == expected, "\(e)")
            var options = QueryOptions(threads: 3)
            options.rowsPerChunk = zoneMapBlockRows
            #expect(try table.select(p, options: options).mask == single.mask, "chunk dependence: \(e)")
            // The printed expression parses back to the same values.
            let reparsed = try parser.parseValue("\(e)")
            #expect(
                try table.select(.compare(reparsed, .atLeast(-1e300))).mask
                    == table.select(.compare(e, .atLeast(-1e300))).mask, "\(e)")
        }
        #expect(nonTrivial >= 8)
    }

    static func table() throws -> QuoteTable {
        // close: 1, 2, null, 2, NaN, 1; open: 1.5 everywhere; volume 10, 20, …
        try QuoteTable(
            sortingRows: [TickerEntry(symbol: "A")], rowTickers: [0, 0, 0, 0, 0, 0],
            dates: Column<Int32>([1, 2, 3, 4, 5, 6]),
            schema: [
                ColumnDescriptor(name: "close", type: .float64), ColumnDescriptor(name: "open", type: .float64),
                ColumnDescriptor(name: "volume", type: .int64), ColumnDescriptor(name: "case", type: .float64),
            ],
            columns: [
                AnyColumn(Column<Double>([1, 2, nil, 2, .nan, 1] as [Double?])),
                AnyColumn(Column<Double>([1.5, 1.5, 1.5, 1.5, 1.5, 1.5])),
                AnyColumn(Column<Int64>([10, 20, 30, 40, 50, 60])),
                AnyColumn(Column<Double>([7, 7, 7, 7, 7, 7])),
            ])
    }

    @Test func handWorkedValues() throws {
        let table = try Self.table()
        let parser = QueryParser(table: table)
        func values(_ text: String) throws -> [Double?] {
            try table.values(of: parser.parseValue(text), atRows: Array(0 ..< table.rowCount))
        }
        #expect(try values("if(close > open, 1, 0)") == [0, 1, 0, 1, 0, 0])  // unknown takes the else branch
        #expect(try values("case when close > open then 1 when close < open then -1 end") == [-1, 1, nil, 1, nil, -1])
        #expect(try values("case when close > open then 1 else 0 end") == [0, 1, 0, 1, 0, 0])
        #expect(try values("greatest(close, open)") == [1.5, 2, nil, 2, nil, 1.5])  // null when any is null
        #expect(try values("least(close, open, 1.2)") == [1, 1.2, nil, 1.2, nil, 1])
        #expect(try values("coalesce(close, open)") == [1, 2, 1.5, 2, 1.5, 1])
        #expect(try values("greatest(1, 2, 3) + close") == [4, 5, nil, 5, nil, 4])
        // A column named like a word of the grammar, in double quotes.
        #expect(try values("\"case\" + 1") == [8, 8, 8, 8, 8, 8])
        // On-balance volume (starting at 0 on the first row, where TA-Lib starts at the first volume).
        #expect(
            try values("cumsum(if(close > prev(close), volume, if(close < prev(close), -volume, 0)))")
                == [0, 20, 20, 20, 20, 20])
        // `is null` (NaN is null) agrees with count(x) of an expression (where NaN is null too).
        let nulls = try table.select(where: "close is null")
        #expect(nulls.rows() == [2, 4])
        #expect(try table.select(where: "close is not null").rows() == [0, 1, 3, 5])
        let count = try table.select(where: "true").aggregate([.count(Field("close") * 1)]).rows[0].values[0]
        #expect(count == 4)
        #expect(try table.select(Field("close").isNull).rows() == [2, 4])
        #expect(
            try table.select(.compare(Field.`if`(Field("close") > 1.5, Field("volume").expression, .number(0)), .greater(than: 0))).rows()
                == [1, 3])
    }

    @Test func badConditionalsAreSyntaxErrors() throws {
        let parser = QueryParser(table: try Self.table())
        for text in [
            "if(close, 1, 0) > 0", "if(close > 1, 1) > 0", "case close > 1 then 1 end > 0",
            "case when close > 1 then 1 > 0", "case when close > 1 1 end > 0", "close is nothing",
            "greatest() > 1", "date is null",
        ] {
            #expect(throws: QueryError.self, "\(text)") { try parser.parse(text) }
        }
    }
}
