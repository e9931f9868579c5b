// The declarations of the adjusted-price options and of `colonnade adjust` (docs/ADJUSTMENTS.md),
// kept apart from `CommandSpec+Colonnade.swift` as the shell's and chart's are.

import Colonnade

extension CommandSpec {
    /// `colonnade adjust`: recompute the adjusted columns from the raw ones by WIKI's rule.
    static let adjust = CommandSpec(
        name: "adjust",
        abstract: "Recompute (or create) the adjusted columns from the raw prices, dividends and splits.",
        discussion: """
            adj_open, adj_high, adj_low, adj_close and adj_volume are rewritten by WIKI's rule \
            (docs/ADJUSTMENTS.md): each split or dividend day t scales every earlier price by \
            close_t / ((close_t + dividend_t) * split_t) and every earlier volume by split_t, \
            anchored at the ticker's newest adj_close / close when the table has adjusted columns. \
            Data imported without adjusted columns gets them. The table needs WIKI's open, high, \
            low, close, volume, ex_dividend and split_ratio columns. The snapshot is replaced \
            atomically under its write lock.
            """,
        options: AdjustCommand.Options.all,
        examples: ["adjust", "adjust --tickers AAPL,KO --snapshot snapshots/quotes.snapshot"]
    )
}

extension AdjustCommand {
    /// `adjust`'s options, in help order.
    enum Options {
        static let tickers = OptionKey.list(
            "tickers", value: "A,B", abstract: "Only these tickers (comma-separated; may be repeated). Default: all.")
        static let snapshot = SharedOptions.writeSnapshot("Snapshot file to rewrite.")
        static let noWait = SharedOptions.noWait

        static let all: [OptionSpec] = [tickers.spec, snapshot.spec, noWait.spec]
    }
}

extension VerifyCommand.Options {
    static let adjustments = OptionKey.flag(
        "adjustments",
        abstract: "Also check every ticker's adjusted columns against WIKI's rule (docs/ADJUSTMENTS.md) and report the "
            + "first day each fails; exit status 3 when one does (1 stays a damaged file).")
}

extension InfoCommand.Options {
    static let ticker = OptionKey.string("ticker", value: "T", abstract: "List this ticker's splits and dividends.")
}
