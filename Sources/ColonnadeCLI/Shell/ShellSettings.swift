import Colonnade

/// What `colonnade shell`'s dot-commands set, applied to every screen typed after them: the
/// equivalent of `filter` options given on each command line.
struct ShellSettings: Equatable {
    /// `.tickers A,B` → `--tickers A,B`; empty for all tickers.
    var tickers: [String] = []
    /// `.from YYYY-MM-DD` → `--from`.
    var from: String?
    /// `.to YYYY-MM-DD` → `--to`.
    var to: String?
    /// `.format table|csv|json|ndjson` → `--format`.
    var format = OutputFormat.table.rawValue
    /// `.columns a,b|all` → `--columns`; empty for filter's default.
    var columns: [String] = []
    /// `.limit N` → `--limit`.
    var limit: Int?
    /// `.timing on`: the time of each answer on standard error.
    var timing = false
    /// `.maxrows N`: how many rows a table on the terminal shows (a screenful by default; 0: all).
    var maxRows = RowCap.screen
    /// `.on`: screens as of this day (`YYYY-MM-DD` or `latest`), as filter's `--on`.
    var on: String?
    /// `.max-stale`: filter's `--max-stale` with `.on` (nil: its default, 7 days).
    var maxStale: String?
    /// `.adjusted on`: filter's `--adjusted` (open … volume read the adjusted columns).
    var adjusted = false

    /// The `filter` arguments these settings stand for, before the line's own.
    ///
    /// - Parameter summarizing: whether the line asks for `--count` or `--agg`, which print their
    ///   own columns and rows: `.columns` and `.limit` are for rows and are then left out (filter
    ///   refuses them there).
    func filterArguments(summarizing: Bool = false) -> [String] {
        var out: [String] = []
        if !tickers.isEmpty { out += ["--tickers", tickers.joined(separator: ",")] }
        if let from { out += ["--from", from] }
        if let to { out += ["--to", to] }
        if let on {
            out += ["--on", on]
            if let maxStale { out += ["--max-stale", maxStale] }
        }
        if adjusted { out.append("--adjusted") }
        out += ["--format", format]
        if !summarizing, !columns.isEmpty { out += ["--columns", columns.joined(separator: ",")] }
        if !summarizing, let limit { out += ["--limit", String(limit)] }
        return out
    }

    /// `.maxrows` as `.show` prints it.
    var maxRowsText: String {
        switch maxRows {
        case .screen: "(a screenful)"
        case .rows(let n): String(n)
        case .none: "0 (all)"
        }
    }

    /// One line per setting, as `.show` prints them; the values as typed, escaped (`TerminalText`).
    var description: String {
        let e = { (text: String) in TerminalText.escaped(text) }
        return [
            "tickers  \(tickers.isEmpty ? "(all)" : e(tickers.joined(separator: ",")))",
            "from     \(from.map(e) ?? "(first day)")",
            "to       \(to.map(e) ?? "(last day)")",
            "on       \(on.map(e) ?? "(every day)")",
            "maxstale \(maxStale.map(e) ?? "7")",
            "adjusted \(adjusted ? "on (open … volume read adj_open … adj_volume)" : "off")",
            "format   \(e(format))",
            "columns  \(columns.isEmpty ? "(ticker, date and the columns a screen mentions)" : e(columns.joined(separator: ",")))",
            "limit    \(limit.map(String.init) ?? "(none)")",
            "timing   \(timing ? "on" : "off")",
            "maxrows  \(maxRowsText)",
        ].joined(separator: "\n")
    }
}
