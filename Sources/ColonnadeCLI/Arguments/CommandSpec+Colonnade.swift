// The declarations of colonnade's commands and their options: the names later tools and scripts
// rely on (docs/ARCHITECTURE.md, "The CLI contract"). Each option is declared once, as an
// `OptionKey` in its command's `Options` (or in `SharedOptions`); the command's `CommandSpec`
// lists the keys' specs and its `run` reads values through the same keys, so help, completions
// and the parser cannot drift from what the code reads. Behaviour lives in each command's `run`.

import Colonnade
import Foundation

extension CommandSpec {
    /// `colonnade filter`: the query command.
    static let filter = CommandSpec(
        name: "filter",
        abstract: "Select the quote rows that match a predicate; print, count or aggregate them.",
        discussion: """
            Rows are narrowed by ticker and date range first (cheap lookups in the sorted \
            table), then by --where. Column names are the source's, lower-cased with runs of \
            other characters turned into '_' (Adj. Close is adj_close); ticker and date always exist.

            With --timing, one JSON object goes to standard error: load_ms, query_ms (the median \
            of --repeat runs of the query alone, after one untimed warm-up run when --repeat is \
            given), repeat, warmup, rows, matched, threads.

            Across tickers: xrank(x), xpct(x), xz(x), xmean(x) and xcount(x) compare a row with \
            the other tickers' rows of the same date. Their universe is every ticker's row on that \
            date in the table, whatever --tickers, --from, --to and the other --where terms then \
            select (as series functions see a ticker's whole history); with --on, each row gets \
            the value of its own date. ref(x, 'SPY') is x on SPY's history that date (null when SPY \
            has no row); mvar, mcov, mcorr and mbeta are moving variance, covariance, correlation \
            and beta over a ticker's last n rows: mbeta(pct_change(close), ref(pct_change(close), 'SPY'), 60).
            """,
        options: FilterCommand.Options.all,
        constraints: [
            .requires(option: FilterCommand.Options.by.name, anyOf: [FilterCommand.Options.count.name, FilterCommand.Options.agg.name]),
            .requires(option: FilterCommand.Options.having.name, anyOf: [FilterCommand.Options.by.name]),
            .mutuallyExclusive([FilterCommand.Options.count.name, FilterCommand.Options.agg.name]),
            .requires(option: FilterCommand.Options.repeat.name, anyOf: [FilterCommand.Options.timing.name]),
            .requires(option: FilterCommand.Options.maxStale.name, anyOf: [FilterCommand.Options.on.name]),
            .notAfter(FilterCommand.Options.from.name, FilterCommand.Options.to.name),
        ],
        examples: [
            "filter --where '80 < high < 83 and 78 < low < 82' --tickers JNJ,CVX --from 2005-01-01 --to 2009-12-31",
            "filter --tickers FDX --columns date,close --sort -date --limit 10",
            "filter --where 'volume > 1e7' --agg 'count(*),avg(close)' --by ticker --format csv",
            "filter --where 'close > 100' --count --timing --repeat 5",
            "filter --where 'close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)' --on latest",
            "filter --on latest --sort '-pct_change(close, 5)' --limit 10 --columns ticker,close",
            "filter --on latest --where 'xpct(pct_change(close, 250)) > 0.9' --columns ticker,close,xrank(close)",
            "filter --agg 'avg(volume) as v' --by ticker --sort -v --limit 10",
            "filter --agg 'first(open),max(high),min(low),last(close),sum(volume)' --by ticker,week --tickers AAPL",
        ]
    )

    /// `colonnade info`: what a snapshot holds.
    static let info = CommandSpec(
        name: "info",
        abstract: "Describe a snapshot: columns, tickers, date range, row count and size.",
        options: [
            InfoCommand.Options.snapshot.spec, InfoCommand.Options.format.spec, InfoCommand.Options.ticker.spec,
            VersionOptions.atVersion.spec, VersionOptions.atTime.spec,
        ],
        examples: ["info", "info --snapshot snapshots/quotes.snapshot --format json", "info --ticker AAPL"]
    )

    /// `colonnade verify`: check a snapshot's integrity.
    static let verify = CommandSpec(
        name: "verify",
        abstract: "Check a snapshot's structure and checksums; exit status 1 if it is damaged.",
        discussion: "With --adjustments, also check every ticker's adjusted columns against WIKI's rule "
            + "(docs/ADJUSTMENTS.md): each failing ticker's first stale day is reported, and the exit status is 3 "
            + "(a damaged file is still 1).",
        options: [VerifyCommand.Options.snapshot.spec, VerifyCommand.Options.adjustments.spec],
        examples: ["verify --snapshot snapshots/quotes.snapshot", "verify --adjustments"]
    )

    /// `colonnade generate`: seeded synthetic quotes.
    static let generate = CommandSpec(
        name: "generate",
        abstract: "Generate synthetic daily quotes, reproducibly from a seed.",
        discussion: "Write them to exactly one destination: a snapshot, a directory of JSON "
            + "responses shaped like Nasdaq Data Link's, or one CSV file.",
        options: GenerateCommand.Options.all,
        constraints: [
            .exactlyOne([
                GenerateCommand.Options.snapshot.name, GenerateCommand.Options.jsonDirectory.name,
                GenerateCommand.Options.csv.name,
            ]),
            .requires(option: GenerateCommand.Options.force.name, anyOf: [GenerateCommand.Options.snapshot.name]),
        ],
        examples: [
            "generate --tickers 500 --days 5000 --seed 7 --snapshot snapshots/synthetic.snapshot",
            "generate --tickers 3 --days 20 --csv quotes.csv",
        ]
    )

    /// `colonnade export`: stream rows out of a snapshot.
    static let export = CommandSpec(
        name: "export",
        abstract:
            "Write a snapshot's rows (or those selected as filter selects them) as CSV, NDJSON, Arrow IPC, Parquet or a Delta Lake table.",
        discussion: "arrow is the Arrow IPC file format, arrows the Arrow IPC stream format (for pipes). "
            + "parquet writes one file, or with --partition-by year|month a directory PATH/year=YYYY[/month=MM]/part-00000.parquet; "
            + "its rows are sorted by ticker, then date. Files are written to a temporary and renamed. "
            + "delta writes (or commits a new version to) a Delta Lake table in the directory --output: zstd Parquet data files "
            + "and a _delta_log/ commit; into an existing table, --mode append adds the rows and --mode overwrite replaces "
            + "the partitions they fall in (the whole table when it has no partitions), atomically. "
            + "--compression: none, snappy, zstd (level 1) or zstd:LEVEL (1-19), lz4 (parquet LZ4_RAW, arrow LZ4_FRAME).",
        options: ExportCommand.Options.all,
        constraints: [.notAfter(ExportCommand.Options.from.name, ExportCommand.Options.to.name)],
        examples: [
            "export --format csv -o quotes.csv",
            "export --tickers AAPL,KO --from 2005-01-01 --columns date,close --format parquet -o aapl-ko.parquet",
            "export --where 'ticker = \"AAPL\"' --format ndjson | head",
            "export --format arrow -o quotes.arrow",
            "export --format arrows | python3 -c 'import pyarrow as pa, sys; print(pa.ipc.open_stream(sys.stdin.buffer).read_all())'",
            "export --format parquet --partition-by year -o quotes.parquet",
            "export --format parquet --compression zstd:6 -o quotes.parquet",
            "export --format delta --partition-by year -o quotes_delta",
            "export --format delta --mode overwrite --from 2014-01-01 --to 2014-12-31 --partition-by year -o quotes_delta",
        ]
    )

    /// `colonnade import`: load quote files into a snapshot.
    static let importFiles = CommandSpec(
        name: "import",
        abstract:
            "Import Nasdaq Data Link JSON or CSV files, Arrow IPC or Parquet files into a snapshot, replacing rows with the same ticker and date.",
        discussion: "Arrow (.arrow, .arrows, .feather) and Parquet (.parquet) files from pyarrow, Polars, DuckDB or "
            + "'colonnade export' are read when uncompressed or Snappy-compressed; a directory is read as a "
            + "dataset (every .parquet/.arrow file under it, as 'export --partition-by year' writes). Columns map by "
            + "name: ticker or symbol, date (a timestamp becomes its day), and numeric value columns.",
        positionals: [
            PositionalSpec(
                "FILE", isRepeating: true,
                abstract: "Files to import (.json, .csv, .zip of those, .arrow, .arrows, .parquet, or a directory); - reads standard input."
            )
        ],
        options: ImportCommand.Options.all,
        examples: [
            "import WIKI-AAPL.csv --ticker AAPL", "import responses/*.json --snapshot snapshots/quotes.snapshot",
            "import WIKI_PRICES.zip", "unzip -p WIKI_PRICES.zip | colonnade import -",
            "import quotes.parquet", "import dataset/ --snapshot snapshots/quotes.snapshot",
        ]
    )

    /// `colonnade fetch`: download quotes from Nasdaq Data Link.
    static let fetch = CommandSpec(
        name: "fetch",
        abstract: "Download daily quotes from Nasdaq Data Link into a snapshot.",
        discussion: "The API key is read from --api-key-file, else from the environment "
            + "(NASDAQ_DATA_LINK_API_KEY); it is never printed. Either a time-series database "
            + "(--database, one request per ticker) or a table (--table, e.g. WIKI/PRICES) is queried. "
            + "WIKI stopped updating in March 2018: for later prices use --table with a table your subscription covers. "
            + "Each request runs in a child process of colonnade, so a hostile response cannot crash or flood fetch: "
            + "an unparsable, overflowing or contradictory Content-Length is a malformed response, and a body past "
            + "512 MiB (counted as it arrives, decoded) is refused. A paged table stops at a page with no rows but "
            + "a next cursor, and after ceil(tickers x weekdays / 10000) + 2 pages (10,000 pages without --from, "
            + "--to and tickers); the whole fetch stops at --deadline.",
        positionals: [
            PositionalSpec(
                "TICKER", isRepeating: true, isRequired: false,
                abstract: "Tickers to fetch (AAPL, BRK_A); with --bulk, none means the whole table.")
        ],
        options: FetchCommand.Options.all,
        constraints: [
            .mutuallyExclusive([FetchCommand.Options.database.name, FetchCommand.Options.table.name]),
            .mutuallyExclusive([FetchCommand.Options.debug.name, FetchCommand.Options.quiet.name]),
            .notAfter(FetchCommand.Options.from.name, FetchCommand.Options.to.name),
            .requires(option: FetchCommand.Options.bulk.name, anyOf: [FetchCommand.Options.table.name]),
            .requires(option: FetchCommand.Options.columns.name, anyOf: [FetchCommand.Options.table.name]),
            .requires(option: FetchCommand.Options.keepZip.name, anyOf: [FetchCommand.Options.bulk.name]),
            .requires(option: FetchCommand.Options.bulkTimeout.name, anyOf: [FetchCommand.Options.bulk.name]),
        ],
        examples: [
            "fetch AAPL MSFT FDX --from 2005-01-01 --to 2014-12-31",
            "fetch --table WIKI/PRICES AAPL --update --api-key-file ~/.nasdaq-key",
            "fetch --table WIKI/PRICES --bulk --keep-zip WIKI_PRICES.zip",
        ]
    )

    /// `colonnade help`: the summary, or a command's help.
    static let help = CommandSpec(
        name: "help",
        abstract: "Show the commands, or one command's options and examples.",
        discussion: "'colonnade help COMMAND', 'colonnade COMMAND --help' and 'colonnade --help COMMAND' show the same text; "
            + "so does 'colonnade COMMAND help' when help is the only argument.",
        positionals: [PositionalSpec("COMMAND", isRequired: false, abstract: "The command to describe.")],
        examples: ["help", "help filter"]
    )

    /// `colonnade version`.
    static let version = CommandSpec(
        name: "version",
        abstract: "Print the version (as --version).",
        examples: ["version"]
    )

    /// Every command colonnade declares, in `colonnade help` order.
    static var colonnadeCommands: [CommandSpec] {
        CommandLineTool.colonnade.commands.map(\.spec).filter { $0.listing != .hidden }
    }
}

/// Options several commands declare alike; each command lists the ones it takes.
enum SharedOptions {
    /// `--snapshot` of a command that reads. Without it: `SnapshotLocation.readOrder`.
    static func readSnapshot(_ abstract: String) -> OptionKey<String?> {
        .string(
            "snapshot", value: "PATH",
            abstract: abstract
                + " Default: $COLONNADE_SNAPSHOT, else ./snapshots/quotes.snapshot if it exists, else "
                + "${XDG_DATA_HOME:-~/.local/share}/colonnade/quotes.snapshot if it exists, else the built-in sample.")
    }

    /// `--snapshot` of a command that writes. Without it: `SnapshotLocation.writeOrder`.
    static func writeSnapshot(_ abstract: String) -> OptionKey<String?> {
        .string(
            "snapshot", value: "PATH",
            abstract: abstract
                + " Default: $COLONNADE_SNAPSHOT, else ./snapshots/quotes.snapshot if it exists, else "
                + "${XDG_DATA_HOME:-~/.local/share}/colonnade/quotes.snapshot. Its directory must exist.")
    }

    /// `--no-wait`, for commands that write a snapshot.
    static let noWait = OptionKey.flag(
        "no-wait",
        abstract:
            "If another colonnade process is writing the snapshot, fail at once (exit status 1, naming its PID) instead of waiting for it."
    )

    /// `--where`, for commands that select rows.
    static let `where` = OptionKey.string(
        "where", value: "EXPR",
        abstract: "Keep rows matching a predicate over columns, e.g. '80 < high < 83 and low > 78'. "
            + "Bounds written a < x < b are exclusive; 'between a and b' and a <= x <= b are inclusive; "
            + "a comparison with null never matches."
    )

    /// The zip-bomb guard's ratio (`ZipLimits.maximumRatio`), for commands that read zips.
    static let maxInflateRatio = OptionKey.integer(
        "max-inflate-ratio", value: "N", minimum: 1, default: 200,
        abstract: "Refuse a zip member that inflates to more than N times its compressed size (past the first 64 MiB).")

    /// The zip-bomb guard's absolute cap (`ZipLimits.maximumSize`), in MiB.
    static let maxInflateSize = OptionKey.integer(
        "max-inflate-size", value: "MiB", minimum: 1, default: 16384,
        abstract: "Refuse a zip member that inflates to more than this many MiB.")
}

extension FilterCommand {
    /// `filter`'s options, in help order.
    enum Options {
        static let snapshot = SharedOptions.readSnapshot("Snapshot file to query.")
        static let `where` = SharedOptions.where
        static let tickers = OptionKey.list("tickers", value: "A,B", abstract: "Only these tickers (comma-separated; may be repeated).")
        static let from = OptionKey.date("from", abstract: "Only rows on or after this date.")
        static let to = OptionKey.date("to", abstract: "Only rows on or before this date.")
        static let on = OptionKey.string(
            "on", value: "YYYY-MM-DD|latest",
            abstract: "Screen as of a day: each ticker's last row on or before that day, at most --max-stale days older "
                + "('latest': the newest date in the snapshot). A weekend or holiday answers with the previous session. "
                + "Series functions still see each ticker's whole history up to that row; --from/--to and date terms "
                + "apply to the chosen row's own date.")
        static let maxStale = OptionKey.string(
            "max-stale", value: "DAYS|none",
            abstract: "With --on: leave out a ticker whose last row is more than DAYS calendar days before the day "
                + "(default 7; 0: the day itself only; none: keep every ticker).")
        static let adjusted = OptionKey.flag(
            "adjusted",
            abstract: "Read open, high, low, close and volume as their adjusted columns (adj_open … adj_volume: adjusted for "
                + "splits and dividends) in every expression, so one screen runs on either; the output keeps the names "
                + "(a table marks them '(adjusted)'). An error if the table has no adjusted columns.")
        static let columns = OptionKey.list(
            "columns", value: "a,b|all",
            abstract: "Columns to print, in order; 'all' for every column; also computed columns, each an expression with an "
                + "optional name: 'date,close,pct_change(close) as ret,mavg(close,50)'. "
                + "Output names are unique and only the ticker and date columns are named ticker and date "
                + "(close,close or 'open as date' is refused; 'close as close2' repeats a column). "
                + "By default ticker, date and the columns --where mentions.")
        static let format = OptionKey<Format?>.choice(
            "format",
            abstract: "Output format (default: table, or what -o FILE's extension says). arrow, arrows and parquet write "
                + "the matching rows with every column, as export does; binary formats never go to a terminal.")
        static let output = OptionKey.string(
            "output", short: "o", value: "FILE",
            abstract: "Write to FILE (replaced whole at the end) instead of standard output; the format is --format or "
                + "the extension's: .csv, .json, .ndjson/.jsonl, .arrow/.feather, .arrows, .parquet.")
        static let count = OptionKey.flag("count", abstract: "Print only the number of matching rows.")
        static let agg = OptionKey.list(
            "agg", value: "LIST",
            abstract: "Aggregates to compute over the matches instead of printing rows: count, sum, min, max, avg, first, last "
                + "(by date), stddev, median, quantile(x, q) (linear interpolation, DuckDB's quantile_cont) of a column or an "
                + "expression, or corr(x, y) (Pearson), each optionally named with 'as', e.g. "
                + "'count(*) as n,avg(high - low),max(pct_change(close)),last(close)'. Nulls are skipped (and NaN of a bare column "
                + "by min, max, median and quantile); count(*) counts rows.")
        static let by = OptionKey<Grouping?>.choice(
            "by", value: "KEYS",
            abstract: "Compute --count or --agg per ticker, per date (one group a day, across tickers), week (Monday to Sunday, "
                + "labelled by its Monday), month, quarter (2014-Q2) or year, or per ticker and one of those in either order "
                + "(ticker,week: weekly bars). --sort, --limit and --having then apply to the groups.")
        static let having = OptionKey.string(
            "having", value: "EXPR",
            abstract: "With --agg or --count and --by, keep the groups for which EXPR holds; it reads the aggregates by name "
                + "('count(*) as n' → n, or \"avg(volume)\" in double quotes), count with --count, and the keys ticker and date "
                + "(date and week groups).")
        static let sort = OptionKey.list(
            "sort", value: "KEYS",
            abstract: "Order rows by these keys (comma-separated): date, ticker or an expression such as pct_change(close); "
                + "a leading '-' sorts descending; nulls last. By default by ticker, then date. With --limit, a top-k. "
                + "With --by, sorts the groups by an aggregate (its name or text), count, or a key; ties by the keys.")
        static let limit = OptionKey.integer("limit", value: "N", minimum: 1, abstract: "Print at most N rows (with --by, N groups).")
        static let showAll = OptionKey.flag(
            "all",
            abstract: "On a terminal, print every row of a table (by default at most a screenful: the first and last rows, "
                + "with a line saying how many are left out). Pipes and files always get every row.")
        static let precision = OptionKey.integer(
            "precision", value: "N", minimum: 0,
            abstract: "In a table, print numbers with at most N decimals (by default computed values and aggregates "
                + "have at most 6, columns their own). CSV and JSON keep every digit.")
        static let timing = OptionKey.flag("timing", abstract: "Write load and query times as one JSON line to standard error.")
        static let `repeat` = OptionKey.integer(
            "repeat", value: "N", minimum: 1, default: 1,
            abstract: "Run the query N times after one untimed warm-up run (for --timing).")
        static let threads = OptionKey.integer(
            "threads", value: "N", minimum: 1, abstract: "Use at most N threads (default: one per core).")
        static let noVerify = OptionKey.flag(
            "no-verify",
            abstract:
                "Skip the checksums of column data when loading (structure and footer are still checked); for large trusted snapshots.")
        static let noZonemaps = OptionKey.flag(
            "no-zonemaps", abstract: "Do not use block summaries to skip or fill blocks (for measurement).")

        static let all: [OptionSpec] = [
            snapshot.spec, `where`.spec, tickers.spec, from.spec, to.spec, on.spec, maxStale.spec, adjusted.spec, columns.spec, format.spec,
            output.spec, count.spec,
            agg.spec, by.spec, having.spec, sort.spec, limit.spec, showAll.spec, precision.spec, timing.spec, `repeat`.spec, threads.spec,
            noVerify.spec, noZonemaps.spec, VersionOptions.atVersion.spec, VersionOptions.atTime.spec,
        ]

        /// `--format`: a text format written row by row, or a columnar one written as `export` does.
        enum Format: String, CaseIterable, Sendable {
            case table, csv, json, ndjson, arrow, arrows, parquet

            /// The row-by-row format, `nil` for the columnar ones.
            var textFormat: OutputFormat? { OutputFormat(rawValue: rawValue) }

            /// The columnar format, `nil` for the text ones.
            var columnarFormat: ExportCommand.Options.Format? {
                textFormat == nil ? ExportCommand.Options.Format(rawValue: rawValue) : nil
            }

            /// The format a file name's extension names, compared without case (`.CSV`), if any.
            static func inferred(fromExtensionOf path: String) -> Format? {
                switch (path as NSString).pathExtension.lowercased() {
                case "csv": .csv
                case "json": .json
                case "ndjson", "jsonl": .ndjson
                case "arrow", "feather": .arrow
                case "arrows": .arrows
                case "parquet": .parquet
                default: nil
                }
            }
        }

        /// `--by`: what `--count` and `--agg` are computed per: a ticker, a calendar bucket of the
        /// date, or both in either order (the first key orders the groups).
        enum Grouping: String, CaseIterable, Sendable {
            case ticker, date, week, month, quarter, year
            case tickerDate = "ticker,date", tickerWeek = "ticker,week", tickerMonth = "ticker,month"
            case tickerQuarter = "ticker,quarter", tickerYear = "ticker,year"
            case dateTicker = "date,ticker", weekTicker = "week,ticker", monthTicker = "month,ticker"
            case quarterTicker = "quarter,ticker", yearTicker = "year,ticker"

            /// The engine's grouping.
            var aggregateGrouping: AggregateGrouping {
                // The raw values are the engine's own key lists.
                (try? AggregateGrouping(parsing: rawValue)) ?? .none
            }
        }
    }
}

extension InfoCommand {
    /// `info`'s options.
    enum Options {
        static let snapshot = SharedOptions.readSnapshot("Snapshot file to describe.")
        static let format = OptionKey.choice("format", default: Format.table, abstract: "Output format.")

        /// `--format`.
        enum Format: String, CaseIterable, Sendable {
            case table, json
        }
    }
}

extension VerifyCommand {
    /// `verify`'s options.
    enum Options {
        static let snapshot = SharedOptions.readSnapshot("Snapshot file to check.")
    }
}

extension GenerateCommand {
    /// `generate`'s options, in help order.
    enum Options {
        static let tickers = OptionKey.requiredInteger("tickers", value: "N", minimum: 1, abstract: "Number of tickers.")
        static let days = OptionKey.requiredInteger("days", value: "D", minimum: 1, abstract: "Trading days per ticker.")
        static let seed = OptionKey.integer(
            "seed", value: "S", minimum: 0, default: 1,
            abstract: "Random seed; the same seed gives the same quotes.")
        static let start = OptionKey.date("start", default: Day(2000, 1, 3), abstract: "First trading day.")
        static let snapshot = OptionKey.string("snapshot", value: "PATH", abstract: "Write a snapshot file (its directory must exist).")
        static let force = OptionKey.flag("force", abstract: "With --snapshot: replace a snapshot that exists (else refused).")
        static let jsonDirectory = OptionKey.string("json-dir", value: "DIR", abstract: "Write one JSON file per ticker into DIR.")
        static let csv = OptionKey.string("csv", value: "FILE", abstract: "Write one CSV file with a ticker column.")
        static let noWait = SharedOptions.noWait

        static let all: [OptionSpec] = [
            tickers.spec, days.spec, seed.spec, start.spec, snapshot.spec, force.spec, jsonDirectory.spec, csv.spec, noWait.spec,
        ]
    }
}

extension ExportCommand {
    /// `export`'s options, in help order.
    enum Options {
        static let snapshot = SharedOptions.readSnapshot("Snapshot file to read.")
        static let `where` = SharedOptions.where
        static let tickers = FilterCommand.Options.tickers
        static let from = FilterCommand.Options.from
        static let to = FilterCommand.Options.to
        static let on = FilterCommand.Options.on
        static let maxStale = FilterCommand.Options.maxStale
        static let adjusted = FilterCommand.Options.adjusted
        static let columns = OptionKey.list(
            "columns", value: "a,b|all",
            abstract: "Columns to write, in order (default: all). csv and ndjson also take computed columns, as filter does; "
                + "arrow, arrows and parquet take value columns and always write ticker and date.")
        static let format = OptionKey<Format>.requiredChoice("format", abstract: "Output format.")
        static let output = OptionKey.string(
            "output", short: "o", value: "FILE",
            abstract: "Write to FILE instead of standard output ('-' is standard output; not for arrow or parquet).")
        static let partitionBy = OptionKey<Partitioning?>.choice(
            "partition-by", abstract: "parquet, delta: one partition per year or month (Hive layout year=YYYY/month=MM).")
        static let rowGroupRows = OptionKey.integer(
            "row-group-rows", value: "N", minimum: 1, default: 1_048_576,
            abstract: "parquet, delta: rows per row group.")
        static let compression = OptionKey.string(
            "compression", value: "none|snappy|zstd[:LEVEL]|lz4",
            abstract:
                "parquet: page compression (default none); arrow: body compression (zstd, lz4); delta: default zstd; zstd alone is level 1."
        )
        static let mode = OptionKey<Mode?>.choice(
            "mode", abstract: "delta: into an existing table, append the rows or overwrite the partitions they fall in.")

        static let all: [OptionSpec] = [
            snapshot.spec, `where`.spec, tickers.spec, from.spec, to.spec, on.spec, maxStale.spec, adjusted.spec, columns.spec, format.spec,
            output.spec,
            partitionBy.spec, rowGroupRows.spec, compression.spec, mode.spec, VersionOptions.atVersion.spec, VersionOptions.atTime.spec,
        ]

        /// `--format`: a text format written row by row, or a columnar one.
        enum Format: String, CaseIterable, Sendable {
            case csv, ndjson, arrow, arrows, parquet, delta

            /// The row-by-row format, `nil` for the columnar ones.
            var textFormat: OutputFormat? {
                switch self {
                case .csv: .csv
                case .ndjson: .ndjson
                case .arrow, .arrows, .parquet, .delta: nil
                }
            }
        }

        /// `--partition-by`.
        enum Partitioning: String, CaseIterable, Sendable {
            case year, month
        }

        /// `--mode` (delta).
        enum Mode: String, CaseIterable, Sendable {
            case append, overwrite
        }
    }
}

extension ImportCommand {
    /// `import`'s options, in help order.
    enum Options {
        static let ticker = OptionKey.string(
            "ticker", value: "T",
            abstract: "The ticker of the rows, for files that do not name it (a WIKI CSV has no ticker column).")
        static let snapshot = SharedOptions.writeSnapshot("Snapshot file to create or update.")
        static let threads = OptionKey.integer(
            "threads", value: "N", minimum: 1,
            abstract: "Decode on at most N threads (default: one per core); the snapshot is the same for any N.")
        static let maxInflateRatio = SharedOptions.maxInflateRatio
        static let maxInflateSize = SharedOptions.maxInflateSize
        static let noWait = SharedOptions.noWait
        static let strict = OptionKey.flag(
            "strict",
            abstract:
                "Refuse an Arrow or Parquet file with columns that are not quotes (strings, booleans, nested) instead of skipping them with a note."
        )

        static let deltaVersion = OptionKey.integer(
            "delta-version", value: "N", minimum: 0,
            abstract: "A Delta Lake table is read at version N (time travel) instead of its latest.")

        static let all: [OptionSpec] = [
            ticker.spec, snapshot.spec, threads.spec, maxInflateRatio.spec, maxInflateSize.spec, noWait.spec, strict.spec,
            deltaVersion.spec,
        ]
    }
}

extension FetchCommand {
    /// `fetch`'s options, in help order.
    enum Options {
        static let database = OptionKey.string("database", value: "WIKI", default: "WIKI", abstract: "Time-series database code.")
        static let table = OptionKey.string("table", value: "WIKI/PRICES", abstract: "Tables API table, instead of a database.")
        static let from = OptionKey.date("from", abstract: "First date to fetch.")
        static let to = OptionKey.date("to", abstract: "Last date to fetch.")
        static let snapshot = SharedOptions.writeSnapshot("Snapshot file to create or update.")
        static let format = OptionKey.choice("format", default: Format.json, abstract: "Response format to request.")
        static let update = OptionKey.flag("update", abstract: "Fetch only dates after the newest one already in the snapshot.")
        static let keepGoing = OptionKey.flag(
            "keep-going", abstract: "Keep fetching other tickers after one fails; exit status 1 at the end.")
        static let columns = OptionKey.list(
            "columns", value: "C,…",
            abstract: "Table columns to ask for (qopts.columns), e.g. ticker,date,close; --table only.")
        static let bulk = OptionKey.flag(
            "bulk",
            abstract: "Download the whole table (or the filtered rows) as one export zip instead of paging: "
                + "ask for an export, wait until it is ready, download, inflate and import. --table only.")
        static let bulkTimeout = OptionKey.string(
            "bulk-timeout", value: "DURATION", default: "30m",
            abstract: "How long to wait for the export to become ready (e.g. 90s, 10m, 1h).")
        static let keepZip = OptionKey.string("keep-zip", value: "PATH", abstract: "Keep the downloaded export zip at PATH.")
        static let maxInflateRatio = SharedOptions.maxInflateRatio
        static let maxInflateSize = SharedOptions.maxInflateSize
        static let concurrency = OptionKey.integer(
            "concurrency", value: "N", minimum: 1, default: 1,
            abstract: "Requests in flight at once (default 1: the documented per-key limit is one in flight).")
        static let baseURL = OptionKey.string(
            "base-url", value: "URL",
            abstract: "API base URL, for a mirror or a test server (default $COLONNADE_BASE_URL, else https://data.nasdaq.com).")
        static let apiKeyFile = OptionKey.string("api-key-file", value: "PATH", abstract: "File holding the API key.")
        static let timeout = OptionKey.integer(
            "timeout", value: "SECONDS", minimum: 1, default: 300,
            abstract: "Give up on a request (all its retries included) not complete after this long; a stalled "
                + "connection fails after 60 s without data.")
        static let deadline = OptionKey.string(
            "deadline", value: "DURATION", default: "6h",
            abstract: "Give up on the whole fetch (every request, page and wait) not done after this long, e.g. 90s, 30m, 6h; "
                + "nothing is saved then.")
        static let debug = OptionKey.flag("debug", abstract: "Log each request (key redacted) and response status to standard error.")
        static let quiet = OptionKey.flag("quiet", abstract: "Print nothing but errors.")
        static let noWait = SharedOptions.noWait

        static let all: [OptionSpec] = [
            database.spec, table.spec, from.spec, to.spec, snapshot.spec, format.spec, update.spec, keepGoing.spec,
            columns.spec, bulk.spec, bulkTimeout.spec, keepZip.spec, maxInflateRatio.spec, maxInflateSize.spec,
            concurrency.spec, baseURL.spec, apiKeyFile.spec, timeout.spec, deadline.spec, debug.spec, quiet.spec, noWait.spec,
        ]

        /// `--format`: the response format to request.
        enum Format: String, CaseIterable, Sendable {
            case json, csv
        }
    }
}
