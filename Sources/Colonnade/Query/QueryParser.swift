/// Parses the text form of a predicate against a table's columns.
///
/// Grammar (keywords are case-insensitive):
///
///     expr       := and ('or' and)*
///     and        := unary ('and' unary)*
///     unary      := 'not' unary | '(' expr ')' | 'true' | 'false' | comparison
///     comparison := operand op operand [op operand]        -- 80 < high < 83, close >= 1e6
///                 | column ['not'] 'between' value 'and' value
///                 | column ['not'] 'in' '(' value (',' value)* ')'
///     op         := '<' | '<=' | '>' | '>=' | '=' | '==' | '!=' | '<>'
///     operand    := column | number | date | 'text'
///     column     := identifier | "Source Name" | ticker | date
///
/// Columns are normalized identifiers (`adj_low`) or double-quoted source names (`"Adj. Low"`);
/// `ticker` and `date` always exist. Numbers may have a sign, a fraction and an exponent; dates
/// are `YYYY-MM-DD` (bare or single-quoted). `<` and `>` are exclusive, `between` inclusive.
/// Errors name the line, the column and what was expected.
public struct QueryParser: Sendable {
    private let identifiers: [String]
    private let sourceNames: [String]
    private let dateNames: Set<String>

    /// A parser for expressions over `table`'s columns.
    public init(table: QuoteTable) {
        identifiers = table.schema.map(\.identifier)
        sourceNames = table.schema.map(\.name)
        dateNames = ["date", table.dateColumnName.lowercased()]
    }

    /// Parses `expression` into a predicate.
    /// - Throws: `QueryError` naming the position (line:column) and what was expected.
    public func parse(_ expression: String) throws(QueryError) -> RowPredicate {
        var state = try State(text: expression, parser: self)
        let p = try state.parseOr()
        if state.peek.kind != .end {
            throw state.error("unexpected \(state.peek.describe()), expected 'and', 'or' or the end of the expression", at: state.peek)
        }
        return p
    }

    /// Parses a value expression such as `pct_change(close)` or `(high - low) / close` (for sort
    /// keys and computed columns).
    /// - Throws: `QueryError` naming the position, or saying the text is not a number per row
    ///   (`ticker`, `date` and comparisons are not values here).
    public func parseValue(_ expression: String) throws(QueryError) -> ValueExpression {
        var state = try State(text: expression, parser: self)
        let first = state.peek
        let operand = try state.parseSum()
        if state.peek.kind != .end {
            throw state.error("unexpected \(state.peek.describe()), expected an operator or the end of the expression", at: state.peek)
        }
        return try state.numeric(operand, first, "a value")
    }

    // MARK: Tokens

    enum Kind: Equatable {
        case word(String)        // identifier or keyword, as written
        case quoted(String)      // "Source Name"
        case text(String)        // 'string'
        case number(Double)
        case date(Int32)
        case op(String)
        case lparen, rparen, comma, end
    }

    struct Token {
        var kind: Kind
        var offset: Int
        var length: Int
        /// For a `.number` written as digits only that a Double cannot hold exactly: the exact literal.
        var integer: IntegerLiteral? = nil

        func describe() -> String {
            switch kind {
            case .word(let w): "'\(w)'"
            case .quoted(let q): "\"\(q)\""
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

        func isKeyword(_ k: String) -> Bool {
            if case .word(let w) = kind { return w.lowercased() == k }
            return false
        }
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

        init(text: String, parser: QueryParser) throws(QueryError) {
            bytes = Array(text.utf8)
            self.parser = parser
            try tokenize()
        }

        var peek: Token { tokens[index] }

        mutating func next() -> Token {
            let t = tokens[index]
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
                if c == 32 || c == 9 || c == 10 || c == 13 { i += 1; continue }
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
                    if j < n && bytes[j] == 46 { j += 1; while j < n && isDigit(bytes[j]) { j += 1 } }
                    if j < n && (bytes[j] == 101 || bytes[j] == 69) {
                        var k = j + 1
                        if k < n && (bytes[k] == 43 || bytes[k] == 45) { k += 1 }
                        guard k < n && isDigit(bytes[k]) else {
                            throw error("malformed number '\(String(decoding: bytes[i ..< min(k, n)], as: UTF8.self))': exponent has no digits", offset: start)
                        }
                        while k < n && isDigit(bytes[k]) { k += 1 }
                        j = k
                    }
                    if j < n && isLetter(bytes[j]) {
                        throw error("malformed number: unexpected '\(Character(Unicode.Scalar(bytes[j])))' after digits", offset: j)
                    }
                    let text = String(decoding: bytes[i ..< j], as: UTF8.self)
                    guard let value = Double(text) else { throw error("malformed number '\(text)'", offset: start) }
                    tokens.append(Token(kind: .number(value), offset: start, length: j - i,
                                        integer: IntegerLiteral(digits: bytes[i ..< j])))
                    i = j
                    continue
                }
                if isLetter(c) {
                    var j = i
                    while j < n && (isLetter(bytes[j]) || isDigit(bytes[j]) || bytes[j] == 46) { j += 1 }
                    tokens.append(Token(kind: .word(String(decoding: bytes[i ..< j], as: UTF8.self)), offset: start, length: j - i))
                    i = j
                    continue
                }
                if c == 34 || c == 39 {  // "quoted identifier" or 'text'
                    var j = i + 1
                    var content = [UInt8]()
                    var closed = false
                    while j < n {
                        if bytes[j] == c {
                            if j + 1 < n && bytes[j + 1] == c { content.append(c); j += 2; continue }
                            closed = true
                            j += 1
                            break
                        }
                        content.append(bytes[j])
                        j += 1
                    }
                    guard closed else {
                        throw error("unterminated \(c == 34 ? "quoted name" : "string"): missing closing \(c == 34 ? "\"" : "'")", offset: start)
                    }
                    let s = String(decoding: content, as: UTF8.self)
                    tokens.append(Token(kind: c == 34 ? .quoted(s) : .text(s), offset: start, length: j - i))
                    i = j
                    continue
                }
                switch c {
                case 40: tokens.append(Token(kind: .lparen, offset: start, length: 1)); i += 1; continue
                case 41: tokens.append(Token(kind: .rparen, offset: start, length: 1)); i += 1; continue
                case 44: tokens.append(Token(kind: .comma, offset: start, length: 1)); i += 1; continue
                default: break
                }
                let two = i + 1 < n ? String(decoding: bytes[i ... i + 1], as: UTF8.self) : ""
                if ["<=", ">=", "<>", "!=", "=="].contains(two) {
                    tokens.append(Token(kind: .op(two), offset: start, length: 2)); i += 2; continue
                }
                if c == 60 || c == 62 || c == 61 || c == 45 || c == 43 || c == 42 || c == 47 {
                    tokens.append(Token(kind: .op(String(Character(Unicode.Scalar(c)))), offset: start, length: 1)); i += 1; continue
                }
                let ch = String(decoding: bytes[i ..< min(n, i + 4)], as: UTF8.self).first.map(String.init) ?? "?"
                throw error("unexpected character '\(ch)'", offset: start)
            }
            tokens.append(Token(kind: .end, offset: n, length: 0))
        }

        // MARK: Grammar

        mutating func parseOr() throws(QueryError) -> RowPredicate {
            var p = try parseAnd()
            while peek.isKeyword("or") {
                _ = next()
                p = p || (try parseAnd())
            }
            return p
        }

        mutating func parseAnd() throws(QueryError) -> RowPredicate {
            var p = try parseUnary()
            while peek.isKeyword("and") {
                _ = next()
                p = p && (try parseUnary())
            }
            return p
        }

        mutating func parseUnary() throws(QueryError) -> RowPredicate {
            if peek.isKeyword("not") {
                _ = next()
                return .not(try parseUnary())
            }
            if peek.kind == .lparen {
                // A parenthesised predicate, or the start of an expression: `(high - low) / close > 0.05`.
                let saved = index
                let open = next()
                var groupError: QueryError?
                do {
                    let p = try parseOr()
                    if peek.kind == .rparen {
                        _ = next()
                        if !continuesAsValue(peek) { return p }
                    } else {
                        groupError = error("expected ')' to close the '(' at \(position(open)), found \(peek.describe())", at: peek)
                    }
                } catch {
                    groupError = error
                }
                index = saved
                do {
                    return try parseComparison()
                } catch {
                    // Report the reading that got further.
                    if let groupError, (groupError.offset ?? 0) >= (error.offset ?? 0) { throw groupError }
                    throw error
                }
            }
            if peek.isKeyword("true") { _ = next(); return .constant(true) }
            if peek.isKeyword("false") { _ = next(); return .constant(false) }
            return try parseComparison()
        }

        func position(_ t: Token) -> String {
            let e = error("", at: t)
            return "\(e.line ?? 1):\(e.column ?? 1)"
        }

        /// Whether `t` continues a value (so a parenthesised group before it was an expression).
        func continuesAsValue(_ t: Token) -> Bool {
            if case .op = t.kind { return true }
            return t.isKeyword("between") || t.isKeyword("in")
        }

        static func isComparison(_ op: String) -> Bool { ["<", "<=", ">", ">=", "=", "==", "!=", "<>"].contains(op) }

        mutating func parseComparison() throws(QueryError) -> RowPredicate {
            let firstToken = peek
            let first = try parseSum()
            if !State.isValue(first) {
                var negate = false
                if peek.isKeyword("not") { _ = next(); negate = true
                    guard peek.isKeyword("between") || peek.isKeyword("in") else {
                        throw error("expected 'between' or 'in' after 'not', found \(peek.describe())", at: peek)
                    }
                }
                if peek.isKeyword("between") {
                    _ = next()
                    let loToken = peek
                    let lo = try parseSum(after: first)
                    guard peek.isKeyword("and") else {
                        throw error("expected 'and' in 'between … and …', found \(peek.describe())", at: peek)
                    }
                    _ = next()
                    let hiToken = peek
                    let hi = try parseSum(after: first)
                    let p: RowPredicate
                    if State.isValue(lo) && State.isValue(hi) {
                        p = try compare(first, firstToken, lower: (lo, loToken, true), upper: (hi, hiToken, true))
                    } else {
                        p = .and([try single(first, firstToken, ">=", loToken, lo, loToken),
                                  try single(first, firstToken, "<=", hiToken, hi, hiToken)])
                    }
                    return negate ? .not(p) : p
                }
                if peek.isKeyword("in") {
                    _ = next()
                    let p = try parseIn(first, firstToken)
                    return negate ? .not(p) : p
                }
            }
            guard case .op(let op1) = peek.kind, State.isComparison(op1) else {
                if State.isValue(first) {
                    throw error("expected a comparison operator after \(firstToken.describe()), found \(peek.describe())", at: peek)
                }
                throw error("expected a comparison (<, <=, >, >=, =, !=, between, in) after \(firstToken.describe()), found \(peek.describe())", at: peek)
            }
            let op1Token = next()
            let secondToken = peek
            let second = try parseSum(after: first)
            guard case .op(let op2) = peek.kind, ["<", "<=", ">", ">="].contains(op2) else {
                return try single(first, firstToken, op1, op1Token, second, secondToken)
            }
            // A chain: a < b < c (or a > b > c).
            let op2Token = next()
            let thirdToken = peek
            let third = try parseSum(after: second)
            let lessChain = ["<", "<="].contains(op1) && ["<", "<="].contains(op2)
            let greaterChain = [">", ">="].contains(op1) && [">", ">="].contains(op2)
            guard lessChain || greaterChain else {
                throw error("a chained comparison needs both operators in the same direction (< and <=, or > and >=), found '\(op1)' and '\(op2)'", at: op2Token)
            }
            if State.isValue(second) {
                throw error("a chained comparison must have a column or an expression in the middle, as in 80 < high < 83", at: secondToken)
            }
            if State.isValue(first) && State.isValue(third) {
                if lessChain {
                    return try compare(second, secondToken, lower: (first, firstToken, op1 == "<="), upper: (third, thirdToken, op2 == "<="))
                }
                return try compare(second, secondToken, lower: (third, thirdToken, op2 == ">="), upper: (first, firstToken, op1 == ">="))
            }
            return .and([try single(first, firstToken, op1, op1Token, second, secondToken),
                         try single(second, secondToken, op2, op2Token, third, thirdToken)])
        }

        // MARK: Arithmetic

        /// sum := term (('+' | '-') term)*. After a ticker column, one symbol instead.
        mutating func parseSum(after left: Operand? = nil) throws(QueryError) -> Operand {
            if let left, case .ticker = left { return try parseOperand(after: left) }
            let firstToken = peek
            var value = try parseTerm(after: left)
            var valueToken = firstToken
            while case .op(let o) = peek.kind, o == "+" || o == "-" {
                _ = next()
                let rightToken = peek
                let right = try parseTerm(after: left)
                value = try arithmetic(o == "+" ? .add : .subtract, value, valueToken, right, rightToken)
                valueToken = firstToken
            }
            return value
        }

        /// term := factor (('*' | '/') factor)*
        mutating func parseTerm(after left: Operand?) throws(QueryError) -> Operand {
            let firstToken = peek
            var value = try parseFactor(after: left)
            while case .op(let o) = peek.kind, o == "*" || o == "/" {
                _ = next()
                let rightToken = peek
                let right = try parseFactor(after: left)
                value = try arithmetic(o == "*" ? .multiply : .divide, value, firstToken, right, rightToken)
            }
            return value
        }

        /// factor := ('-' | '+') factor | '(' sum ')' | function '(' … ')' | operand
        mutating func parseFactor(after left: Operand?) throws(QueryError) -> Operand {
            if case .op(let o) = peek.kind, o == "-" || o == "+" {
                let signToken = next()
                if peek.kind == .end { throw error("expected a number after '\(o)'", at: peek) }
                let operandToken = peek
                let x = try parseFactor(after: left)
                if o == "+" { _ = try numeric(x, operandToken, "'+'"); return x }
                if case .number(let v) = x { return .number(-v) }
                if case .integer(let l) = x { return .integer(l.negated) }
                _ = signToken
                return .expression(.negate(try numeric(x, operandToken, "'-'")))
            }
            if peek.kind == .lparen {
                let open = next()
                let x = try parseSum(after: left)
                guard peek.kind == .rparen else {
                    throw error("expected ')' to close the '(' at \(position(open)), found \(peek.describe())", at: peek)
                }
                _ = next()
                return x
            }
            if case .word(let w) = peek.kind, index + 1 < tokens.count, tokens[index + 1].kind == .lparen,
               !["and", "or", "not", "between", "in"].contains(w.lowercased()) {
                return try parseCall()
            }
            return try parseOperand(after: left)
        }

        /// `abs(x)`, `prev(x[, n])`, `mavg(x, n)`, …
        mutating func parseCall() throws(QueryError) -> Operand {
            let nameToken = next()
            guard case .word(let name) = nameToken.kind else { throw error("expected a function", at: nameToken) }
            _ = next()  // '('
            let lower = name.lowercased()
            let math = ValueExpression.MathFunction(rawValue: lower)
            let series = ValueExpression.SeriesFunction(rawValue: lower)
            guard math != nil || series != nil else {
                let known = ValueExpression.MathFunction.allCases.map(\.rawValue) + ValueExpression.SeriesFunction.allCases.map(\.rawValue)
                throw error("unknown function '\(name)'", at: nameToken, suggestions: Suggestions.closest(to: lower, among: known))
            }
            let argumentToken = peek
            if argumentToken.kind == .rparen {
                throw error("\(lower)() needs an argument, as in \(lower)(close\(series.map { $0.windowIsOptional ? "" : ", 20" } ?? ""))", at: argumentToken)
            }
            let argument = try parseSum()
            let x: ValueExpression
            switch argument {
            case .date, .ticker:
                throw error("\(lower)() applies to value columns and expressions, not to '\(argument.isTicker ? "ticker" : "date")'", at: argumentToken)
            default:
                x = try numeric(argument, argumentToken, "\(lower)()")
            }
            var window = 1
            if let series {
                if peek.kind == .comma {
                    _ = next()
                    let nToken = next()
                    guard case .number(let v) = nToken.kind, v >= 1, v <= 1_000_000, v == v.rounded(), nToken.length > 0,
                          !String(decoding: bytes[nToken.offset ..< nToken.offset + nToken.length], as: UTF8.self).contains(where: { $0 == "." || $0 == "e" || $0 == "E" })
                    else {
                        throw error("the window of \(lower)() must be a positive whole number of rows (1 to 1000000), found \(nToken.describeText(bytes))", at: nToken)
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

        func arithmetic(_ op: ValueExpression.Operator, _ a: Operand, _ aToken: Token, _ b: Operand, _ bToken: Token) throws(QueryError) -> Operand {
            let x = try numeric(a, aToken, "'\(op.rawValue)'")
            let y = try numeric(b, bToken, "'\(op.rawValue)'")
            if case .number(let u) = x, case .number(let v) = y { return .number(ValueExpression.apply(op, u, v)) }
            return .expression(.arithmetic(op, x, y))
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
                items.append((try parseSum(after: column), t))
                if peek.kind == .comma { _ = next(); continue }
                if peek.kind == .rparen { _ = next(); break }
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
                guard case .number(let x) = v.kind else { throw error("expected a number after '\(t.kind == .op("-") ? "-" : "+")'", at: v) }
                if let l = v.integer { return .integer(sign < 0 ? l.negated : l) }
                return .number(sign * x)
            case .word(let w):
                if isTickerContext { return .text(w) }
                let lower = w.lowercased()
                if ["and", "or", "not", "between", "in"].contains(lower) {
                    throw error("expected a column or a value, found the keyword '\(w)'", at: t)
                }
                if lower == "ticker" { return .ticker }
                if parser.dateNames.contains(lower) { return .date }
                if parser.identifiers.contains(w) { return .value(name: w) }
                if let i = parser.identifiers.firstIndex(where: { $0 == lower }) { return .value(name: parser.identifiers[i]) }
                if let i = parser.sourceNames.firstIndex(of: w) { return .value(name: parser.identifiers[i]) }
                throw error("unknown column '\(w)'", .unknownColumn, at: t,
                            suggestions: Suggestions.closest(to: w, among: parser.identifiers + ["date", "ticker"]))
            case .quoted(let q):
                if isTickerContext { return .text(q) }
                if let i = parser.sourceNames.firstIndex(of: q) { return .value(name: parser.identifiers[i]) }
                if let i = parser.identifiers.firstIndex(of: q) { return .value(name: parser.identifiers[i]) }
                if parser.dateNames.contains(q.lowercased()) { return .date }
                if q.lowercased() == "ticker" { return .ticker }
                throw error("unknown column \"\(q)\"", .unknownColumn, at: t,
                            suggestions: Suggestions.closest(to: q, among: parser.sourceNames).map { "\"\($0)\"" })
            case .end:
                throw error("unexpected end of expression, expected a column or a value", at: t)
            default:
                throw error("expected a column or a value, found \(t.describe())", at: t)
            }
        }

        /// `column op value`.
        func single(_ column: Operand, _ columnToken: Token, _ op: String, _ opToken: Token,
                    _ value: Operand, _ valueToken: Token) throws(QueryError) -> RowPredicate {
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
        func compare(_ column: Operand, _ columnToken: Token, lower: (Operand, Token, Bool)?,
                     upper: (Operand, Token, Bool)?) throws(QueryError) -> RowPredicate {
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
                case .number(let x)?: bounds.lower = x; bounds.lowerInclusive = lower?.2 ?? false
                case .integer(let l)? where isColumn && l.exact != nil: integers.lower = l.exact; integers.lowerInclusive = lower?.2 ?? false
                case .integer(let l)?: (bounds.lower, bounds.lowerInclusive) = l.doubleBound(lower: true, inclusive: lower?.2 ?? false)
                default: break
                }
                switch hi {
                case .number(let x)?: bounds.upper = x; bounds.upperInclusive = upper?.2 ?? false
                case .integer(let l)? where isColumn && l.exact != nil: integers.upper = l.exact; integers.upperInclusive = upper?.2 ?? false
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
                return .dates(RangeBounds(lower: try day(lower), lowerInclusive: lower?.2 ?? false,
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
