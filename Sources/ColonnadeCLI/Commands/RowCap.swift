/// How many rows a table shows on a terminal: a screenful by default, as DuckDB's shell does;
/// `--all` (or the shell's `.maxrows 0`) shows every row. Never applies to pipes and files.
enum RowCap: Sendable, Equatable {
    /// As many as fit the terminal's height, less the header, the rule, the `… more rows …` line,
    /// the statistics line and a prompt; at least 10 (40 when the height is unknown).
    case screen
    /// At most this many rows (the shell's `.maxrows N`).
    case rows(Int)
    /// Every row.
    case none

    /// The rows a table written to `output` may show, `nil` for every row.
    func rows(on output: any OutputWriter) -> Int? {
        guard output.isTerminal else { return nil }
        switch self {
        case .screen: return output.terminalRows.map { max($0 - 5, 10) } ?? 40
        case .rows(let n): return n
        case .none: return nil
        }
    }
}
