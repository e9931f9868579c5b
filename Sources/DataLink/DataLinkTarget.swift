/// What a request asked for, in the user's terms; every error and response names it.
public enum DataLinkTarget: Sendable, Hashable, CustomStringConvertible {
    /// A time-series dataset, e.g. `WIKI/AAPL`.
    case dataset(database: String, code: String)
    /// A table and the tickers of one request, e.g. `WIKI/PRICES` for `AAPL,MSFT`.
    case table(String, tickers: [String])

    /// `dataset WIKI/FDXX` or `table WIKI/PRICES (tickers AAPL, MSFT)`; long ticker lists are
    /// shortened to the first five and a count.
    public var description: String {
        switch self {
        case let .dataset(database, code):
            return "dataset \(database)/\(code)"
        case let .table(name, tickers):
            if tickers.isEmpty { return "table \(name)" }
            let shown = tickers.prefix(5).joined(separator: ", ")
            let more = tickers.count > 5 ? " and \(tickers.count - 5) more" : ""
            return "table \(name) (ticker\(tickers.count == 1 ? "" : "s") \(shown)\(more))"
        }
    }
}
