// The declarations of the commands for working in a shell: completions (and the hidden helper its
// scripts call), chart and shell. Behaviour lives in each command's `run`.

extension CommandSpec {
    /// `colonnade completions`: a completion script generated from these declarations.
    static let completions = CommandSpec(
        name: "completions",
        abstract: "Print a shell completion script for bash, zsh or fish.",
        discussion: "The script is generated from the same declarations the parser and 'colonnade help' use: "
            + "commands, options, --format values, file names for --snapshot, and the column names and tickers "
            + "of the snapshot on the line (else the default one) for --columns, --tickers and TICKER arguments, "
            + "which the script asks of 'colonnade _complete' (an internal command, not a stable interface) "
            + "and never expands: a name is offered literally, quoted as one shell word.",
        positionals: [PositionalSpec("SHELL", abstract: "bash, zsh or fish.")],
        examples: [
            "completions bash > ~/.local/share/bash-completion/completions/colonnade",
            "completions zsh > \"${fpath[1]}/_colonnade\"",
            "completions fish > ~/.config/fish/completions/colonnade.fish",
        ]
    )

    /// `colonnade _complete`: internal, what completion scripts ask while completing.
    static let completeNames = CommandSpec(
        name: "_complete",
        abstract: "Internal: print a snapshot's column names or tickers, one per line, for completion scripts.",
        discussion: "Not a stable interface: called by the scripts of 'colonnade completions' while completing. "
            + "Names with spaces, control or non-ASCII characters are not printed.",
        positionals: [PositionalSpec("TOPIC", abstract: "columns, value-columns or tickers.")],
        options: [CompleteNamesCommand.Options.snapshot.spec, CompleteNamesCommand.Options.word.spec],
        listing: .hidden
    )
}

extension CommandSpec {
    /// `colonnade chart`: an SVG price chart.
    static let chart = CommandSpec(
        name: "chart",
        abstract: "Draw tickers' prices as one self-contained SVG chart.",
        discussion: """
            One ticker with at most 250 trading days shown is drawn as candlesticks (open, high, low, \
            close), anything longer as a close line; several tickers share one axis, and with \
            --normalize each starts at 1.0 (growth). Rows matching --where are marked with a dot, \
            --overlay draws more columns or expressions (mavg(close,50), computed with the history before --from) as dashed lines, --volume adds volume bars beneath. Nulls \
            leave gaps. The same input gives the same bytes.

            When the table has adjusted columns (adj_open … adj_volume), prices are drawn adjusted for \
            splits and dividends, and --where, --overlay and --price read open, high, low, close and \
            volume as their adjusted columns (as filter --adjusted), so marks and overlays agree with \
            the drawn prices; --raw draws the raw prices and reads the raw columns. Candlesticks always \
            use one set of open, high, low and close; --price COLUMN draws that column as a line. Split \
            days are marked on the time axis. --on DAY ends each ticker's chart at its last row on or \
            before DAY, as filter --on chooses it (--max-stale leaves out a ticker with no row since).
            """,
        positionals: [PositionalSpec("TICKER", isRepeating: true, abstract: "Tickers to draw (AAPL, or AAPL,MSFT).")],
        options: ChartCommand.Options.all,
        constraints: [
            .notAfter(ChartCommand.Options.from.name, ChartCommand.Options.to.name),
            .mutuallyExclusive([ChartCommand.Options.on.name, ChartCommand.Options.to.name]),
            .requires(option: ChartCommand.Options.maxStale.name, anyOf: [ChartCommand.Options.on.name]),
        ],
        examples: [
            "chart AAPL --from 2005-01-01 --to 2005-12-31 --volume -o aapl-2005.svg",
            "chart AAPL --where 'volume > 5e5' --overlay adj_close -o aapl.svg",
            "chart AAPL --from 2006-01-01 --overlay 'mavg(close,50)' --overlay 'mavg(close,200)' -o aapl-averages.svg",
            "chart AAPL,MSFT,KO --normalize --from 2005-01-01 -o growth.svg",
            "chart AAPL --log --raw --from 2000-01-01 -o aapl-raw-log.svg",
            "chart AAPL,MSFT --on 2005-06-30 --from 2005-01-01 -o as-of.svg",
        ]
    )
}

extension CommandSpec {
    /// `colonnade shell`: load once, then answer screens line by line.
    static let shell = CommandSpec(
        name: "shell",
        abstract: "Load a snapshot once, then answer screens typed line by line.",
        discussion: """
            Each line is a --where expression (or filter options such as --count or --agg), answered \
            exactly as 'colonnade filter' would with the settings made by dot-commands (.tickers, .from, \
            .to, .format, .columns, .limit, .timing, .open, .info, .show, .help, .quit; see .help). \
            On a terminal: a prompt, line editing, history in ~/.colonnade_history, Ctrl-C cancels the \
            running query, Ctrl-D quits. From a pipe or file: no prompt, one answer per line read, \
            errors name the line; the exit status is 1 if any line failed.
            """,
        options: [
            ShellCommand.Options.snapshot.spec, ShellCommand.Options.noVerify.spec, VersionOptions.atVersion.spec,
            VersionOptions.atTime.spec,
        ],
        examples: [
            "shell --snapshot snapshots/quotes.snapshot",
            "shell < screens.txt",
            "printf '.tickers AAPL\\nclose > 300\\n' | colonnade shell",
        ]
    )
}

extension CompleteNamesCommand {
    /// `_complete`'s options.
    enum Options {
        static let snapshot = OptionKey.string("snapshot", value: "PATH", abstract: "Snapshot to read. Default: as for filter.")
        static let word = OptionKey.string(
            "word", value: "WORD",
            abstract: "The word being completed, as typed: print only the names its last comma-separated item starts, "
                + "each after the items before that comma and quoted as one shell word (for bash).")
    }
}

extension ChartCommand {
    /// `chart`'s options, in help order.
    enum Options {
        static let snapshot = SharedOptions.readSnapshot("Snapshot file to read.")
        static let from = OptionKey.date("from", abstract: "First day shown.")
        static let to = OptionKey.date("to", abstract: "Last day shown.")
        static let `where` = OptionKey.string(
            "where", value: "EXPR", abstract: "Mark the rows matching this predicate (as filter's --where).")
        static let overlay = OptionKey.list(
            "overlay", value: "EXPR",
            abstract: "Draw a column or series expression too, as a dashed line (may be repeated), e.g. adj_close or 'mavg(close,50)'.")
        static let price = OptionKey.string("price", value: "COLUMN", default: "close", abstract: "The column drawn as the price line.")
        static let volume = OptionKey.flag("volume", abstract: "Draw volume bars beneath (one ticker).")
        static let normalize = OptionKey.flag("normalize", abstract: "Divide each ticker's prices by its first one, so all start at 1.0.")
        static let raw = OptionKey.flag(
            "raw",
            abstract: "Draw the raw prices, and read --where, --overlay and --price with the raw columns (by default, "
                + "when the table has adjusted columns, everything is adjusted for splits and dividends).")
        static let log = OptionKey.flag("log", abstract: "Draw prices on a logarithmic scale (values at or below 0 leave gaps).")
        static let on = OptionKey.string(
            "on", value: "YYYY-MM-DD|latest",
            abstract: "End each ticker's chart at its last row on or before this day ('latest': the newest date in the "
                + "snapshot), as filter --on chooses it; not with --to.")
        static let maxStale = FilterCommand.Options.maxStale
        static let output = OptionKey.string(
            "output", short: "o", value: "FILE.svg", abstract: "Write to FILE.svg instead of standard output ('-' is standard output).")
        static let noVerify = OptionKey.flag("no-verify", abstract: "Skip the checksums of column data when loading.")

        static let all: [OptionSpec] = [
            snapshot.spec, from.spec, to.spec, on.spec, maxStale.spec, `where`.spec, overlay.spec, price.spec, volume.spec, normalize.spec,
            raw.spec, log.spec, output.spec, noVerify.spec, VersionOptions.atVersion.spec, VersionOptions.atTime.spec,
        ]
    }
}

extension ShellCommand {
    /// `shell`'s options.
    enum Options {
        static let snapshot = SharedOptions.readSnapshot("Snapshot file to load.")
        static let noVerify = OptionKey.flag(
            "no-verify", abstract: "Skip the checksums of column data when loading (structure and footer are still checked).")
    }
}
