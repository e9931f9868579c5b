/// Expressions that read across tickers or pair two series: cross-sectional functions (the rows of
/// one date, across every ticker), a reference ticker's value on the row's date, and moving
/// variance, covariance, correlation and beta. They are one case of `ValueExpression`
/// (`.crossTicker`), so the language's other code meets them in one place.
///
///     xpct(pct_change(close, 250)) > 0.9                 // the top decile of 12-month momentum that day
///     close / ref(close, 'SPY')                          // relative strength against SPY
///     mbeta(pct_change(close), ref(pct_change(close), 'SPY'), 60)
///
/// **The universe of a cross-sectional function is every ticker's row on that date in the table**,
/// whatever the query's ticker, date and other terms then select (as a series function sees a
/// ticker's whole history). Each row gets the value computed on its own date.
public indirect enum CrossTickerExpression: Sendable, Hashable {
    /// A cross-sectional function of `x` over the rows of the row's date.
    case crossSection(CrossSectionFunction, ValueExpression)
    /// `ref(x, 'SPY')`: `x` evaluated on the ticker's own history, on the row's date; null when
    /// that ticker has no row that date.
    case reference(ValueExpression, ticker: String)
    /// `mvar(x, n)` (y nil), `mcov(x, y, n)`, `mcorr(x, y, n)`, `mbeta(x, y, n)` over the ticker's
    /// last `n` rows, the current one included.
    case moving(MovingStatistic, ValueExpression, ValueExpression?, window: Int)

    /// Functions of the rows of one date.
    public enum CrossSectionFunction: String, Sendable, Hashable, CaseIterable {
        /// The rank among the day's non-null values, ascending, 1-based, ties sharing the lowest
        /// rank (SQL `rank()`); null where `x` is null.
        case xrank
        /// `(rank − 1) / (count − 1)` (SQL `percent_rank()` over the non-null rows); 0 when one
        /// ticker has a value.
        case xpct
        /// `(x − mean) / sample stddev` of the day's non-null values; null where `x` is null, with
        /// fewer than two values, or when the stddev is 0.
        case xz
        /// The day's mean of non-null values, on every row of the day.
        case xmean
        /// The day's count of non-null values, on every row of the day.
        case xcount
    }

    /// Moving statistics of one or two series (sample: divisor n − 1).
    public enum MovingStatistic: String, Sendable, Hashable, CaseIterable {
        /// `mvar(x, n)`: the sample variance.
        case mvar
        /// `mcov(x, y, n)`: the sample covariance.
        case mcov
        /// `mcorr(x, y, n)`: Pearson's correlation; null where a variance is 0.
        case mcorr
        /// `mbeta(x, y, n)`: `mcov(x, y, n) / mvar(y, n)`; null where `mvar(y, n)` is 0.
        case mbeta

        /// Whether it takes two series.
        public var isPair: Bool { self != .mvar }
    }

    /// The function names, for parsers and completions.
    public static var functionNames: [String] {
        CrossSectionFunction.allCases.map(\.rawValue) + ["ref"] + MovingStatistic.allCases.map(\.rawValue)
    }

    /// The expressions it reads.
    public var operands: [ValueExpression] {
        switch self {
        case .crossSection(_, let x), .reference(let x, _): [x]
        case let .moving(_, x, y, _): [x] + (y.map { [$0] } ?? [])
        }
    }

    /// The text, with each operand written by `operand`.
    func text(operand: (ValueExpression) -> String) -> String {
        switch self {
        case let .crossSection(f, x): return "\(f.rawValue)(\(operand(x)))"
        case let .reference(x, ticker): return "ref(\(operand(x)), \(QueryParser.singleQuoted(ticker)))"
        case let .moving(f, x, y, n): return "\(f.rawValue)(\(operand(x)), \(y.map { operand($0) + ", " } ?? "")\(n))"
        }
    }
}

extension QueryParser {
    /// `'text'` with a `'` in it doubled.
    static func singleQuoted(_ text: String) -> String {
        "'" + text.replacingOccurrences(of: "'", with: "''") + "'"
    }
}

extension ValueExpression {
    /// `xrank(x)`: the rank of the row's value among that date's rows (see `CrossTickerExpression`).
    public var xrank: ValueExpression { .crossTicker(.crossSection(.xrank, self)) }
    /// `xpct(x)`: the percent rank among that date's rows.
    public var xpct: ValueExpression { .crossTicker(.crossSection(.xpct, self)) }
    /// `xz(x)`: the z-score among that date's rows.
    public var xz: ValueExpression { .crossTicker(.crossSection(.xz, self)) }
    /// `xmean(x)`: that date's mean.
    public var xmean: ValueExpression { .crossTicker(.crossSection(.xmean, self)) }
    /// `xcount(x)`: that date's count of non-null values.
    public var xcount: ValueExpression { .crossTicker(.crossSection(.xcount, self)) }
    /// `ref(x, ticker)`: `x` on `ticker`'s history, on the row's date.
    public func ref(_ ticker: String) -> ValueExpression { .crossTicker(.reference(self, ticker: ticker)) }
    /// `mvar(x, n)`.
    /// - Precondition: `n > 0`.
    public func mvar(_ n: Int) -> ValueExpression { moving(.mvar, nil, n) }
    /// `mcov(x, y, n)`.
    public func mcov(_ y: ValueExpression, _ n: Int) -> ValueExpression { moving(.mcov, y, n) }
    /// `mcorr(x, y, n)`.
    public func mcorr(_ y: ValueExpression, _ n: Int) -> ValueExpression { moving(.mcorr, y, n) }
    /// `mbeta(x, y, n)`: the beta of `x` to `y`.
    public func mbeta(_ y: ValueExpression, _ n: Int) -> ValueExpression { moving(.mbeta, y, n) }

    private func moving(_ f: CrossTickerExpression.MovingStatistic, _ y: ValueExpression?, _ n: Int) -> ValueExpression {
        precondition(n > 0, "a window must be a positive number of rows")
        return .crossTicker(.moving(f, self, y, window: n))
    }
}

extension Field {
    /// `xrank(x)` of the column.
    public var xrank: ValueExpression { expression.xrank }
    /// `xpct(x)` of the column.
    public var xpct: ValueExpression { expression.xpct }
    /// `xz(x)` of the column.
    public var xz: ValueExpression { expression.xz }
    /// `xmean(x)` of the column.
    public var xmean: ValueExpression { expression.xmean }
    /// `xcount(x)` of the column.
    public var xcount: ValueExpression { expression.xcount }
    /// `ref(x, ticker)` of the column.
    public func ref(_ ticker: String) -> ValueExpression { expression.ref(ticker) }
    /// `mvar(x, n)` of the column.
    public func mvar(_ n: Int) -> ValueExpression { expression.mvar(n) }
    /// `mcov(x, y, n)`.
    public func mcov(_ y: ValueExpression, _ n: Int) -> ValueExpression { expression.mcov(y, n) }
    /// `mcorr(x, y, n)`.
    public func mcorr(_ y: ValueExpression, _ n: Int) -> ValueExpression { expression.mcorr(y, n) }
    /// `mbeta(x, y, n)`.
    public func mbeta(_ y: ValueExpression, _ n: Int) -> ValueExpression { expression.mbeta(y, n) }
}
