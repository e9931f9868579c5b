import Colonnade

/// `--on DAY` as of a day (`QuoteTable.rows(asOf:maxStale:)`) and `--max-stale`.
extension FilterCommand {
    /// `--max-stale`'s value (default 7 days).
    /// - Throws: `UsageError.invalidValue` for anything but a whole number of days or `none`.
    static func maxStale(_ text: String?, command: String) throws -> StaleLimit {
        guard let text else { return .default }
        guard let limit = StaleLimit(text) else {
            throw UsageError.invalidValue(
                option: "--max-stale", value: text,
                reason: "expected a whole number of calendar days (0 to 100000) or 'none'",
                suggestion: nil, command: command)
        }
        return limit
    }

    /// One note on stderr when the rows `--on` used are not all of the day itself, or tickers were
    /// left out as stale:
    /// `note: as of 2014-05-23 (2014-05-26 has no rows); 3 tickers with no row since before 2014-05-19 left out (--max-stale 7)`.
    static func noteAsOf(_ day: ScreenDay?, maxStale: StaleLimit, table: QuoteTable, context: CommandContext) {
        guard let day, let note = table.rows(asOf: day, maxStale: maxStale).note else { return }
        context.note(note)
    }
}
