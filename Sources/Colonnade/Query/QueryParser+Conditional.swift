/// Parsing conditionals and null functions: `if(c, a, b)`, `greatest(…)`, `least(…)`,
/// `coalesce(…)`, `case when … then … [else …] end` and `x is [not] null`. The words are reserved
/// only where the grammar expects them: `case` followed by `when`, a function name followed by
/// `(`, `is` after a value; a column with such a name is written in double quotes.
extension QueryParser.State {

    /// Whether the word is `word`, case-insensitively (never a quoted name).
    func isWord(_ token: QueryParser.Token, _ word: String) -> Bool {
        if case .word(let w) = token.kind { return w.lowercased() == word }
        return false
    }

    /// A value argument of `context`, as a numeric expression.
    mutating func parseValueArgument(_ context: String) throws(QueryError) -> ValueExpression {
        let t = peek
        let parsed = try parseSum()
        let o = try value(parsed, t, context)
        switch o {
        case .date, .ticker:
            throw error("\(context) applies to value columns and expressions, not to '\(o.isTicker ? "ticker" : "date")'", at: t)
        default:
            return try numeric(o, t, context)
        }
    }

    /// A condition (`and`/`or`/`not` and comparisons) as a predicate.
    mutating func parseConditionArgument() throws(QueryError) -> RowPredicate {
        let t = peek
        return try condition(try parseOr(), t)
    }

    mutating func expect(_ kind: QueryParser.Kind, _ what: String) throws(QueryError) {
        guard peek.kind == kind else { throw error("expected \(what), found \(peek.describe())", at: peek) }
        _ = next()
    }

    /// `if(…)`, `greatest(…)`, `least(…)`, `coalesce(…)` after the name (the `(` is next), or nil
    /// for any other function.
    mutating func parseConditionalCall(_ lower: String) throws(QueryError) -> QueryParser.Operand? {
        if lower == "if" {
            _ = next()  // '('
            let c = try parseConditionArgument()
            try expect(.comma, "',' after the condition of if(condition, then, else)")
            let a = try parseValueArgument("if()")
            try expect(.comma, "',' in if(condition, then, else)")
            let b = try parseValueArgument("if()")
            try expect(.rparen, "')' to close if(")
            return .expression(.conditional([ValueExpression.Branch(c, a)], otherwise: b))
        }
        guard let f = ValueExpression.RowFunction(rawValue: lower) else { return nil }
        _ = next()  // '('
        var xs = [ValueExpression]()
        while true {
            xs.append(try parseValueArgument("\(lower)()"))
            if peek.kind == .comma {
                _ = next()
                continue
            }
            break
        }
        try expect(.rparen, "')' to close \(lower)(")
        if let c = ValueExpression.function(f, xs).constantValue { return .number(c) }
        return .expression(.function(f, xs))
    }

    /// `case when c then a [when …] [else d] end`, at `case` (followed by `when`).
    mutating func parseCase() throws(QueryError) -> QueryParser.Operand {
        let caseToken = next()
        try enter(caseToken)
        defer { depth -= 1 }
        work.nodes += 1
        var branches = [ValueExpression.Branch]()
        while isWord(peek, "when") {
            _ = next()
            let c = try parseConditionArgument()
            guard isWord(peek, "then") else {
                throw error("expected 'then' after the condition of 'when', found \(peek.describe())", at: peek)
            }
            _ = next()
            branches.append(ValueExpression.Branch(c, try parseValueArgument("'then'")))
        }
        guard !branches.isEmpty else { throw error("expected 'when' after 'case', found \(peek.describe())", at: peek) }
        var otherwise: ValueExpression?
        if isWord(peek, "else") {
            _ = next()
            otherwise = try parseValueArgument("'else'")
        }
        guard isWord(peek, "end") else { throw error("expected 'end' to close 'case', found \(peek.describe())", at: peek) }
        _ = next()
        return .expression(.conditional(branches, otherwise: otherwise))
    }

    /// `is [not] null` after the value `first` (at `is`).
    mutating func parseIsNull(_ first: QueryParser.Operand, _ firstToken: QueryParser.Token) throws(QueryError) -> RowPredicate {
        _ = next()  // 'is'
        var negate = false
        if peek.isKeyword(.not) {
            _ = next()
            negate = true
        }
        guard isWord(peek, "null") else { throw error("expected 'null' or 'not null' after 'is', found \(peek.describe())", at: peek) }
        _ = next()
        let x: ValueExpression
        switch first {
        case .date, .ticker:
            throw error("'is null' applies to value columns and expressions; ticker and date are never null", at: firstToken)
        default:
            x = try numeric(first, firstToken, "'is null'")
        }
        return negate ? x.isNotNull : x.isNull
    }
}
