// The calls of `CrossTickerExpression` in the query language: xrank(x), xpct(x), xz(x),
// xmean(x), xcount(x), ref(x, 'SPY'), mvar(x, n), mcov(x, y, n), mcorr(x, y, n), mbeta(x, y, n).

extension QueryParser.State {
    /// Parses the call to `lower` (one of `CrossTickerExpression.functionNames`) after its name
    /// and `(` have been read, through the closing `)`.
    mutating func parseCrossTickerCall(_ lower: String, _ nameToken: QueryParser.Token) throws(QueryError) -> QueryParser.Operand {
        func operand(_ context: String) throws(QueryError) -> ValueExpression {
            let token = peek
            if token.kind == .rparen || token.kind == .comma {
                throw error("\(lower)() needs an argument here, found \(token.describe())", at: token)
            }
            let argument = try value(try parseSum(), token, context)
            switch argument {
            case .date, .ticker:
                throw error(
                    "\(lower)() applies to value columns and expressions, not to '\(argument.isTicker ? "ticker" : "date")'", at: token)
            default:
                return try numeric(argument, token, context)
            }
        }
        func comma() throws(QueryError) {
            guard peek.kind == .comma else {
                throw error("\(lower)() needs more arguments, as in \(Self.shape(lower)), found \(peek.describe())", at: peek)
            }
            _ = next()
        }
        let x = try operand("\(lower)()")
        let result: ValueExpression
        if let f = CrossTickerExpression.CrossSectionFunction(rawValue: lower) {
            result = .crossTicker(.crossSection(f, x))
        } else if lower == "ref" {
            try comma()
            // The ticker: 'SPY', "SPY" or SPY — never a column.
            let t = next()
            let symbol: String
            switch t.kind {
            case .text(let s), .quoted(let s), .word(let s): symbol = s
            default: throw error("ref() needs a ticker symbol, as in ref(close, 'SPY'), found \(t.describe())", at: t)
            }
            result = .crossTicker(.reference(x, ticker: symbol))
        } else if let f = CrossTickerExpression.MovingStatistic(rawValue: lower) {
            try comma()
            var y: ValueExpression?
            if f.isPair {
                y = try operand("\(lower)()")
                try comma()
            }
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
            result = .crossTicker(.moving(f, x, y, window: Int(v)))
        } else {
            throw error("unknown function '\(lower)'", at: nameToken)
        }
        guard peek.kind == .rparen else {
            throw error("expected ')' to close \(lower)(, found \(peek.describe())", at: peek)
        }
        _ = next()
        return .expression(result)
    }

    /// How a call is written, for error messages.
    static func shape(_ lower: String) -> String {
        switch lower {
        case "ref": "ref(close, 'SPY')"
        case "mvar": "mvar(x, 20)"
        case "mcov", "mcorr", "mbeta": "\(lower)(x, y, 60)"
        default: "\(lower)(close)"
        }
    }
}
