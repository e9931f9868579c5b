/// Parses the text form of a predicate against a table's columns.
///
/// Grammar (keywords are case-insensitive):
///
///     expr       := and ('or' and)*
///     and        := unary ('and' unary)*
///     unary      := 'not'* comparison
///     comparison := sum [op sum [op sum]]             -- 80 < high < 83, close >= 1e6
///                 | sum ['not'] 'between' sum 'and' sum
///                 | sum ['not'] 'in' '(' sum (',' sum)* ')'
///     sum        := term (('+' | '-') term)*
///     term       := factor (('*' | '/') factor)*
///     factor     := ('-' | '+')* primary
///     primary    := '(' expr ')' | function '(' sum [',' window] ')' | 'true' | 'false' | operand
///     op         := '<' | '<=' | '>' | '>=' | '=' | '==' | '!=' | '<>'
///     operand    := column | number | date | 'text'
///     column     := identifier | "Source Name" | ticker | date
///
/// A parenthesised group holds a condition or a value, whichever its content is, so the text is
/// read once, left to right, without going back: `(high - low) / close > 0.05` and
/// `(close > 5 or open > 5) and volume > 0` both parse in one pass.
///
/// Columns are normalized identifiers (`adj_low`) or double-quoted source names (`"Adj. Low"`; a
/// `"` inside is doubled, as in SQL: `"a""b"` is the column `a"b`); `ticker` and `date` always
/// exist. Numbers may have a sign, a fraction and an exponent; dates are `YYYY-MM-DD` (bare or
/// single-quoted). `<` and `>` are exclusive, `between` inclusive. Errors name the line, the
/// column and what was expected.
///
/// Nesting — parentheses, function calls, `not` and prefix signs, each a level — is capped at
/// `maximumNestingDepth`; a left-associative run (`a + b - c`, `x and y and z`) is one n-ary node
/// however long, not a level per term.
///
/// - Complexity: O(*n*) in the length of the text: each token is read once and each node built
///   once (the tests count both).
public struct QueryParser: Sendable {
    /// The deepest nesting an expression may have, counting parentheses, function calls, `not`
    /// and prefix signs (`-`, `+`): 1,000, as SQLite's and DuckDB's default expression depth.
    /// Deeper text is a syntax error at the construct that goes past it.
    public static let maximumNestingDepth = 1000

    /// The deepest expression or predicate tree that compilation and planning accept. A level of
    /// nesting in the text adds at most a few levels to the tree (a function call inside a sum
    /// inside a product: the function, the sum's chain, the product's chain; a parenthesised
    /// condition: an `or` and an `and`), so whatever parses is accepted; a deeper tree can only be
    /// built in Swift, and is refused (`nestingError`) before a recursion that deep.
    static let maximumTreeDepth = 4 * maximumNestingDepth

    /// The error for a tree deeper than `maximumTreeDepth` (built in Swift: no text position).
    static func nestingError() -> QueryError {
        QueryError(
            "expression nested more than \(maximumTreeDepth) levels deep (an expression in text may nest \(maximumNestingDepth) levels)")
    }

    /// `name` in double quotes, a `"` in it doubled: how a name that is not an identifier is written.
    static func doubleQuoted(_ name: String) -> String {
        "\"" + name.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }

    private let identifiers: [String]
    private let sourceNames: [String]
    private let dateNames: Set<String>
    /// Each identifier's position (the first, if two are equal).
    private let identifierIndex: [String: Int]
    /// Each source name's position (the first, if two are equal).
    private let sourceNameIndex: [String: Int]

    /// A parser for expressions over `table`'s columns.
    public init(table: QuoteTable) {
        identifiers = table.schema.map(\.identifier)
        sourceNames = table.schema.map(\.name)
        dateNames = ["date", table.dateColumnName.lowercased()]
        identifierIndex = Dictionary(identifiers.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
        sourceNameIndex = Dictionary(sourceNames.enumerated().map { ($1, $0) }, uniquingKeysWith: { first, _ in first })
    }

    /// What one parse did, for the tests that hold parsing linear in the text: tokens read
    /// (`next()`), and nodes built (a term, an operand of a chain, a `not`, a sign, a call, a
    /// comparison).
    struct Work {
        var tokens = 0
        var nodes = 0
    }

    /// Parses `expression` into a predicate.
    /// - Throws: `QueryError` naming the position (line:column) and what was expected.
    public func parse(_ expression: String) throws(QueryError) -> RowPredicate {
        var work = Work()
        return try parse(expression, work: &work)
    }

    /// `parse(_:)`, counting its work into `work`.
    func parse(_ expression: String, work: inout Work) throws(QueryError) -> RowPredicate {
        var state = try State(text: expression, parser: self)
        defer { work = state.work }
        return try DeepRecursion.run(depth: state.nestingBound) { () throws(QueryError) -> RowPredicate in
            let first = state.peek
            let parsed = try state.parseOr()
            let p = try state.condition(parsed, first)
            if state.peek.kind != .end {
                throw state.error("unexpected \(state.peek.describe()), expected 'and', 'or' or the end of the expression", at: state.peek)
            }
            return p
        }
    }

    /// Parses a value expression such as `pct_change(close)` or `(high - low) / close` (for sort
    /// keys and computed columns).
    /// - Throws: `QueryError` naming the position, or saying the text is not a number per row
    ///   (`ticker`, `date` and comparisons are not values here).
    public func parseValue(_ expression: String) throws(QueryError) -> ValueExpression {
        var work = Work()
        return try parseValue(expression, work: &work)
    }

    /// `parseValue(_:)`, counting its work into `work`.
    func parseValue(_ expression: String, work: inout Work) throws(QueryError) -> ValueExpression {
        var state = try State(text: expression, parser: self)
        defer { work = state.work }
        return try DeepRecursion.run(depth: state.nestingBound) { () throws(QueryError) -> ValueExpression in
            let first = state.peek
            let parsed = try state.parseSum()
            if state.peek.kind != .end {
                throw state.error("unexpected \(state.peek.describe()), expected an operator or the end of the expression", at: state.peek)
            }
            return try state.numeric(state.value(parsed, first, "a value"), first, "a value")
        }
    }

    // MARK: Tokens

    enum Kind: Equatable {
        case word(String)  // identifier or keyword, as written
        case quoted(String)  // "Source Name"
        case text(String)  // 'string'
        case number(Double)
        case date(Int32)
        case op(String)
        case lparen, rparen, comma, end
    }

    /// The words the grammar reserves (matched case-insensitively).
    enum Keyword: String {
        case and, or, not, between, `in`, `true`, `false`

        /// Whether the word cannot name a column or a function (`true` and `false` can, where a
        /// condition cannot stand).
        var isReserved: Bool { self != .true && self != .false }
    }

    struct Token {
        var kind: Kind
        var offset: Int
        var length: Int
        /// For a `.number` written as digits only that a Double cannot hold exactly: the exact literal.
        var integer: IntegerLiteral? = nil
        /// For a `.word` that is a keyword: which (found once, when the word is read).
        var keyword: Keyword? = nil

        func describe() -> String {
            switch kind {
            case .word(let w): "'\(w)'"
            case .quoted(let q): QueryParser.doubleQuoted(q)
            case .text(let t): "'\(t)'"
            case .number, .date: "value"
            case .op(let o): "'\(o)'"
            case .lparen: "'('"
            case .rparen: "')'"
            case .comma: "','"
            case .end: "end of expression"
            }
        }

        /// The token's text as written.
        func describeText(_ bytes: [UInt8]) -> String {
            if kind == .end { return "end of expression" }
            return "'" + String(decoding: bytes[offset ..< min(bytes.count, offset + length)], as: UTF8.self) + "'"
        }

        func isKeyword(_ k: Keyword) -> Bool { keyword == k }
    }

    enum Operand {
        case value(name: String)  // a value column, by identifier
        case expression(ValueExpression)  // arithmetic or functions over value columns
        case date
        case ticker
        case number(Double)
        /// An integer literal a Double cannot hold exactly (compared exactly; arithmetic rounds it).
        case integer(IntegerLiteral)
        case day(Int32)
        case text(String)

        var isTicker: Bool {
            if case .ticker = self { return true }
            return false
        }
    }

    struct State {
        let bytes: [UInt8]
        let parser: QueryParser
        var tokens: [Token] = []
        var index = 0
        /// Levels of nesting open at the current token (see `enter`).
        var depth = 0
        /// What the parse has done so far.
        var work = Work()

        init(text: String, parser: QueryParser) throws(QueryError) {
            bytes = Array(text.utf8)
            self.parser = parser
            try tokenize()
        }

        var peek: Token { tokens[index] }

        /// At least as many levels as the text can nest (open parentheses at the deepest point,
        /// plus every `not` and prefix sign), found in one pass over the tokens, so the parse
        /// knows beforehand whether it needs a deep stack (`DeepRecursion`).
        var nestingBound: Int {
            var open = 0, deepest = 0, prefixes = 0
            var afterValue = false  // a sign after a value is binary
            for t in tokens {
                switch t.kind {
                case .lparen:
                    open += 1
                    deepest = Swift.max(deepest, open)
                case .rparen: open -= 1
                case .op("-"), .op("+"): if !afterValue { prefixes += 1 }
                case .word: if t.keyword == .not { prefixes += 1 }
                default: break
                }
                switch t.kind {
                case .rparen, .quoted, .text, .number, .date: afterValue = true
                case .word: afterValue = !(t.keyword?.isReserved ?? false)
                default: afterValue = false
                }
            }
            return deepest + prefixes
        }

        mutating func next() -> Token {
            let t = tokens[index]
            work.tokens += 1
            if index < tokens.count - 1 { index += 1 }
            return t
        }

        func error(_ message: String, _ kind: QueryError.Kind = .syntax, at token: Token, suggestions: [String] = []) -> QueryError {
            error(message, kind, offset: token.offset, suggestions: suggestions)
        }

        func error(_ message: String, _ kind: QueryError.Kind = .syntax, offset: Int, suggestions: [String] = []) -> QueryError {
            var line = 1, lineStart = 0
            for i in 0 ..< min(offset, bytes.count) where bytes[i] == UInt8(ascii: "\n") {
                line += 1
                lineStart = i + 1
            }
            let column = String(decoding: bytes[lineStart ..< min(offset, bytes.count)], as: UTF8.self).count + 1
            return QueryError(message, kind: kind, line: line, column: column, offset: offset, suggestions: suggestions)
        }

        // MARK: Lexing

        mutating func tokenize() throws(QueryError) {
            var i = 0
            let n = bytes.count
            func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
            func isLetter(_ c: UInt8) -> Bool { (c >= 65 && c <= 90) || (c >= 97 && c <= 122) || c == 95 || c >= 0x80 }
            while i < n {
                let c = bytes[i]
                if c == 32 || c == 9 || c == 10 || c == 13 {
                    i += 1
                    continue
                }
                let start = i
                if isDigit(c) || (c == 46 && i + 1 < n && isDigit(bytes[i + 1])) {
                    // A date: four digits and a dash.
                    if i + 4 < n && bytes[i ..< i + 4].allSatisfy(isDigit) && bytes[i + 4] == 45 {
                        var j = i
                        while j < n && (isDigit(bytes[j]) || bytes[j] == 45) { j += 1 }
                        let text = String(decoding: bytes[i ..< j], as: UTF8.self)
                        guard let day = Day(text)?.daysSinceEpoch else {
                            throw error("invalid date '\(text)' (expected YYYY-MM-DD)", offset: start)
                        }
                        tokens.append(Token(kind: .date(day), offset: start, length: j - i))
                        i = j
                        continue
                    }
                    var j = i
                    while j < n && isDigit(bytes[j]) { j += 1 }
                    if j < n && bytes[j] == 46 {
                        j += 1
                        while j < n && isDigit(bytes[j]) { j += 1 }
                    }
                    if j < n && (bytes[j] == 101 || bytes[j] == 69) {
                        var k = j + 1
                        if k < n && (bytes[k] == 43 || bytes[k] == 45) { k += 1 }
                        guard k < n && isDigit(bytes[k]) else {
                            throw error(
                                "malformed number '\(String(decoding: bytes[i ..< min(k, n)], as: UTF8.self))': exponent has no digits",
                                offset: start)
                        }
                        while k < n && isDigit(bytes[k]) { k += 1 }
                        j = k
                    }
                    if j < n && isLetter(bytes[j]) {
                        throw error("malformed number: unexpected '\(Character(Unicode.Scalar(bytes[j])))' after digits", offset: j)
                    }
                    let text = String(decoding: bytes[i ..< j], as: UTF8.self)
                    guard let value = Double(text) else { throw error("malformed number '\(text)'", offset: start) }
                    tokens.append(
                        Token(
                            kind: .number(value), offset: start, length: j - i,
                            integer: IntegerLiteral(digits: bytes[i ..< j])))
                    i = j
                    continue
                }
                if isLetter(c) {
                    var j = i
                    while j < n && (isLetter(bytes[j]) || isDigit(bytes[j]) || bytes[j] == 46) { j += 1 }
                    let word = String(decoding: bytes[i ..< j], as: UTF8.self)
                    let keyword = j - i <= 7 ? Keyword(rawValue: word.lowercased()) : nil
                    tokens.append(Token(kind: .word(word), offset: start, length: j - i, keyword: keyword))
                    i = j
                    continue
                }
                if c == 34 || c == 39 {  // "quoted identifier" or 'text'; a doubled quote stands for one
                    var j = i + 1
                    var content = [UInt8]()
                    var closed = false
                    while j < n {
                        if bytes[j] == c {
                            if j + 1 < n && bytes[j + 1] == c {
                                content.append(c)
                                j += 2
                                continue
                            }
                            closed = true
                            j += 1
                            break
                        }
                        content.append(bytes[j])
                        j += 1
                    }
                    guard closed else {
                        throw error(
                            "unterminated \(c == 34 ? "quoted name" : "string"): missing closing \(c == 34 ? "\"" : "'")", offset: start)
                    }
                    let s = String(decoding: content, as: UTF8.self)
                    tokens.append(Token(kind: c == 34 ? .quoted(s) : .text(s), offset: start, length: j - i))
                    i = j
                    continue
                }
                switch c {
                case 40:
                    tokens.append(Token(kind: .lparen, offset: start, length: 1))
                    i += 1
                    continue
                case 41:
                    tokens.append(Token(kind: .rparen, offset: start, length: 1))
                    i += 1
                    continue
                case 44:
                    tokens.append(Token(kind: .comma, offset: start, length: 1))
                    i += 1
                    continue
                default: break
                }
                let two = i + 1 < n ? String(decoding: bytes[i ... i + 1], as: UTF8.self) : ""
                if ["<=", ">=", "<>", "!=", "=="].contains(two) {
                    tokens.append(Token(kind: .op(two), offset: start, length: 2))
                    i += 2
                    continue
                }
                if c == 60 || c == 62 || c == 61 || c == 45 || c == 43 || c == 42 || c == 47 {
                    tokens.append(Token(kind: .op(String(Character(Unicode.Scalar(c)))), offset: start, length: 1))
                    i += 1
                    continue
                }
                let ch = String(decoding: bytes[i ..< min(n, i + 4)], as: UTF8.self).first.map(String.init) ?? "?"
                throw error("unexpected character '\(ch)'", offset: start)
            }
            tokens.append(Token(kind: .end, offset: n, length: 0))
        }

        // MARK: Grammar

        /// What a piece of the text is: a condition, or a value (a parenthesised group may hold
        /// either; what follows it decides whether that fits).
        enum Parsed {
            case condition(RowPredicate)
            case value(Operand)
        }

        /// One more level of nesting, opened by `token`; the caller undoes it (`depth -= 1`)
        /// when the level closes. Every construct that nests — a parenthesis, a function call,
        /// `not`, a prefix sign — goes through here, so new ones are counted alike.
        /// - Throws: a syntax error at `token` past `maximumNestingDepth` levels.
        mutating func enter(_ token: Token) throws(QueryError) {
            depth += 1
            if depth > QueryParser.maximumNestingDepth {
                throw error(
                    "expression nested more than \(QueryParser.maximumNestingDepth) levels deep (parentheses, function calls, 'not' and signs each count)",
                    at: token)
            }
        }

        /// `parsed` as a condition; a value there is an error naming what was expected after it.
        func condition(_ parsed: Parsed, _ firstToken: Token) throws(QueryError) -> RowPredicate {
            switch parsed {
            case .condition(let p):
                return p
            case .value(let v):
                if State.isValue(v) {
                    throw error("expected a comparison operator after \(firstToken.describe()), found \(peek.describe())", at: peek)
                }
                throw error(
                    "expected a comparison (<, <=, >, >=, =, !=, between, in) after \(firstToken.describe()), found \(peek.describe())",
                    at: peek)
            }
        }

        /// `parsed` as a value (an operand of `context`); a condition there is an error at `firstToken`.
        func value(_ parsed: Parsed, _ firstToken: Token, _ context: String) throws(QueryError) -> Operand {
            switch parsed {
            case .value(let v): return v
            case .condition: throw error("expected a value in \(context), found a condition", at: firstToken)
            }
        }

        /// expr := and ('or' and)*, one `or` node for the whole run.
        mutating func parseOr() throws(QueryError) -> Parsed {
            let firstToken = peek
            let first = try parseAnd()
            guard peek.isKeyword(.or) else { return first }
            var parts = [try condition(first, firstToken)]
            while peek.isKeyword(.or) {
                _ = next()
                let t = peek
                let term = try parseAnd()
                parts.append(try condition(term, t))
                work.nodes += 1
            }
            return .condition(.or(parts))
        }

        /// and := unary ('and' unary)*, one `and` node for the whole run.
        mutating func parseAnd() throws(QueryError) -> Parsed {
            let firstToken = peek
            let first = try parseNot()
            guard peek.isKeyword(.and) else { return first }
            var parts = [try condition(first, firstToken)]
            while peek.isKeyword(.and) {
                _ = next()
                let t = peek
                let term = try parseNot()
                parts.append(try condition(term, t))
                work.nodes += 1
            }
            return .condition(.and(parts))
        }

        /// unary := 'not'* comparison. The `not`s are counted, not recursed into.
        mutating func parseNot() throws(QueryError) -> Parsed {
            var nots = 0
            defer { depth -= nots }
            while peek.isKeyword(.not) {
                try enter(next())
                nots += 1
            }
            let firstToken = peek
            let parsed = try parseComparison()
            if nots == 0 { return parsed }
            var p = try condition(parsed, firstToken)
            for _ in 0 ..< nots { p = .not(p) }
            work.nodes += nots
            return .condition(p)
        }

        func position(_ t: Token) -> String {
            let e = error("", at: t)
            return "\(e.line ?? 1):\(e.column ?? 1)"
        }

        static func isComparison(_ op: String) -> Bool { ["<", "<=", ">", ">=", "=", "==", "!=", "<>"].contains(op) }

        /// A value after `first` in a comparison (a bound, the other side, an item of a list).
        mutating func parseSumValue(after first: Operand, _ context: String) throws(QueryError) -> Operand {
            let t = peek
            let parsed = try parseSum(after: first)
            return try value(parsed, t, context)
        }

        /// comparison := sum [op sum [op sum] | ['not'] 'between' … | ['not'] 'in' (…)]. A sum
        /// with no comparison after it is returned as a value (the caller decides if that fits).
        mutating func parseComparison() throws(QueryError) -> Parsed {
            let firstToken = peek
            let parsed = try parseSum()
            guard case .value(let first) = parsed else { return parsed }
            work.nodes += 1
            if !State.isValue(first) {
                var negate = false
                if peek.isKeyword(.not) {
                    _ = next()
                    negate = true
                    guard peek.isKeyword(.between) || peek.isKeyword(.in) else {
                        throw error("expected 'between' or 'in' after 'not', found \(peek.describe())", at: peek)
                    }
                }
                if peek.isKeyword(.between) {
                    _ = next()
                    let loToken = peek
                    let lo = try parseSumValue(after: first, "'between'")
                    guard peek.isKeyword(.and) else {
                        throw error("expected 'and' in 'between … and …', found \(peek.describe())", at: peek)
                    }
                    _ = next()
                    let hiToken = peek
                    let hi = try parseSumValue(after: first, "'between'")
                    let p: RowPredicate
                    if State.isValue(lo) && State.isValue(hi) {
                        p = try compare(first, firstToken, lower: (lo, loToken, true), upper: (hi, hiToken, true))
                    } else {
                        p = .and([
                            try single(first, firstToken, ">=", loToken, lo, loToken),
                            try single(first, firstToken, "<=", hiToken, hi, hiToken),
                        ])
                    }
                    return .condition(negate ? .not(p) : p)
                }
                if peek.isKeyword(.in) {
                    _ = next()
                    let p = try parseIn(first, firstToken)
                    return .condition(negate ? .not(p) : p)
                }
            }
            if isWord(peek, "is") { return .condition(try parseIsNull(first, firstToken)) }
            guard case .op(let op1) = peek.kind, State.isComparison(op1) else { return parsed }
            let op1Token = next()
            let secondToken = peek
            let second = try parseSumValue(after: first, "a comparison")
            guard case .op(let op2) = peek.kind, ["<", "<=", ">", ">="].contains(op2) else {
                return .condition(try single(first, firstToken, op1, op1Token, second, secondToken))
            }
            // A chain: a < b < c (or a > b > c).
            let op2Token = next()
            let thirdToken = peek
            let third = try parseSumValue(after: second, "a comparison")
            let lessChain = ["<", "<="].contains(op1) && ["<", "<="].contains(op2)
            let greaterChain = [">", ">="].contains(op1) && [">", ">="].contains(op2)
            guard lessChain || greaterChain else {
                throw error(
                    "a chained comparison needs both operators in the same direction (< and <=, or > and >=), found '\(op1)' and '\(op2)'",
                    at: op2Token)
            }
            if State.isValue(second) {
                throw error("a chained comparison must have a column or an expression in the middle, as in 80 < high < 83", at: secondToken)
            }
            if State.isValue(first) && State.isValue(third) {
                if lessChain {
                    return .condition(
                        try compare(second, secondToken, lower: (first, firstToken, op1 == "<="), upper: (third, thirdToken, op2 == "<=")))
                }
                return .condition(
                    try compare(second, secondToken, lower: (third, thirdToken, op2 == ">="), upper: (first, firstToken, op1 == ">=")))
            }
            return .condition(
                .and([
                    try single(first, firstToken, op1, op1Token, second, secondToken),
                    try single(second, secondToken, op2, op2Token, third, thirdToken),
                ]))
        }

        // MARK: Arithmetic

        /// A left-associative run of one precedence level being read: the first operand (while
        /// every operand so far is a number, their folded value) and the steps after it, built
        /// into one `ValueExpression.chain` at the end, so a run of any length costs one append
        /// per term.
        struct Chain {
            var head: Operand
            let headToken: Token
            var steps: [ValueExpression.Step] = []

            init(_ head: Operand, _ headToken: Token) {
                self.head = head
                self.headToken = headToken
            }

            /// Appends `op right`, checking both are numbers (the left one first, as it came first).
            mutating func append(
                _ op: ValueExpression.Operator, _ right: Operand, _ rightToken: Token,
                _ state: State
            ) throws(QueryError) {
                let context = "'\(op.rawValue)'"
                if steps.isEmpty {
                    let x = try state.numeric(head, headToken, context)
                    let y = try state.numeric(right, rightToken, context)
                    if case .number(let u) = x, case .number(let v) = y {
                        head = .number(ValueExpression.apply(op, u, v))
                        return
                    }
                    head = .expression(x)
                    steps.append(ValueExpression.Step(op, y))
                } else {
                    steps.append(ValueExpression.Step(op, try state.numeric(right, rightToken, context)))
                }
            }

            /// The run as one operand.
            var operand: Operand {
                guard !steps.isEmpty, case .expression(let first) = head else { return head }
                return .expression(.chain(first, steps))
            }
        }

        /// sum := term (('+' | '-') term)*. After a ticker column, one symbol instead.
        mutating func parseSum(after left: Operand? = nil) throws(QueryError) -> Parsed {
            if let left, case .ticker = left { return .value(try parseOperand(after: left)) }
            let firstToken = peek
            let first = try parseTerm(after: left)
            guard case .op(let o) = peek.kind, o == "+" || o == "-" else { return first }
            var chain = Chain(try value(first, firstToken, "'\(o)'"), firstToken)
            while case .op(let o) = peek.kind, o == "+" || o == "-" {
                _ = next()
                let rightToken = peek
                let term = try parseTerm(after: left)
                let right = try value(term, rightToken, "'\(o)'")
                try chain.append(o == "+" ? .add : .subtract, right, rightToken, self)
                work.nodes += 1
            }
            return .value(chain.operand)
        }

        /// term := factor (('*' | '/') factor)*
        mutating func parseTerm(after left: Operand?) throws(QueryError) -> Parsed {
            let firstToken = peek
            let first = try parseFactor(after: left)
            guard case .op(let o) = peek.kind, o == "*" || o == "/" else { return first }
            var chain = Chain(try value(first, firstToken, "'\(o)'"), firstToken)
            while case .op(let o) = peek.kind, o == "*" || o == "/" {
                _ = next()
                let rightToken = peek
                let factor = try parseFactor(after: left)
                let right = try value(factor, rightToken, "'\(o)'")
                try chain.append(o == "*" ? .multiply : .divide, right, rightToken, self)
                work.nodes += 1
            }
            return .value(chain.operand)
        }

        /// factor := ('-' | '+')* primary. The signs are counted, not recursed into, and applied
        /// innermost first.
        mutating func parseFactor(after left: Operand?) throws(QueryError) -> Parsed {
            var signs = [Token]()
            defer { depth -= signs.count }
            while case .op(let o) = peek.kind, o == "-" || o == "+" {
                let sign = next()
                try enter(sign)
                signs.append(sign)
                if peek.kind == .end { throw error("expected a number after '\(o)'", at: peek) }
            }
            let operandToken = peek
            let parsed = try parsePrimary(after: left)
            if signs.isEmpty { return parsed }
            var x = try value(parsed, operandToken, "'\(signs[signs.count - 1].kind == .op("-") ? "-" : "+")'")
            for sign in signs.reversed() {
                work.nodes += 1
                if sign.kind == .op("+") {
                    _ = try numeric(x, operandToken, "'+'")
                    continue
                }
                switch x {
                case .number(let v): x = .number(-v)
                case .integer(let l): x = .integer(l.negated)
                default: x = .expression(.negate(try numeric(x, operandToken, "'-'")))
                }
            }
            return .value(x)
        }

        /// primary := '(' expr ')' | function '(' … ')' | 'true' | 'false' | operand. Inside a
        /// comparison (`left` is its first side) a group is a value, read with `left`'s context.
        mutating func parsePrimary(after left: Operand?) throws(QueryError) -> Parsed {
            if peek.kind == .lparen {
                let open = next()
                try enter(open)
                defer { depth -= 1 }
                let x = left == nil ? try parseOr() : try parseSum(after: left)
                guard peek.kind == .rparen else {
                    throw error("expected ')' to close the '(' at \(position(open)), found \(peek.describe())", at: peek)
                }
                _ = next()
                return x
            }
            if left == nil, peek.isKeyword(.true) || peek.isKeyword(.false) {
                work.nodes += 1
                return .condition(.constant(next().isKeyword(.true)))
            }
            if case .word = peek.kind, !(peek.keyword?.isReserved ?? false), index + 1 < tokens.count, tokens[index + 1].kind == .lparen {
                return .value(try parseCall())
            }
            if isWord(peek, "case"), index + 1 < tokens.count, isWord(tokens[index + 1], "when") {
                return .value(try parseCase())
            }
            return .value(try parseOperand(after: left))
        }

        /// `abs(x)`, `prev(x[, n])`, `mavg(x, n)`, …
        mutating func parseCall() throws(QueryError) -> Operand {
            let nameToken = next()
            guard case .word(let name) = nameToken.kind else { throw error("expected a function", at: nameToken) }
            try enter(nameToken)
            defer { depth -= 1 }
            work.nodes += 1
            let lower = name.lowercased()
            if let special = try parseConditionalCall(lower) { return special }
            _ = next()  // '('
            if CrossTickerExpression.functionNames.contains(lower) { return try parseCrossTickerCall(lower, nameToken) }
            let math = ValueExpression.MathFunction(rawValue: lower)
            let series = ValueExpression.SeriesFunction(rawValue: lower)
            guard math != nil || series != nil else {
                let known =
                    ValueExpression.MathFunction.allCases.map(\.rawValue) + ValueExpression.SeriesFunction.allCases.map(\.rawValue)
                    + ValueExpression.RowFunction.allCases.map(\.rawValue) + ["if"] + CrossTickerExpression.functionNames
                throw error("unknown function '\(name)'", at: nameToken, suggestions: Suggestions.closest(to: lower, among: known))
            }
            let argumentToken = peek
            if argumentToken.kind == .rparen {
                throw error(
                    "\(lower)() needs an argument, as in \(lower)(close\(series.map { $0.windowIsOptional || !$0.takesWindow ? "" : ", 20" } ?? ""))",
                    at: argumentToken)
            }
            let parsed = try parseSum()
            let argument = try value(parsed, argumentToken, "\(lower)()")
            let x: ValueExpression
            switch argument {
            case .date, .ticker:
                throw error(
                    "\(lower)() applies to value columns and expressions, not to '\(argument.isTicker ? "ticker" : "date")'",
                    at: argumentToken)
            default:
                x = try numeric(argument, argumentToken, "\(lower)()")
            }
            var window = 1
            if let series, !series.takesWindow, peek.kind == .comma {
                throw error("\(lower)() takes no window: it runs from the ticker's first row, as in \(lower)(close)", at: peek)
            }
            if let series, series.takesWindow {
                if peek.kind == .comma {
                    _ = next()
                    let nToken = next()
                    guard case .number(let v) = nToken.kind, v >= 1, v <= 1_000_000, v == v.rounded(), nToken.length > 0,
                        !String(decoding: bytes[nToken.offset ..< nToken.offset + nToken.length], as: UTF8.self).contains(where: {
                            $0 == "." || $0 == "e" || $0 == "E"
                        })
                    else {
                        throw error(
                            "the window of \(lower)() must be a positive whole number of rows (1 to 1000000), found \(nToken.describeText(bytes))",
                            at: nToken)
                    }
                    window = Int(v)
                } else if !series.windowIsOptional {
                    throw error("\(lower)() needs a window, as in \(lower)(close, 20), found \(peek.describe())", at: peek)
                }
            }
            guard peek.kind == .rparen else {
                throw error("expected ')' to close \(lower)(, found \(peek.describe())", at: peek)
            }
            _ = next()
            if let math {
                if case .number(let c) = x { return .number(ValueExpression.apply(math, c)) }
                return .expression(.math(math, x))
            }
            return .expression(.series(series!, x, window: window))
        }

        /// The operand as a numeric expression, or an error naming what it is.
        func numeric(_ o: Operand, _ token: Token, _ context: String) throws(QueryError) -> ValueExpression {
            switch o {
            case .number(let v): return .number(v)
            case .integer(let l): return .number(l.rounded)
            case .value(let name): return .column(name)
            case .expression(let e): return e
            case .date, .day: throw error("dates cannot be used in arithmetic (\(context)); compare date with a date instead", at: token)
            case .ticker: throw error("'ticker' cannot be used in arithmetic (\(context))", at: token)
            case .text: throw error("text cannot be used in arithmetic (\(context))", at: token)
            }
        }

        static func isValue(_ o: Operand) -> Bool {
            switch o {
            case .number, .integer, .day, .text: true
            default: false
            }
        }

        mutating func parseIn(_ column: Operand, _ columnToken: Token) throws(QueryError) -> RowPredicate {
            guard peek.kind == .lparen else { throw error("expected '(' after 'in', found \(peek.describe())", at: peek) }
            _ = next()
            var items: [(Operand, Token)] = []
            while true {
                let t = peek
                items.append((try parseSumValue(after: column, "the list"), t))
                if peek.kind == .comma {
                    _ = next()
                    continue
                }
                if peek.kind == .rparen {
                    _ = next()
                    break
                }
                throw error("expected ',' or ')' in the list, found \(peek.describe())", at: peek)
            }
            if case .ticker = column {
                var symbols = [String]()
                for (item, token) in items {
                    guard case .text(let s) = item else { throw error("expected a ticker symbol", at: token) }
                    symbols.append(s)
                }
                return .tickers(symbols)
            }
            var parts = [RowPredicate]()
            for (item, token) in items {
                parts.append(try single(column, columnToken, "=", token, item, token))
            }
            return parts.count == 1 ? parts[0] : .or(parts)
        }

        /// Parses an operand. After a ticker column, bare words are ticker symbols.

        mutating func parseOperand(after left: Operand? = nil) throws(QueryError) -> Operand {
            let t = next()
            var isTickerContext = false
            if let left, case .ticker = left { isTickerContext = true }
            switch t.kind {
            case .number(let v): return t.integer.map(Operand.integer) ?? .number(v)
            case .date(let d): return .day(d)
            case .text(let s):
                if let left, case .date = left {
                    guard let d = Day(s)?.daysSinceEpoch else { throw error("invalid date '\(s)' (expected YYYY-MM-DD)", at: t) }
                    return .day(d)
                }
                return .text(s)
            case .op("-"), .op("+"):
                let sign: Double = t.kind == .op("-") ? -1 : 1
                let v = next()
                guard case .number(let x) = v.kind else {
                    throw error("expected a number after '\(t.kind == .op("-") ? "-" : "+")'", at: v)
                }
                if let l = v.integer { return .integer(sign < 0 ? l.negated : l) }
                return .number(sign * x)
            case .word(let w):
                if isTickerContext { return .text(w) }
                let lower = w.lowercased()
                if t.keyword?.isReserved ?? false {
                    throw error("expected a column or a value, found the keyword '\(w)'", at: t)
                }
                if lower == "ticker" { return .ticker }
                if parser.dateNames.contains(lower) { return .date }
                if parser.identifierIndex[w] != nil { return .value(name: w) }
                if parser.identifierIndex[lower] != nil { return .value(name: lower) }
                if let i = parser.sourceNameIndex[w] { return .value(name: parser.identifiers[i]) }
                throw error(
                    "unknown column '\(w)'", .unknownColumn, at: t,
                    suggestions: Suggestions.closest(to: w, among: parser.identifiers + ["date", "ticker"]))
            case .quoted(let q):
                if isTickerContext { return .text(q) }
                if let i = parser.sourceNameIndex[q] { return .value(name: parser.identifiers[i]) }
                if let i = parser.identifierIndex[q] { return .value(name: parser.identifiers[i]) }
                if parser.dateNames.contains(q.lowercased()) { return .date }
                if q.lowercased() == "ticker" { return .ticker }
                throw error(
                    "unknown column \(QueryParser.doubleQuoted(q))", .unknownColumn, at: t,
                    suggestions: Suggestions.closest(to: q, among: parser.sourceNames).map(QueryParser.doubleQuoted))
            case .end:
                throw error("unexpected end of expression, expected a column or a value", at: t)
            default:
                throw error("expected a column or a value, found \(t.describe())", at: t)
            }
        }

        /// `column op value`.
        func single(
            _ column: Operand, _ columnToken: Token, _ op: String, _ opToken: Token,
            _ value: Operand, _ valueToken: Token
        ) throws(QueryError) -> RowPredicate {
            if State.isValue(column) && State.isValue(value) {
                throw error("expected a column after '\(op)', found a value (a comparison needs a column or an expression)", at: valueToken)
            }
            if State.isValue(column) {
                return try single(value, valueToken, QueryParser.flip(op), opToken, column, columnToken)
            }
            if !State.isValue(value) {
                // Two columns or expressions: compared through their difference, exactly.
                for (o, t) in [(column, columnToken), (value, valueToken)] {
                    if case .ticker = o { throw error("tickers compare only with =, != or in (…)", at: t) }
                    if case .date = o { throw error("column 'date' compares only with dates (YYYY-MM-DD)", at: t) }
                }
                let l = try numeric(column, columnToken, "a comparison"), r = try numeric(value, valueToken, "a comparison")
                let zero: RangeBounds<Double>
                switch op {
                case "<": zero = .less(than: 0)
                case "<=": zero = .atMost(0)
                case ">": zero = .greater(than: 0)
                case ">=": zero = .atLeast(0)
                case "=", "==": zero = .equal(to: 0)
                case "!=", "<>": return .not(try single(column, columnToken, "=", opToken, value, valueToken))
                default: throw error("unknown operator '\(op)'", at: opToken)
                }
                return .comparing(l, r, zero)
            }
            switch op {
            case "<": return try compare(column, columnToken, lower: nil, upper: (value, valueToken, false))
            case "<=": return try compare(column, columnToken, lower: nil, upper: (value, valueToken, true))
            case ">": return try compare(column, columnToken, lower: (value, valueToken, false), upper: nil)
            case ">=": return try compare(column, columnToken, lower: (value, valueToken, true), upper: nil)
            case "=", "==":
                if case .ticker = column {
                    guard case .text(let s) = value else { throw error("expected a ticker symbol", at: valueToken) }
                    return .tickers([s])
                }
                return try compare(column, columnToken, lower: (value, valueToken, true), upper: (value, valueToken, true))
            case "!=", "<>":
                return .not(try single(column, columnToken, "=", opToken, value, valueToken))
            default:
                throw error("unknown operator '\(op)'", at: opToken)
            }
        }

        /// A bounded comparison of one column.
        func compare(
            _ column: Operand, _ columnToken: Token, lower: (Operand, Token, Bool)?,
            upper: (Operand, Token, Bool)?
        ) throws(QueryError) -> RowPredicate {
            switch column {
            case .value, .expression:
                let what: String
                if case .value(let name) = column { what = "column '\(name)'" } else { what = "this expression" }
                func literal(_ b: (Operand, Token, Bool)?) throws(QueryError) -> Operand? {
                    guard let b else { return nil }
                    switch b.0 {
                    case .number, .integer: return b.0
                    default: throw error("\(what) holds numbers; expected a number", .typeMismatch, at: b.1)
                    }
                }
                let lo = try literal(lower), hi = try literal(upper)
                // Bounds on Doubles; an inexact integer literal becomes the Double bound that
                // admits exactly the Doubles it admits (no Double lies between it and its nearest).
                var bounds = RangeBounds<Double>()
                // An Int64 column compares with an integer literal in Int64 (exact integer bounds).
                var integers = RangeBounds<Int64>()
                var isColumn = false
                if case .value = column { isColumn = true }
                switch lo {
                case .number(let x)?:
                    bounds.lower = x
                    bounds.lowerInclusive = lower?.2 ?? false
                case .integer(let l)? where isColumn && l.exact != nil:
                    integers.lower = l.exact
                    integers.lowerInclusive = lower?.2 ?? false
                case .integer(let l)?: (bounds.lower, bounds.lowerInclusive) = l.doubleBound(lower: true, inclusive: lower?.2 ?? false)
                default: break
                }
                switch hi {
                case .number(let x)?:
                    bounds.upper = x
                    bounds.upperInclusive = upper?.2 ?? false
                case .integer(let l)? where isColumn && l.exact != nil:
                    integers.upper = l.exact
                    integers.upperInclusive = upper?.2 ?? false
                case .integer(let l)?: (bounds.upper, bounds.upperInclusive) = l.doubleBound(lower: false, inclusive: upper?.2 ?? false)
                default: break
                }
                if case .value(let name) = column {
                    if integers.lower == nil && integers.upper == nil { return .range(column: name, bounds: bounds) }
                    if bounds.lower == nil && bounds.upper == nil { return .integerRange(column: name, bounds: integers) }
                    return .and([.range(column: name, bounds: bounds), .integerRange(column: name, bounds: integers)])
                }
                if case .expression(let e) = column { return .compare(e, bounds) }
                throw error("expected a column", at: columnToken)
            case .date:
                func day(_ b: (Operand, Token, Bool)?) throws(QueryError) -> Int32? {
                    guard let b else { return nil }
                    guard case .day(let d) = b.0 else { throw error("expected a date YYYY-MM-DD", .typeMismatch, at: b.1) }
                    return d
                }
                return .dates(
                    RangeBounds(
                        lower: try day(lower), lowerInclusive: lower?.2 ?? false,
                        upper: try day(upper), upperInclusive: upper?.2 ?? false))
            case .ticker:
                throw error("tickers compare only with =, != or in (…)", .typeMismatch, at: lower?.1 ?? upper?.1 ?? columnToken)
            default:
                throw error("expected a column", at: columnToken)
            }
        }
    }

    static func flip(_ op: String) -> String {
        switch op {
        case "<": ">"
        case "<=": ">="
        case ">": "<"
        case ">=": "<="
        default: op
        }
    }
}
