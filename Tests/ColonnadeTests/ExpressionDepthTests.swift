import Testing
@testable import Colonnade
import ColonnadeTestSupport

/// Deep and long expressions (issue 28, items 2 and 3): nesting is capped at
/// `QueryParser.maximumNestingDepth` levels with a syntax error naming the position, a flat chain
/// of any length is one n-ary node (not a deep tree), and parsing does work linear in the text —
/// counted in tokens and nodes, never timed.
@Suite struct ExpressionDepthTests {
    /// Two tickers of about 1,250 rows each: nested `prev` has rows to reach back to.
    static let table = TestTables.random(rows: 2_500, tickers: 2, seed: 28)
    var parser: QueryParser { QueryParser(table: Self.table) }

    static func repeated(_ s: String, _ n: Int) -> String { String(repeating: s, count: n) }

    /// The rows where `f64 > 80` after `transform` is applied to each row's value.
    func referenceRows(_ column: String, where keep: (Double) -> Bool) -> [Int] {
        let c = Self.table.column(named: column)!
        return (0 ..< Self.table.rowCount).filter { r in c.doubleValue(at: r).map { !$0.isNaN && keep($0) } ?? false }
    }

    /// The value of `expression` at every row.
    static func values(_ expression: ValueExpression) throws(QueryError) -> [Double?] {
        try table.values(of: expression, atRows: Array(0 ..< table.rowCount))
    }

    func work(_ text: String) throws -> Int {
        var work = QueryParser.Work()
        _ = try parser.parse(text, work: &work)
        return work.tokens + work.nodes
    }

    // MARK: Linear work

    /// Doubling a flat chain or a nesting doubles the parser's work (tokens read, nodes built),
    /// where backtracking or copying the growing list of terms would quadruple it.
    @Test func parserWorkIsLinearInChainLengthAndNestingDepth() throws {
        let shapes: [(name: String, make: (Int) -> String, sizes: (Int, Int))] = [
            ("and chain", { n in (0 ..< n).map { "f64 > \($0)" }.joined(separator: " and ") }, (2_000, 4_000)),
            ("or chain", { n in (0 ..< n).map { "f64 < \($0)" }.joined(separator: " or ") }, (2_000, 4_000)),
            ("sum", { n in Self.repeated("f64 + ", n) + "1 > 0" }, (2_000, 4_000)),
            ("mixed arithmetic", { n in Self.repeated("f64 * 2 - i64 / 3 + ", n) + "1 > 0" }, (2_000, 4_000)),
            ("grouped values", { n in Self.repeated("(", n) + "f64" + Self.repeated(")", n) + " > 1" }, (500, 1_000)),
            ("grouped sums", { n in Self.repeated("(f64 + ", n) + "1" + Self.repeated(")", n) + " > 1" }, (500, 1_000)),
            ("grouped conditions", { n in Self.repeated("(", n) + "f64 > 1" + Self.repeated(")", n) }, (500, 1_000)),
            ("not", { n in Self.repeated("not ", n) + "f64 > 1" }, (500, 1_000)),
            ("prev", { n in Self.repeated("prev(", n) + "f64" + Self.repeated(")", n) + " > 1" }, (500, 1_000)),
            ("signs", { n in Self.repeated("-", n) + "f64 > 1" }, (500, 1_000)),
        ]
        for shape in shapes {
            let small = try work(shape.make(shape.sizes.0)), large = try work(shape.make(shape.sizes.1))
            let ratio = Double(large) / Double(small)
            #expect(ratio > 1.8 && ratio < 2.2, "\(shape.name): work \(small) then \(large) (×\(ratio))")
        }
    }

    // MARK: The nesting cap

    /// The issue's deep inputs are refused with a syntax error at the construct that goes one level
    /// past the cap; the same shapes at exactly the cap parse.
    @Test func nestingPastTheCapIsASyntaxErrorNamingThePosition() {
        let cap = QueryParser.maximumNestingDepth
        #expect(cap == 1_000)
        let cases: [(String, String, Int)] = [
            ("5,000 parentheses", Self.repeated("(", 5_000) + "f64 > 1" + Self.repeated(")", 5_000), cap),
            ("5,000 parentheses around a value", Self.repeated("(", 5_000) + "f64" + Self.repeated(")", 5_000) + " > 1", cap),
            ("20,000 not", Self.repeated("not ", 20_000) + "f64 > 1", 4 * cap),
            ("10,000 unary minus", Self.repeated("-", 10_000) + "f64 > 1", cap),
            ("10,000 unary minus on the right", "f64 > " + Self.repeated("- ", 10_000) + "1", 6 + 2 * cap),
            ("8,000 nested prev", Self.repeated("prev(", 8_000) + "f64" + Self.repeated(")", 8_000) + " > 1", 5 * cap),
            ("mixed", Self.repeated("not (abs(-(", 2_000) + "f64 > 1", 11 * (cap / 5)),
        ]
        for (name, text, offset) in cases {
            do {
                _ = try parser.parse(text)
                Issue.record("\(name): parsed")
            } catch {
                #expect(error.kind == .syntax, "\(name): \(error)")
                #expect(error.offset == offset, "\(name): \(error)")
                #expect(error.line == 1 && error.column == offset + 1, "\(name): \(error)")
                #expect(error.message.contains("nested more than 1000 levels deep"), "\(name): \(error)")
            }
        }
        // The same through the value parser (sort keys, computed columns).
        do {
            _ = try parser.parseValue(Self.repeated("abs(", 1_001) + "f64" + Self.repeated(")", 1_001))
            Issue.record("1,001 nested abs parsed")
        } catch {
            #expect(error.offset == 4 * cap && error.message.contains("nested"), "\(error)")
        }
    }

    @Test func nestingAtTheCapParsesAndEvaluates() throws {
        let n = QueryParser.maximumNestingDepth  // even: signs and nots cancel
        let f64Above80 = referenceRows("f64") { $0 > 80 }
        let shapes = [
            Self.repeated("(", n) + "f64 > 80" + Self.repeated(")", n),
            Self.repeated("(", n) + "f64" + Self.repeated(")", n) + " > 80",
            Self.repeated("not ", n) + "f64 > 80",
            Self.repeated("-", n) + "f64 > 80",
            "80 < " + Self.repeated("+", n) + "f64",
            Self.repeated("abs(", n) + "f64" + Self.repeated(")", n) + " > 80 and f64 > 0",
            Self.repeated("(not ", n / 2) + "f64 > 80" + Self.repeated(")", n / 2),
        ]
        for text in shapes {
            let rows = try Self.table.select(where: text).rows()
            #expect(rows == f64Above80, "\(text.prefix(40))…: \(rows.count) rows, reference \(f64Above80.count)")
        }
        // A thousand nested prev reaches back a thousand rows, as prev(x, 1000) does.
        let deep = try parser.parseValue(Self.repeated("prev(", n) + "f64" + Self.repeated(")", n))
        let values = try Self.values(deep)
        #expect(values == (try Self.values(ValueExpression.column("f64").prev(n))))
        #expect(values.contains { $0 != nil })
    }

    /// Trees built in Swift are not parsed, so the planner and the compiler check their depth.
    @Test func swiftBuiltTreesPastTheCapAreRefusedWhenPlanned() {
        var e = ValueExpression.column("f64")
        for _ in 0 ..< 5_000 { e = e.abs }
        do {
            _ = try Self.values(e)
            Issue.record("evaluated")
        } catch {
            #expect(error.message.contains("nested more than 4000 levels deep"), "\(error)")
        }
        var p = RowPredicate.range(column: "f64", bounds: .greater(than: 80))
        for _ in 0 ..< 5_000 { p = .not(p) }
        do {
            _ = try Self.table.select(p)
            Issue.record("selected")
        } catch {
            #expect(error.message.contains("nested more than 4000 levels deep"), "\(error)")
        }
    }

    // MARK: Long flat chains

    /// A small table for the long chains (their reference loops run terms × rows steps).
    static let small = TestTables.random(rows: 150, tickers: 2, seed: 29)

    /// Each column of `small` as Doubles, NaN for null.
    static let smallColumns: [String: [Double]] = Dictionary(
        uniqueKeysWithValues: ["f64", "i64", "i32", "f32", "adj_f64"].map { name in
            let c = small.column(named: name)!
            return (name, (0 ..< small.rowCount).map { c.doubleValue(at: $0) ?? .nan })
        })

    /// One term of a generated chain: a column or a number.
    enum Term { case column(String), number(Double) }

    static func text(_ t: Term) -> String {
        switch t {
        case .column(let c): c
        case .number(let v): "\(v)"
        }
    }

    static func apply(_ op: String, _ a: Double, _ b: Double) -> Double {
        switch op {
        case "+": a + b
        case "-": a - b
        case "*": a * b
        default: b == 0 ? .nan : a / b
        }
    }

    /// A flat chain of `count` terms joined by `ops`, and its value per row from a plain left-to-right
    /// loop (NaN for null, as the language has it).
    static func chain(_ count: Int, ops: [String], seed: UInt64) -> (text: String, values: [Double?]) {
        var rng = SplitMix64(seed: seed)
        let columns = ["f64", "i64", "i32", "f32", "adj_f64"]
        var terms = [Term](), operators = [String]()
        for i in 0 ..< count {
            if i > 0 { operators.append(ops[Int(rng.next() % UInt64(ops.count))]) }
            terms.append(rng.nextUnit() < 0.8 ? .column(columns[Int(rng.next() % 5)]) : .number(Double(1 + rng.next() % 9) / 4))
        }
        var text = text(terms[0])
        text.reserveCapacity(count * 10)
        for i in 1 ..< count { text += " \(operators[i - 1]) " + Self.text(terms[i]) }
        let columnValues = terms.map { t -> [Double] in
            switch t {
            case .column(let c): smallColumns[c]!
            case .number(let v): [Double](repeating: v, count: small.rowCount)
            }
        }
        let values = (0 ..< small.rowCount).map { r -> Double? in
            var acc = columnValues[0][r]
            for i in 1 ..< count { acc = apply(operators[i - 1], acc, columnValues[i][r]) }
            return acc.isNaN ? nil : acc
        }
        return (text, values)
    }

    /// The issue's 50,000-term sum, and long chains of the other operators, evaluate to exactly
    /// what a plain left-to-right loop gives (bit for bit: `(a + b) + c`, never `a + (b + c)`),
    /// as values and as a filter.
    @Test func longFlatChainsEvaluateLeftToRightExactly() throws {
        let chains = [
            Self.chain(50_000, ops: ["+"], seed: 1), Self.chain(20_000, ops: ["+", "-"], seed: 2),
            Self.chain(5_000, ops: ["*", "/"], seed: 3),
        ]
        let parser = QueryParser(table: Self.small)
        for (text, expected) in chains {
            let expression = try parser.parseValue(text)
            let values = try Self.small.values(of: expression, atRows: Array(0 ..< Self.small.rowCount))
            #expect(values.count == expected.count)
            let mismatch = values.indices.first { values[$0]?.bitPattern != expected[$0]?.bitPattern }
            #expect(mismatch == nil, "\(text.prefix(40))…: row \(mismatch ?? -1)")
            let rows = try Self.small.select(where: text + " > 0").rows()
            #expect(rows == expected.indices.filter { (expected[$0] ?? 0) > 0 }, "\(text.prefix(40))…")
            // Printing a long chain does not recurse either, and reads back the same.
            #expect(try parser.parseValue(expression.description) == expression)
        }
        // Exactly the issue's text: close + close + … (50,000 terms).
        let sum = try parser.parseValue(Array(repeating: "f64", count: 50_000).joined(separator: " + "))
        let f64 = Self.smallColumns["f64"]!
        let sums = try Self.small.values(of: sum, atRows: Array(0 ..< Self.small.rowCount))
        for r in 0 ..< Self.small.rowCount {
            var acc = f64[r]
            for _ in 1 ..< 50_000 { acc += f64[r] }
            #expect(sums[r]?.bitPattern == (acc.isNaN ? nil : acc.bitPattern), "row \(r)")
        }
    }

    /// 80,000-term `and` and `or` chains of comparisons select what a plain loop over the terms selects.
    @Test func longConditionChainsSelectWhatALoopSelects() throws {
        let n = 80_000
        let thresholds = (0 ..< n).map { 60 + Double($0 % 400) / 10 }  // 60 … 99.9
        let f64 = Self.table.column(named: "f64")!
        let values = (0 ..< Self.table.rowCount).map { f64.doubleValue(at: $0) }
        let andText = thresholds.map { "f64 > \($0)" }.joined(separator: " and ")
        let orText = thresholds.map { "f64 < \($0)" }.joined(separator: " or ")
        let andRows = try Self.table.select(where: andText).rows()
        let orRows = try Self.table.select(where: orText).rows()
        #expect(andRows == values.indices.filter { r in values[r].map { v in thresholds.allSatisfy { v > $0 } } ?? false })
        #expect(orRows == values.indices.filter { r in values[r].map { v in thresholds.contains { v < $0 } } ?? false })
        #expect(!andRows.isEmpty && !orRows.isEmpty)
    }

    // MARK: Quoted names

    /// A column whose name holds a double quote is written as SQL writes it: `"a""b"`.
    @Test func doubledQuoteInAQuotedNameNamesAColumnWithAQuote() throws {
        var rowTickers = [Int32](), dates = Column<Int32>(), values = Column<Double>()
        for i in 0 ..< 10 {
            rowTickers.append(0)
            dates.append(Int32(10_000 + i))
            values.append(Double(i))
        }
        let table = try QuoteTable(
            sortingRows: [TickerEntry(symbol: "Q")], rowTickers: rowTickers, dates: dates,
            schema: [ColumnDescriptor(name: "a\"b", type: .float64)], columns: [AnyColumn(values)])
        let rows = try table.select(where: "\"a\"\"b\" > 6").rows()
        #expect(rows == [7, 8, 9])
        // Printed back the same way, so a description parses again.
        let expression = ValueExpression.column("a\"b") * 2
        #expect(expression.description == "\"a\"\"b\" * 2")
        #expect(
            try table.values(of: QueryParser(table: table).parseValue(expression.description), atRows: Array(0 ..< 10))
                == (0 ..< 10).map { Double($0 * 2) })
        // An unknown quoted name is named as written.
        do {
            _ = try table.select(where: "\"a\"\"c\" > 1")
            Issue.record("parsed")
        } catch {
            #expect(error.kind == .unknownColumn)
            #expect(error.description.contains("\"a\"\"c\""), "\(error)")
            #expect(error.suggestions == ["\"a\"\"b\""], "\(error)")
        }
    }
}
