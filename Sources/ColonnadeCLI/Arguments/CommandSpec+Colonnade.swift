// The declarations of colonnade's commands: the names later tools and scripts rely on
// (docs/ARCHITECTURE.md, "The CLI contract"). Behaviour lives in each command's `run`.

extension CommandSpec {
    /// The snapshot read when `--snapshot` is not given: the bundled sample.
    static let sampleSnapshot = "snapshots/sample.snapshot"
    /// The snapshot `import` and `fetch` write when `--snapshot` is not given.
    static let defaultWritableSnapshot = "snapshots/quotes.snapshot"

    /// `--snapshot`. Without it, commands that read use $COLONNADE_SNAPSHOT, else
    /// snapshots/quotes.snapshot when it exists, else the bundled sample; commands that write use
    /// $COLONNADE_SNAPSHOT, else snapshots/quotes.snapshot (see `SnapshotLocation`).
    private static func snapshot(_ abstract: String, writes: Bool = false) -> OptionSpec {
        OptionSpec("snapshot", value: "PATH", abstract: abstract + (writes
            ? " Default: $COLONNADE_SNAPSHOT, else snapshots/quotes.snapshot."
            : " Default: $COLONNADE_SNAPSHOT, else snapshots/quotes.snapshot if it exists, else the bundled sample."))
    }

    /// `--no-wait`, for commands that write a snapshot.
    private static let noWaitOption = OptionSpec(
        flag: "no-wait",
        abstract: "If another colonnade process is writing the snapshot, fail at once (exit status 1, naming its PID) instead of waiting for it."
    )

    private static let whereOption = OptionSpec(
        "where", value: "EXPR",
        abstract: "Keep rows matching a predicate over columns, e.g. '80 < high < 83 and low > 78'. "
            + "Bounds written a < x < b are exclusive; 'between a and b' and a <= x <= b are inclusive; "
            + "a comparison with null never matches."
    )

    private static func dateOption(_ name: String, _ abstract: String) -> OptionSpec {
        OptionSpec(name, value: "YYYY-MM-DD", kind: .date, abstract: abstract)
    }

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
            """,
        options: [
            snapshot("Snapshot file to query."),
            whereOption,
            OptionSpec("tickers", value: "A,B", isList: true,
                       abstract: "Only these tickers (comma-separated; may be repeated)."),
            dateOption("from", "Only rows on or after this date."),
            dateOption("to", "Only rows on or before this date."),
            OptionSpec("on", value: "YYYY-MM-DD|latest",
                       abstract: "Screen as of a day: keep each ticker's row of that day ('latest': its last row). "
                           + "Series functions still see each ticker's whole history; --from/--to narrow the output only."),
            OptionSpec("columns", value: "a,b|all", isList: true,
                       abstract: "Columns to print, in order; 'all' for every column. By default ticker, date and the columns --where mentions."),
            OptionSpec("format", value: "table|csv|json|ndjson", kind: .choice(OutputFormat.allCases.map(\.rawValue)),
                       defaultValue: OutputFormat.table.rawValue, abstract: "Output format."),
            OptionSpec(flag: "count", abstract: "Print only the number of matching rows."),
            OptionSpec("agg", value: "LIST", isList: true,
                       abstract: "Aggregates to compute over the matches instead of printing rows, "
                           + "e.g. 'count(*),avg(close),max(high)'. Nulls are skipped; count(*) counts rows."),
            OptionSpec("by", value: "ticker", kind: .choice(["ticker"]),
                       abstract: "Compute --count or --agg per ticker."),
            OptionSpec("sort", value: "KEYS", isList: true,
                       abstract: "Order rows by these keys (comma-separated): date, ticker or an expression such as pct_change(close); "
                           + "a leading '-' sorts descending; nulls last. By default by ticker, then date. With --limit, a top-k."),
            OptionSpec("limit", value: "N", kind: .integer(minimum: 1), abstract: "Print at most N rows."),
            OptionSpec(flag: "timing", abstract: "Write load and query times as one JSON line to standard error."),
            OptionSpec("repeat", value: "N", kind: .integer(minimum: 1), defaultValue: "1",
                       abstract: "Run the query N times after one untimed warm-up run (for --timing)."),
            OptionSpec("threads", value: "N", kind: .integer(minimum: 1),
                       abstract: "Use at most N threads (default: one per core)."),
            OptionSpec(flag: "no-verify", abstract: "Skip the checksums of column data when loading (structure and footer are still checked); for large trusted snapshots."),
            OptionSpec(flag: "no-zonemaps", abstract: "Do not use block summaries to skip or fill blocks (for measurement)."),
        ],
        constraints: [
            .requires(option: "by", anyOf: ["count", "agg"]),
            .mutuallyExclusive(["count", "agg"]),
            .notAfter("from", "to"),
        ],
        examples: [
            "filter --where '80 < high < 83 and 78 < low < 82' --tickers AAPL,MSFT --from 2005-01-01 --to 2014-12-31",
            "filter --tickers FDX --columns date,close --sort -date --limit 10",
            "filter --where 'volume > 1e7' --agg 'count(*),avg(close)' --by ticker --format csv",
            "filter --where 'close > 100' --count --timing --repeat 5",
            "filter --where 'close > mavg(close, 200) and volume > 2 * mavg(volume, 20)' --on latest",
            "filter --on latest --sort '-pct_change(close, 5)' --limit 10 --columns ticker,close",
        ]
    )

    /// `colonnade info`: what a snapshot holds.
    static let info = CommandSpec(
        name: "info",
        abstract: "Describe a snapshot: columns, tickers, date range, row count and size.",
        options: [
            snapshot("Snapshot file to describe."),
            OptionSpec("format", value: "table|json", kind: .choice(["table", "json"]),
                       defaultValue: "table", abstract: "Output format."),
        ],
        examples: ["info", "info --snapshot snapshots/quotes.snapshot --format json"]
    )

    /// `colonnade verify`: check a snapshot's integrity.
    static let verify = CommandSpec(
        name: "verify",
        abstract: "Check a snapshot's structure and checksums; exit status 1 if it is damaged.",
        options: [snapshot("Snapshot file to check.")],
        examples: ["verify --snapshot snapshots/quotes.snapshot"]
    )

    /// `colonnade generate`: seeded synthetic quotes.
    static let generate = CommandSpec(
        name: "generate",
        abstract: "Generate synthetic daily quotes, reproducibly from a seed.",
        discussion: "Write them to exactly one destination: a snapshot, a directory of JSON "
            + "responses shaped like Nasdaq Data Link's, or one CSV file.",
        options: [
            OptionSpec("tickers", value: "N", kind: .integer(minimum: 1), isRequired: true,
                       abstract: "Number of tickers."),
            OptionSpec("days", value: "D", kind: .integer(minimum: 1), isRequired: true,
                       abstract: "Trading days per ticker."),
            OptionSpec("seed", value: "S", kind: .integer(minimum: 0), defaultValue: "1",
                       abstract: "Random seed; the same seed gives the same quotes."),
            OptionSpec("start", value: "YYYY-MM-DD", kind: .date, defaultValue: "2000-01-03",
                       abstract: "First trading day."),
            OptionSpec("snapshot", value: "PATH", abstract: "Write a snapshot file."),
            OptionSpec("json-dir", value: "DIR", abstract: "Write one JSON file per ticker into DIR."),
            OptionSpec("csv", value: "FILE", abstract: "Write one CSV file with a ticker column."),
            noWaitOption,
        ],
        constraints: [.exactlyOne(["snapshot", "json-dir", "csv"])],
        examples: [
            "generate --tickers 500 --days 5000 --seed 7 --snapshot snapshots/synthetic.snapshot",
            "generate --tickers 3 --days 20 --csv quotes.csv",
        ]
    )

    /// `colonnade export`: stream rows out of a snapshot.
    static let export = CommandSpec(
        name: "export",
        abstract: "Write a snapshot's rows (or those matching --where) as CSV, NDJSON, Arrow IPC or Parquet.",
        discussion: "arrow is the Arrow IPC file format, arrows the Arrow IPC stream format (for pipes). "
            + "parquet writes one file, or with --partition-by year a directory PATH/year=YYYY/part-00000.parquet; "
            + "its rows are sorted by ticker, then date. Files are written to a temporary and renamed.",
        options: [
            snapshot("Snapshot file to read."),
            whereOption,
            OptionSpec("format", value: "csv|ndjson|arrow|arrows|parquet",
                       kind: .choice([OutputFormat.csv.rawValue, OutputFormat.ndjson.rawValue, "arrow", "arrows", "parquet"]),
                       isRequired: true, abstract: "Output format."),
            OptionSpec("output", short: "o", value: "FILE",
                       abstract: "Write to FILE instead of standard output ('-' is standard output; not for arrow or parquet)."),
            OptionSpec("partition-by", value: "year", kind: .choice(["year"]),
                       abstract: "parquet: write a directory with one partition per year (Hive layout)."),
            OptionSpec("row-group-rows", value: "N", kind: .integer(minimum: 1), defaultValue: "1048576",
                       abstract: "parquet: rows per row group."),
            OptionSpec("compression", value: "none|snappy", kind: .choice(["none", "snappy"]), defaultValue: "none",
                       abstract: "parquet: page compression."),
        ],
        examples: [
            "export --format csv -o quotes.csv",
            "export --where 'ticker = \"AAPL\"' --format ndjson | head",
            "export --format arrow -o quotes.arrow",
            "export --format arrows | python3 -c 'import pyarrow as pa, sys; print(pa.ipc.open_stream(sys.stdin.buffer).read_all())'",
            "export --format parquet --partition-by year -o quotes.parquet",
        ]
    )

    /// `colonnade import`: load quote files into a snapshot.
    static let importFiles = CommandSpec(
        name: "import",
        abstract: "Import Nasdaq Data Link JSON or CSV files, Arrow IPC or Parquet files into a snapshot, replacing rows with the same ticker and date.",
        discussion: "Arrow (.arrow, .arrows, .feather) and Parquet (.parquet) files from pyarrow, Polars, DuckDB or "
            + "'colonnade export' are read when uncompressed or Snappy-compressed; a directory is read as a "
            + "dataset (every .parquet/.arrow file under it, as 'export --partition-by year' writes). Columns map by "
            + "name: ticker or symbol, date (a timestamp becomes its day), and numeric value columns.",
        positionals: [PositionalSpec("FILE", isRepeating: true,
                                     abstract: "Files to import (.json, .csv, .zip of those, .arrow, .arrows, .parquet, or a directory); - reads standard input.")],
        options: [
            OptionSpec("ticker", value: "T",
                       abstract: "The ticker of the rows, for files that do not name it (a WIKI CSV has no ticker column)."),
            snapshot("Snapshot file to create or update.", writes: true),
            OptionSpec("threads", value: "N", kind: .integer(minimum: 1),
                       abstract: "Decode on at most N threads (default: one per core); the snapshot is the same for any N."),
            maxInflateRatioOption,
            maxInflateSizeOption,
            noWaitOption,
        ],
        examples: ["import WIKI-AAPL.csv --ticker AAPL", "import responses/*.json --snapshot snapshots/quotes.snapshot",
                   "import WIKI_PRICES.zip", "unzip -p WIKI_PRICES.zip | colonnade import -",
                   "import quotes.parquet", "import dataset/ --snapshot snapshots/quotes.snapshot"]
    )

    /// The zip-bomb guard's ratio (`ZipLimits.maximumRatio`), for commands that read zips.
    static let maxInflateRatioOption = OptionSpec(
        "max-inflate-ratio", value: "N", kind: .integer(minimum: 1), defaultValue: "200",
        abstract: "Refuse a zip member that inflates to more than N times its compressed size (past the first 64 MiB).")

    /// The zip-bomb guard's absolute cap (`ZipLimits.maximumSize`), in MiB.
    static let maxInflateSizeOption = OptionSpec(
        "max-inflate-size", value: "MiB", kind: .integer(minimum: 1), defaultValue: "16384",
        abstract: "Refuse a zip member that inflates to more than this many MiB.")

    /// `colonnade fetch`: download quotes from Nasdaq Data Link.
    static let fetch = CommandSpec(
        name: "fetch",
        abstract: "Download daily quotes from Nasdaq Data Link into a snapshot.",
        discussion: "The API key is read from --api-key-file, else from the environment "
            + "(NASDAQ_DATA_LINK_API_KEY); it is never printed. Either a time-series database "
            + "(--database, one request per ticker) or a table (--table, e.g. WIKI/PRICES) is queried.",
        positionals: [PositionalSpec("TICKER", isRepeating: true, isRequired: false,
                                     abstract: "Tickers to fetch (AAPL, BRK_A); with --bulk, none means the whole table.")],
        options: [
            OptionSpec("database", value: "WIKI", defaultValue: "WIKI",
                       abstract: "Time-series database code."),
            OptionSpec("table", value: "WIKI/PRICES", abstract: "Tables API table, instead of a database."),
            dateOption("from", "First date to fetch."),
            dateOption("to", "Last date to fetch."),
            snapshot("Snapshot file to create or update.", writes: true),
            OptionSpec("format", value: "json|csv", kind: .choice(["json", "csv"]), defaultValue: "json",
                       abstract: "Response format to request."),
            OptionSpec(flag: "update", abstract: "Fetch only dates after the newest one already in the snapshot."),
            OptionSpec(flag: "keep-going", abstract: "Keep fetching other tickers after one fails; exit status 1 at the end."),
            OptionSpec("columns", value: "C,…", isList: true,
                       abstract: "Table columns to ask for (qopts.columns), e.g. ticker,date,close; --table only."),
            OptionSpec(flag: "bulk",
                       abstract: "Download the whole table (or the filtered rows) as one export zip instead of paging: "
                           + "ask for an export, wait until it is ready, download, inflate and import. --table only."),
            OptionSpec("bulk-timeout", value: "DURATION", defaultValue: "30m",
                       abstract: "How long to wait for the export to become ready (e.g. 90s, 10m, 1h)."),
            OptionSpec("keep-zip", value: "PATH", abstract: "Keep the downloaded export zip at PATH."),
            maxInflateRatioOption,
            maxInflateSizeOption,
            OptionSpec("concurrency", value: "N", kind: .integer(minimum: 1), defaultValue: "1",
                       abstract: "Requests in flight at once (default 1: the documented per-key limit is one in flight)."),
            OptionSpec("base-url", value: "URL",
                       abstract: "API base URL, for a mirror or a test server (default $COLONNADE_BASE_URL, else https://data.nasdaq.com)."),
            OptionSpec("api-key-file", value: "PATH", abstract: "File holding the API key."),
            OptionSpec("timeout", value: "SECONDS", kind: .integer(minimum: 1), defaultValue: "300",
                       abstract: "Give up on a request (all its retries included) not complete after this long; a stalled "
                           + "connection fails after 60 s without data."),
            OptionSpec(flag: "debug", abstract: "Log each request (key redacted) and response status to standard error."),
            OptionSpec(flag: "quiet", abstract: "Print nothing but errors."),
            noWaitOption,
        ],
        constraints: [
            .mutuallyExclusive(["database", "table"]),
            .mutuallyExclusive(["debug", "quiet"]),
            .notAfter("from", "to"),
            .requires(option: "bulk", anyOf: ["table"]),
            .requires(option: "columns", anyOf: ["table"]),
            .requires(option: "keep-zip", anyOf: ["bulk"]),
            .requires(option: "bulk-timeout", anyOf: ["bulk"]),
        ],
        examples: [
            "fetch AAPL MSFT FDX --from 2005-01-01 --to 2014-12-31",
            "fetch --table WIKI/PRICES AAPL --update --api-key-file ~/.nasdaq-key",
            "fetch --table WIKI/PRICES --bulk --keep-zip WIKI_PRICES.zip",
        ]
    )

    /// Every command colonnade declares, in `colonnade help` order.
    static var colonnadeCommands: [CommandSpec] {
        CommandLineTool.colonnade.commands.map(\.spec).filter { $0.listing != .hidden }
    }
}
