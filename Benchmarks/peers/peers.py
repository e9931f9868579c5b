#!/usr/bin/env python3
"""Put Colonnade's benchmark queries through DuckDB, Polars, NumPy and SQLite on the same data.

Usually started by run.sh (which builds colonnade, generates the data and makes the venv):

    peers.py --csv quotes.csv --snapshot quotes.snapshot --colonnade .build/release/colonnade \
             [--threads N] [--repeat R] [--json FILE] [--engines duckdb,polars,numpy,sqlite]
    peers.py --csv quotes.csv --no-colonnade ...       # the peers alone, on any WIKI-shaped CSV

Each peer runs in its own subprocess (`peers.py --worker ENGINE ...`): it loads the CSV into the
engine's native in-memory form (timed as "load"), then times each query alone: one warm-up run,
then the median of R runs. Polars reads POLARS_MAX_THREADS only at import, so each Polars thread
setting is its own subprocess; DuckDB uses `SET threads`; NumPy and SQLite are single-threaded.
Every engine's count(*) and sum(close) must agree (count exactly, sum within 1e-9 relative);
disagreements are printed as MISMATCH lines and the exit status is 1.
"""
import argparse
import csv
import datetime
import json
import os
import platform
import re
import statistics
import subprocess
import sys
import time

TICKERS = ["AAPL", "MSFT", "AMZN", "GOOG", "FB", "FDX", "KO", "ORCL", "IBM", "INTC"]
DATE_FROM, DATE_TO = "2005-01-01", "2014-05-10"

# Colonnade's expressions, exactly as a user types them (`colonnade filter --where ...`).
QUERIES = {
    "Q1": "80 < high < 83",
    "Q2": "80 < high < 83 and 78 < low < 82 and 75 < adj_high < 85 and 70 < adj_low < 75",
    "Q3": "ticker in (%s) and %s <= date <= %s and volume > 1000000 and 20 < close < 200"
          % (", ".join(TICKERS), DATE_FROM, DATE_TO),
    "Q4": "(close < 20 or close > 500) and not volume < 500000",
    # Screens (issue 12): per-ticker series over each ticker's rows in date order, windows null
    # until full. S1L..S4L are the same screens as of each ticker's latest row (`--on latest`).
    "S1": "open > 1.03 * prev(close)",
    "S2": "(high - low) / close > 0.05 and volume > 2 * mavg(volume, 20)",
    "S3": "close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)",
    "S4": "high >= mmax(high, 252)",
}
SCREENS = ["S1", "S2", "S3", "S4"]
for _s in SCREENS:
    QUERIES[_s + "L"] = QUERIES[_s]
# Answered as of each ticker's last row (Colonnade: `filter --on latest`).
ON_LATEST = {s + "L" for s in SCREENS}
# Engines that run the screens (window functions); NumPy and SQLite are left out of them.
SCREEN_ENGINES = {"colonnade", "duckdb", "polars"}

# The same predicates in SQL (DuckDB and SQLite). `a < x < b` is exclusive on both sides.
_TICKER_LIST = ", ".join("'%s'" % t for t in TICKERS)
SQL_WHERE = {
    "Q1": "high > 80 AND high < 83",
    "Q2": "high > 80 AND high < 83 AND low > 78 AND low < 82 AND adj_high > 75 AND adj_high < 85 "
          "AND adj_low > 70 AND adj_low < 75",
    # {d0}/{d1}: date literals in the engine's own date representation.
    "Q3": "ticker IN (%s) AND date >= {d0} AND date <= {d1} AND volume > 1000000 AND close > 20 AND close < 200"
          % _TICKER_LIST,
    "Q4": "(close < 20 OR close > 500) AND NOT volume < 500000",
}


def _window(agg, column, n):
    """A moving aggregate over the last n rows of the ticker, null until all n are non-null
    (Colonnade's and Polars' min_periods = n)."""
    frame = "OVER (PARTITION BY ticker ORDER BY date ROWS BETWEEN %d PRECEDING AND CURRENT ROW)" % (n - 1)
    return "CASE WHEN count(%s) %s = %d THEN %s(%s) %s END" % (column, frame, n, agg, column, frame)


# The screens in DuckDB SQL: window functions in a subquery, the screen in its WHERE; the
# latest variants keep each ticker's last row (row_number over date descending).
_SCREEN_COLUMNS = {
    "S1": ("lag(close, 1) OVER (PARTITION BY ticker ORDER BY date) AS prev_close", "open > 1.03 * prev_close"),
    "S2": (_window("avg", "volume", 20) + " AS mavg_volume_20",
           "(high - low) / close > 0.05 AND volume > 2 * mavg_volume_20"),
    "S3": (_window("avg", "close", 50) + " AS mavg_close_50, " + _window("avg", "close", 200) + " AS mavg_close_200",
           "close > mavg_close_50 AND mavg_close_50 > mavg_close_200"),
    "S4": (_window("max", "high", 252) + " AS mmax_high_252", "high >= mmax_high_252"),
}
SCREEN_SQL = {}
for _s, (_cols, _where) in _SCREEN_COLUMNS.items():
    _latest = "row_number() OVER (PARTITION BY ticker ORDER BY date DESC) AS rn_latest"
    SCREEN_SQL[_s] = ("SELECT count(*), sum(close) FROM (SELECT ticker, date, open, high, low, close, volume, %s "
                      "FROM {table}) WHERE %s" % (_cols, _where))
    SCREEN_SQL[_s + "L"] = ("SELECT count(*), sum(close) FROM (SELECT ticker, date, open, high, low, close, volume, %s, %s "
                            "FROM {table}) WHERE rn_latest = 1 AND %s" % (_cols, _latest, _where))


# Exact bounds for screens whose comparisons can be exact ties in decimal arithmetic (a close equal
# to its 50-day average in cents): such a tie is decided by rounding, differently in each engine
# (sliding sums, restarts, pairwise or Kahan summation). DuckDB computes, in DECIMAL(38, 8) (the
# CSV's values, exactly), the answer with strict comparisons and with non-strict ones; every
# engine's count and sum(close) must lie between the two. Untimed.
_DEC = "CAST(%s AS DECIMAL(38, 8))"


def _decimal_sum(column, n):
    frame = "OVER (PARTITION BY ticker ORDER BY date ROWS BETWEEN %d PRECEDING AND CURRENT ROW)" % (n - 1)
    return "CASE WHEN count(%s) %s = %d THEN sum(%s) %s END" % (column, frame, n, _DEC % column, frame)


_S3_EXACT = ("SELECT count(*), sum(close) FROM (SELECT ticker, close, %s AS s50, %s AS s200%s FROM quotes) "
             "WHERE %s * 50 {op} s50 AND s50 * 200 {op} s200 * 50{latest}")
EXACT_SQL = {}
for _q, _latest in (("S3", False), ("S3L", True)):
    _text = _S3_EXACT % (_decimal_sum("close", 50), _decimal_sum("close", 200),
                         ", row_number() OVER (PARTITION BY ticker ORDER BY date DESC) AS rn_latest" if _latest else "",
                         _DEC % "close")
    EXACT_SQL[_q] = tuple(_text.format(op=op, latest=" AND rn_latest = 1" if _latest else "") for op in (">", ">="))


def selected(queries):
    """The queries to run: all of QUERIES, or those named (comma-separated)."""
    if not queries:
        return list(QUERIES)
    names = [q.strip() for q in queries.split(",") if q.strip()]
    unknown = [q for q in names if q not in QUERIES]
    if unknown:
        sys.exit("peers: unknown query %s (known: %s)" % (", ".join(unknown), ", ".join(QUERIES)))
    return names

ENGINES = ["duckdb", "polars", "numpy", "sqlite"]
LABELS = {"colonnade": "Colonnade", "duckdb": "DuckDB", "polars": "Polars", "numpy": "NumPy", "sqlite": "SQLite"}
SINGLE_THREADED = {"numpy", "sqlite"}
# Queries that Colonnade answers from its sorted layout (an index) while most peers scan.
INDEX_QUERIES = {"Q3"}
REL_TOL = 1e-9


def identifier(name):
    """A column's identifier as Colonnade defines it (ColumnDescriptor.identifier(for:)): lower case, runs of non-alphanumerics -> '_'."""
    return re.sub(r"[^a-z0-9]+", "_", name.lower()).strip("_")


def read_header(path):
    with open(path, newline="") as f:
        names = next(csv.reader(f))
    ids = [identifier(n) for n in names]
    missing = {"ticker", "date", "high", "low", "close", "volume", "adj_high", "adj_low"} - set(ids)
    if missing:
        sys.exit("peers: %s: header %r lacks the columns %s" % (path, names, ", ".join(sorted(missing))))
    return names, ids


# A query stops repeating once its timed runs have taken this long and at least MIN_RUNS ran: at
# 20 M rows one of DuckDB's window screens takes 10-20 s a run, and ten of each made the peers suite
# 45 minutes long. Every run's time is kept in the JSON ("times"), so the count is visible.
REPEAT_BUDGET_S = 20.0
MIN_RUNS = 3


def timed(fn, repeat):
    """One warm-up run, then `repeat` timed runs (fewer, at least MIN_RUNS, once they have taken
    REPEAT_BUDGET_S seconds); returns (median ms, all ms, result of the last run)."""
    result = fn()
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t0) * 1e3)
        if len(times) >= MIN_RUNS and sum(times) > REPEAT_BUDGET_S * 1e3:
            break
    return statistics.median(times), times, result


def repeat_budget_text(meta):
    """How a slow query's runs were cut short, from the run's meta (empty for runs before the budget)."""
    if "repeat_budget_s" not in meta:
        return ""
    return " (a peer's query stops after %d or more runs once they have taken %.0f s)" % (meta["min_runs"], meta["repeat_budget_s"])


def norm(count, total):
    """count(*) and sum(close) as (int, float); SQL's sum over no rows is NULL, here 0.0."""
    return int(count), float(total) if total is not None else 0.0


# --------------------------------------------------------------------------------------------
# Workers: each loads the CSV into its engine, then runs every query at each thread setting.

def worker_duckdb(path, ids, threads_list, repeat, queries):
    import duckdb
    con = duckdb.connect(":memory:")
    con.execute("SET threads = %d" % max(threads_list))
    types = {i: ("VARCHAR" if i == "ticker" else "DATE" if i == "date" else "DOUBLE") for i in ids}
    spec = "{" + ", ".join("'%s': '%s'" % (i, t) for i, t in types.items()) + "}"
    t0 = time.perf_counter()
    con.execute("CREATE TABLE quotes AS SELECT * FROM read_csv(?, header = false, skip = 1, delim = ',', "
                "columns = %s, dateformat = '%%Y-%%m-%%d')" % spec, [path])
    load_ms = (time.perf_counter() - t0) * 1e3
    rows = con.execute("SELECT count(*) FROM quotes").fetchone()[0]
    # The same schema with no rows: a query on it costs what every run pays regardless of data
    # (the Python call, parsing, binding, optimizing and planning the SQL, starting the pipeline).
    con.execute("CREATE TABLE quotes_empty AS SELECT * FROM quotes LIMIT 0")
    out = []
    for threads in threads_list:
        con.execute("SET threads = %d" % threads)
        for q in queries:
            if q in SCREEN_SQL:
                sql = SCREEN_SQL[q].format(table="quotes")
                empty_sql = SCREEN_SQL[q].format(table="quotes_empty")
            else:
                sql = "SELECT count(*), sum(close) FROM quotes WHERE " + SQL_WHERE[q].format(
                    d0="DATE '%s'" % DATE_FROM, d1="DATE '%s'" % DATE_TO)
                empty_sql = sql.replace("FROM quotes WHERE", "FROM quotes_empty WHERE")
            ms, times, res = timed(lambda: con.execute(sql).fetchone(), repeat)
            empty_ms = timed(lambda: con.execute(empty_sql).fetchone(), repeat)[0]
            out.append(dict(query=q, threads=threads, ms=ms, times=times, result=norm(*res), empty_ms=empty_ms))
            if q in EXACT_SQL and threads == threads_list[0]:
                out[-1]["exact"] = [norm(*con.execute(x).fetchone()) for x in EXACT_SQL[q]]
    return dict(engine="duckdb", version=duckdb.__version__, load_ms=load_ms, rows=rows,
                load_note="read_csv into a DuckDB table (all threads)", runs=out)


def worker_polars(path, ids, threads_list, repeat, queries):
    # POLARS_MAX_THREADS was set by the parent before this process imported polars.
    import polars as pl
    assert len(threads_list) == 1
    threads = threads_list[0]
    if pl.thread_pool_size() != threads:
        sys.exit("peers: polars uses %d threads, expected %d" % (pl.thread_pool_size(), threads))
    names, _ = read_header(path)
    schema = {n: (pl.String if i in ("ticker", "date") else pl.Float64) for n, i in zip(names, ids)}
    t0 = time.perf_counter()
    df = pl.read_csv(path, schema=schema)
    df = df.rename(dict(zip(names, ids))).with_columns(pl.col("date").str.to_date("%Y-%m-%d"))
    df = df.rechunk()
    load_ms = (time.perf_counter() - t0) * 1e3
    c = pl.col
    d0, d1 = datetime.date.fromisoformat(DATE_FROM), datetime.date.fromisoformat(DATE_TO)
    exprs = {
        "Q1": (c("high") > 80) & (c("high") < 83),
        "Q2": (c("high") > 80) & (c("high") < 83) & (c("low") > 78) & (c("low") < 82)
              & (c("adj_high") > 75) & (c("adj_high") < 85) & (c("adj_low") > 70) & (c("adj_low") < 75),
        "Q3": c("ticker").is_in(TICKERS) & (c("date") >= d0) & (c("date") <= d1)
              & (c("volume") > 1000000) & (c("close") > 20) & (c("close") < 200),
        "Q4": ((c("close") < 20) | (c("close") > 500)) & ~(c("volume") < 500000),
        # Rows are sorted by (ticker, date), so a window over("ticker") sees each ticker's rows in
        # date order; rolling_* default to min_samples = window (null until full).
        "S1": c("open") > 1.03 * c("close").shift(1).over("ticker"),
        "S2": ((c("high") - c("low")) / c("close") > 0.05)
              & (c("volume") > 2 * c("volume").rolling_mean(20).over("ticker")),
        "S3": (c("close") > c("close").rolling_mean(50).over("ticker"))
              & (c("close").rolling_mean(50).over("ticker") > c("close").rolling_mean(200).over("ticker")),
        "S4": c("high") >= c("high").rolling_max(252).over("ticker"),
    }
    is_latest = c("date") == c("date").max().over("ticker")
    for s in SCREENS:
        exprs[s + "L"] = exprs[s] & is_latest
    out = []
    empty = df.clear()  # same schema, no rows: the per-query cost of building and optimizing the plan
    for q in queries:
        e = exprs[q]
        def run(e=e, frame=df):
            r = frame.lazy().filter(e).select(pl.len(), c("close").sum()).collect()
            return r.row(0)
        ms, times, res = timed(run, repeat)
        empty_ms = timed(lambda: run(frame=empty), repeat)[0]
        out.append(dict(query=q, threads=threads, ms=ms, times=times, result=norm(*res), empty_ms=empty_ms))
    return dict(engine="polars", version=pl.__version__, load_ms=load_ms, rows=df.height,
                load_note="read_csv into a DataFrame (String ticker, Date date, Float64 values)", runs=out)


def worker_numpy(path, ids, threads_list, repeat, queries):
    import numpy as np
    dtype = [(i, "U16" if i == "ticker" else "datetime64[D]" if i == "date" else "f8") for i in ids]
    t0 = time.perf_counter()
    try:
        rec = np.loadtxt(path, delimiter=",", skiprows=1, dtype=dtype)
    except ValueError as e:  # e.g. an empty cell: NumPy float arrays have no nulls
        sys.exit("peers: numpy cannot load %s (%s); run without numpy (--engines) for data with nulls" % (path, e))
    cols = {i: np.ascontiguousarray(rec[i]) for i in ids}
    del rec
    symbols, codes = np.unique(cols.pop("ticker"), return_inverse=True)
    cols["ticker"] = codes.astype(np.int32)  # dictionary-encoded, as one would in NumPy
    load_ms = (time.perf_counter() - t0) * 1e3
    hi, lo, ahi, alo, close, vol, date, tick = (cols[k] for k in
                                               ("high", "low", "adj_high", "adj_low", "close", "volume", "date", "ticker"))
    wanted = np.array([i for i, s in enumerate(symbols) if s in TICKERS], dtype=np.int32)
    d0, d1 = np.datetime64(DATE_FROM), np.datetime64(DATE_TO)

    def agg(m):
        return np.count_nonzero(m), close[m].sum()
    wanted_queries = [q for q in queries if q in SQL_WHERE]  # no screens: NumPy has no per-group windows here
    queries = {
        "Q1": lambda: agg((hi > 80) & (hi < 83)),
        "Q2": lambda: agg((hi > 80) & (hi < 83) & (lo > 78) & (lo < 82) & (ahi > 75) & (ahi < 85)
                          & (alo > 70) & (alo < 75)),
        "Q3": lambda: agg(np.isin(tick, wanted) & (date >= d0) & (date <= d1) & (vol > 1000000)
                          & (close > 20) & (close < 200)),
        "Q4": lambda: agg(((close < 20) | (close > 500)) & ~(vol < 500000)),
    }
    out = []
    full = (hi, lo, ahi, alo, close, vol, date, tick)
    for q in wanted_queries:
        hi, lo, ahi, alo, close, vol, date, tick = full
        ms, times, res = timed(queries[q], repeat)
        hi, lo, ahi, alo, close, vol, date, tick = (a[:0] for a in full)  # no rows: the fixed cost
        empty_ms = timed(queries[q], repeat)[0]
        out.append(dict(query=q, threads=1, ms=ms, times=times, result=norm(*res), empty_ms=empty_ms))
    hi, lo, ahi, alo, close, vol, date, tick = full
    return dict(engine="numpy", version=np.__version__, load_ms=load_ms, rows=int(close.shape[0]),
                load_note="numpy.loadtxt into one array per column (ticker as int codes, date as datetime64[D])",
                runs=out)


def worker_sqlite(path, ids, threads_list, repeat, queries):
    import sqlite3
    con = sqlite3.connect(":memory:")
    cols = ", ".join("%s %s" % (i, "TEXT" if i in ("ticker", "date") else "REAL") for i in ids)
    con.execute("CREATE TABLE quotes (%s)" % cols)
    ti, di = ids.index("ticker"), ids.index("date")

    def rows():
        with open(path, newline="") as f:
            r = csv.reader(f)
            next(r)
            for rec in r:
                # Python's float() rounds correctly; SQLite's own text-to-real conversion need not.
                # An empty cell is a null (none in generated data).
                yield tuple(v if k in (ti, di) else float(v) if v else None for k, v in enumerate(rec))
    t0 = time.perf_counter()
    con.execute("BEGIN")
    con.executemany("INSERT INTO quotes VALUES (%s)" % ", ".join("?" * len(ids)), rows())
    con.execute("COMMIT")
    con.execute("CREATE INDEX quotes_ticker_date ON quotes (ticker, date)")
    con.execute("ANALYZE")
    load_ms = (time.perf_counter() - t0) * 1e3
    nrows = con.execute("SELECT count(*) FROM quotes").fetchone()[0]
    con.execute("CREATE TABLE quotes_empty AS SELECT * FROM quotes LIMIT 0")
    con.execute("CREATE INDEX quotes_empty_ticker_date ON quotes_empty (ticker, date)")
    out = []
    for q in [q for q in queries if q in SQL_WHERE]:  # no screens (see SCREEN_ENGINES)
        sql = "SELECT count(*), sum(close) FROM quotes WHERE " + SQL_WHERE[q].format(d0="'%s'" % DATE_FROM,
                                                                               d1="'%s'" % DATE_TO)
        ms, times, res = timed(lambda: con.execute(sql).fetchone(), repeat)
        plan = " / ".join(r[-1] for r in con.execute("EXPLAIN QUERY PLAN " + sql))
        empty_sql = sql.replace("FROM quotes WHERE", "FROM quotes_empty WHERE")
        empty_ms = timed(lambda: con.execute(empty_sql).fetchone(), repeat)[0]
        out.append(dict(query=q, threads=1, ms=ms, times=times, result=norm(*res), plan=plan, empty_ms=empty_ms))
    return dict(engine="sqlite", version=sqlite3.sqlite_version, load_ms=load_ms, rows=nrows,
                load_note="executemany into an in-memory DB (ISO-text dates, REAL values), "
                          "then an index on (ticker, date)", runs=out)


WORKERS = {"duckdb": worker_duckdb, "polars": worker_polars, "numpy": worker_numpy, "sqlite": worker_sqlite}


# --------------------------------------------------------------------------------------------
# Parent: runs Colonnade and the workers, checks agreement, prints the tables.

def run_colonnade(binary, snapshot, threads_list, repeat, queries):
    out = []
    for threads in threads_list:
        for q in queries:
            cmd = [binary, "filter", "--snapshot", snapshot, "--where", QUERIES[q], "--agg", "count,sum(close)",
                   "--format", "csv", "--timing", "--repeat", str(repeat), "--threads", str(threads)]
            if q in ON_LATEST:
                cmd += ["--on", "latest"]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("peers: colonnade failed (exit %d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
            lines = [l for l in p.stdout.splitlines() if l.strip()]
            timing = None
            for line in reversed(p.stderr.splitlines()):
                if line.strip().startswith("{"):
                    timing = json.loads(line)
                    break
            if timing is None or len(lines) < 2:
                sys.exit("peers: unexpected colonnade output for %s:\nstdout: %s\nstderr: %s"
                         % (" ".join(cmd), p.stdout, p.stderr))
            row = next(csv.reader([lines[-1]]))
            count, total = int(float(row[0])), float(row[1]) if row[1] not in ("", "null") else 0.0
            out.append(dict(query=q, threads=threads, ms=float(timing["query_ms"]), result=(count, total),
                            timing=timing))
    first = out[0]["timing"]
    # Every `filter` process loads the snapshot: the median of their load_ms (the first process
    # may find the file outside the page cache: it is shown apart).
    loads = [float(r["timing"].get("load_ms", "nan")) for r in out]
    return dict(engine="colonnade", version=colonnade_version(binary), load_ms=statistics.median(loads),
                rows=first.get("rows"),
                load_note="snapshot load (memory-mapped, verified): median of the %d `filter` processes' --timing load_ms "
                          "(the first: %.3g ms)" % (len(loads), loads[0]),
                runs=out)


def colonnade_version(binary):
    for args in (["--version"], ["version"]):
        try:
            p = subprocess.run([binary] + args, capture_output=True, text=True, timeout=30)
            if p.returncode == 0 and p.stdout.strip():
                line = p.stdout.strip().splitlines()[0]
                return line[len("colonnade "):] if line.startswith("colonnade ") else line
        except (OSError, subprocess.TimeoutExpired):
            pass
    return "unknown"


def run_worker(engine, csv_path, threads, repeat, queries):
    env = dict(os.environ)
    if engine == "polars":
        env["POLARS_MAX_THREADS"] = str(threads[0])
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", engine, "--csv", csv_path,
           "--worker-threads", ",".join(map(str, threads)), "--repeat", str(repeat), "--queries", ",".join(queries)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, env=env, text=True)
    if p.returncode != 0:
        sys.exit("peers: the %s worker failed (exit %d): %s" % (engine, p.returncode, " ".join(cmd)))
    return json.loads(p.stdout)


def loadavg():
    try:
        with open("/proc/loadavg") as f:
            return float(f.read().split()[0])
    except (OSError, ValueError, IndexError):
        return None


def machine():
    model = "unknown"
    try:
        with open("/proc/cpuinfo") as f:
            for line in f:
                if line.startswith("model name"):
                    model = line.split(":", 1)[1].strip()
                    break
    except OSError:
        model = platform.processor() or "unknown"
    return dict(cpu=model, cores=os.cpu_count(), usable_cores=len(os.sched_getaffinity(0)),
                os=platform.platform(), python=platform.python_version())


def agree(a, b):
    (ca, sa), (cb, sb) = a, b
    if ca != cb:
        return False
    scale = max(abs(sa), abs(sb))
    return abs(sa - sb) <= REL_TOL * scale or scale == 0


def within(exact, result):
    """Whether (count, sum) lies between the strict and the non-strict exact answers."""
    (c0, s0), (c1, s1) = exact
    count, total = result
    slack = REL_TOL * max(abs(s0), abs(s1))
    return c0 <= count <= c1 and min(s0, s1) - slack <= total <= max(s0, s1) + slack


def check(results):
    """Compares every run's (count, sum) per query against the first engine's; returns MISMATCH lines.
    For a query with exact bounds (EXACT_SQL), every run must lie within them instead."""
    lines = []
    for q in QUERIES:
        runs = [(r["engine"], run["threads"], tuple(run["result"])) for r in results for run in r["runs"]
                if run["query"] == q]
        if not runs:
            continue
        exact = next((run["exact"] for r in results for run in r["runs"] if run["query"] == q and "exact" in run), None)
        if exact is not None:
            (c0, s0), (c1, s1) = exact
            for engine, threads, res in runs:
                if not within(exact, res):
                    lines.append("MISMATCH %s: %s (%d thread%s) count=%d sum(close)=%r, outside the exact answers "
                                 "count=%d..%d sum(close)=%r..%r" % (q, LABELS[engine], threads, "s"[threads == 1:],
                                                                     res[0], res[1], c0, c1, s0, s1))
            continue
        ref_engine, ref_threads, ref = runs[0]
        for engine, threads, res in runs[1:]:
            if not agree(ref, res):
                lines.append("MISMATCH %s: %s (%d thread%s) count=%d sum(close)=%r, but %s (%d thread%s) "
                             "count=%d sum(close)=%r" % (q, LABELS[ref_engine], ref_threads, "s"[ref_threads == 1:],
                                                         ref[0], ref[1], LABELS[engine], threads,
                                                         "s"[threads == 1:], res[0], res[1]))
    return lines


def agreement(results):
    """Per query, computed from every engine's answers (never from a flag): a list of dicts
    {query, status, answers: {engine label: [count, sum]}, exact} where status is
    - "agree": every engine, at every thread count, gave the same count and sum(close) (sum
      within REL_TOL relative);
    - "differ": they did not, but every answer lies between DuckDB's exact decimal answers with
      strict and with non-strict comparisons (exact ties decided differently): each engine's
      own answer is shown, and they are not counted as agreeing;
    - "mismatch": anything else (a wrong answer: `check` reports it and the run fails).
    An engine whose answers differ between its thread counts is shown with each."""
    out = []
    for q in QUERIES:
        runs = [(r["engine"], run["threads"], tuple(run["result"])) for r in results for run in r["runs"] if run["query"] == q]
        if not runs:
            continue
        exact = next((run["exact"] for r in results for run in r["runs"] if run["query"] == q and "exact" in run), None)
        answers = {}
        for engine, threads, res in runs:
            key = LABELS[engine]
            if key in answers and not agree(answers[key], res):
                key = "%s (%d thread%s)" % (LABELS[engine], threads, "s"[threads == 1:])
            answers.setdefault(key, res)
        ref = runs[0][2]
        if all(agree(ref, res) for _, _, res in runs):
            status = "agree"
        elif exact is not None and all(within(exact, res) for _, _, res in runs):
            status = "differ"
        else:
            status = "mismatch"
        out.append(dict(query=q, status=status, answers={k: list(v) for k, v in answers.items()}, exact=exact))
    return out


def agreement_sentence(results):
    """The page's sentence about agreement, generated from `agreement(results)`."""
    rows = agreement(results)
    agreed = [r["query"] for r in rows if r["status"] == "agree"]
    others = [r for r in rows if r["status"] != "agree"]
    if not others:
        return "Every engine gave the same count(*) and sum(close) for every query (%s)." % ", ".join(agreed)
    parts = []
    for r in others:
        parts.append("%s: %s%s" % (r["query"], "; ".join("%s %s" % (k, "{:,}".format(v[0])) for k, v in r["answers"].items()),
                                   " (within the exact-tie window %s–%s)" % ("{:,}".format(r["exact"][0][0]), "{:,}".format(r["exact"][1][0]))
                                   if r["status"] == "differ" else " (**a wrong answer**)"))
    return ("The engines gave the same count(*) and sum(close) for %s. **They differ on %s** — %s."
            % (", ".join(agreed) or "no query", ", ".join(r["query"] for r in others), "; ".join(parts)))


def fmt_ms(ms):
    return "%.3g" % ms if ms < 100 else "%.0f" % ms


def fmt_cell(run, base, footnote=""):
    if run is None:
        return "—"
    s = fmt_ms(run["ms"]) + footnote
    if base is not None and base["ms"] > 0:
        s += " (%s×)" % ("%.3g" % (run["ms"] / base["ms"]))
    return s


def render(results, meta, threads_all):
    by = {(r["engine"], run["query"], run["threads"]): run for r in results for run in r["runs"]}
    measured = [q for q in QUERIES if any(run["query"] == q for r in results for run in r["runs"])]
    engines = [r["engine"] for r in results]
    has_col = "colonnade" in engines
    out = []
    out.append("## Colonnade vs peers — %s" % meta["title"])
    out.append("")
    out.append("- Data: %s — %s rows, %s" % (meta["size"], meta["rows"], meta["data"]))
    m = meta["machine"]
    out.append("- Machine: %s, %d cores (%d usable), %s; Python %s" % (m["cpu"], m["cores"], m["usable_cores"],
                                                                        m["os"], m["python"]))
    la0, la1 = meta.get("loadavg_start"), meta.get("loadavg_end")
    if la0 is not None and la1 is not None:
        out.append("- Load average (1 min) at start / end: %.2f / %.2f on %d cores" % (la0, la1, m["usable_cores"]))
        # The runs use up to all usable cores themselves: only a load above that shows other work.
        if max(la0, la1) > m["usable_cores"]:
            out.append("- **Warning: other processes were busy on this machine during the run; times (and so ratios) "
                       "are noisy. Re-run on an idle machine for numbers to quote.**")
    out.append("- Versions: " + ", ".join("%s %s" % (LABELS[r["engine"]], r["version"]) for r in results))
    out.append("- Date: %s; each time is the median of %d runs after one warm-up%s, query only (data already loaded)"
               % (meta["date"], meta["repeat"], repeat_budget_text(meta)))
    out.append("- Cells: median ms (ratio = peer ÷ Colonnade at the same thread count; > 1 means Colonnade is faster)")
    out.append("")
    settings = sorted(set([1, threads_all]))
    for t in settings:
        out.append("### %d thread%s%s" % (t, "s"[t == 1:], " (all threads)" if t == threads_all and t > 1 else ""))
        out.append("")
        status = {r["query"]: r for r in agreement(results)}
        head = ["Query", "Matches", "sum(close)"] + [LABELS[e] + ("†" if e in SINGLE_THREADED and t > 1 else "")
                                                      for e in engines]
        out.append("| " + " | ".join(head) + " |")
        out.append("|" + "|".join(["---"] * 3 + ["---:"] * len(engines)) + "|")
        for q in measured:
            ref = next((by[(e, q, tt)] for e in engines for tt in (t, 1) if (e, q, tt) in by), None)
            base = by.get(("colonnade", q, t)) if has_col else None
            label = q + ("‡" if q in INDEX_QUERIES else "") + ("§" if q in ON_LATEST else "")
            st = status.get(q)
            if st and st["status"] != "agree":
                # Engines that differ: each one's own answer, never one figure for all.
                cells = [label, "**differ:** " + ", ".join("%s %s" % (k, "{:,}".format(v[0])) for k, v in st["answers"].items()),
                         ", ".join("%s %.2f" % (k, v[1]) for k, v in st["answers"].items())]
            else:
                cells = [label, str(ref["result"][0]) if ref else "—", "%.2f" % ref["result"][1] if ref else "—"]
            for e in engines:
                if e in SINGLE_THREADED and t > 1:
                    cells.append(fmt_cell(by.get((e, q, 1)), base, "†"))
                else:
                    cells.append(fmt_cell(by.get((e, q, t)), base if e != "colonnade" else None))
            out.append("| " + " | ".join(cells) + " |")
        out.append("")
    if threads_all > 1 and any(e in SINGLE_THREADED for e in engines):
        out.append("† single-threaded engine: the 1-thread time is shown again (NumPy's element-wise "
                   "operations and SQLite's query execution use one core).")
        out.append("")
    if any(q in INDEX_QUERIES for q in measured):
        out.append("‡ Q3 is index vs scan: Colonnade answers its ticker and date terms from the sorted table "
                   "(row intervals, no scan) and SQLite from its (ticker, date) index, while DuckDB, Polars and "
                   "NumPy have no such index and scan.")
        out.append("")
    if any(q in ON_LATEST for q in measured):
        out.append("§ last rows only, not the same work: Colonnade (`--on latest`) computes each screen for each "
                   "ticker's last row only (its windows over the last rows), while DuckDB and Polars compute every "
                   "window over the whole table and then keep each ticker's last row. The ratios on these rows "
                   "compare that shortcut with a whole-table computation; the S1–S4 rows compare the same work.")
        out.append("")
    empties = [(r["engine"], run) for r in results for run in r["runs"] if "empty_ms" in run]
    if empties:
        out.append("### Fixed cost per query (the same query on a table with no rows)")
        out.append("")
        out.append("What every run pays whatever the data: the Python call and, for DuckDB and SQLite, parsing, "
                   "binding and planning the SQL; for Polars, building and optimizing the lazy plan. "
                   "Colonnade's query_ms excludes parsing (the CLI parses once, before its runs).")
        out.append("")
        first = measured[0]
        cols = [(e, t) for e in engines if e != "colonnade"
                for t in (settings if e not in SINGLE_THREADED else [1]) if (e, first, t) in by]
        out.append("| Query | " + " | ".join("%s %dT ms" % (LABELS[e], t) for e, t in cols) + " |")
        out.append("|---|" + "|".join(["---:"] * len(cols)) + "|")
        for q in measured:
            cells = []
            for e, t in cols:
                run = by.get((e, q, t))
                cells.append("%.3g" % run["empty_ms"] if run and "empty_ms" in run else "—")
            out.append("| %s | %s |" % (q, " | ".join(cells)))
        out.append("")
    out.append("### Load (outside the timed region)")
    out.append("")
    out.append("| Engine | Load ms | What |")
    out.append("|---|---:|---|")
    for r in results:
        out.append("| %s | %s | %s |" % (LABELS[r["engine"]], fmt_ms(r["load_ms"]), r["load_note"]))
    out.append("")
    ties = [(run["query"], run["exact"]) for r in results for run in r["runs"] if "exact" in run]
    if ties:
        out.append("Exact ties: where a screen's comparison is an exact tie in decimal arithmetic (a close equal to its "
                   "average in cents), the outcome depends on rounding and differs between engines. DuckDB computes the "
                   "answer in DECIMAL(38, 8) with strict and with non-strict comparisons; every engine lies between them:")
        out.append("")
        for q, ((c0, s0), (c1, s1)) in ties:
            out.append("- %s: count %d..%d (%d tied rows), sum(close) %.2f..%.2f" % (q, c0, c1, c1 - c0, s0, s1))
        out.append("")
    out.append("Queries (`a < x < b` exclusive):")
    out.append("")
    for q in measured:
        out.append("- %s: `%s`%s" % (q, QUERIES[q], " as of each ticker's latest row (`--on latest`)" if q in ON_LATEST else ""))
    if any(q in QUERIES and q[0] == "S" for q in measured):
        out.append("")
        out.append("Screens run in Colonnade, DuckDB (window functions `OVER (PARTITION BY ticker ORDER BY date ROWS "
                   "BETWEEN n-1 PRECEDING AND CURRENT ROW)`, null until the window is full) and Polars "
                   "(`.rolling_mean(n).over(\"ticker\")`, `.shift(n).over(\"ticker\")`); NumPy and SQLite are not run on them. "
                   "The peers compute every window over the whole table, then keep each ticker's last row for S1L–S4L.")
    out.append("")
    return "\n".join(out)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", required=True, help="the data as CSV (from `colonnade generate --csv`)")
    ap.add_argument("--snapshot", help="the same data as a Colonnade snapshot")
    ap.add_argument("--colonnade", help="the colonnade binary")
    ap.add_argument("--no-colonnade", action="store_true", help="measure the peers only")
    ap.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                    help="'all threads' setting (default: the usable cores, %(default)s)")
    ap.add_argument("--repeat", type=int, default=10, help="timed runs per query (default %(default)s)")
    ap.add_argument("--engines", default=",".join(ENGINES), help="peers to run (default %(default)s)")
    ap.add_argument("--size", default="custom", help="size label for the report")
    ap.add_argument("--json", help="also write every measurement to this JSON file")
    ap.add_argument("--markdown", help="also write the table to this file")
    ap.add_argument("--svg", help="also write charts (peers-queries.svg, peers-load.svg) into this directory")
    ap.add_argument("--queries", help="run only these queries, comma-separated (default: all of %s)" % ", ".join(QUERIES))
    ap.add_argument("--worker", choices=ENGINES, help=argparse.SUPPRESS)
    ap.add_argument("--worker-threads", help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.repeat < 1 or a.threads < 1:
        sys.exit("peers: --repeat and --threads must be at least 1")
    if not os.path.isfile(a.csv):
        sys.exit("peers: no CSV at %s" % a.csv)
    _, ids = read_header(a.csv)

    if a.worker:
        threads = [int(x) for x in a.worker_threads.split(",")]
        json.dump(WORKERS[a.worker](a.csv, ids, threads, a.repeat, selected(a.queries)), sys.stdout)
        return 0

    engines = [e.strip() for e in a.engines.split(",") if e.strip()]
    unknown = set(engines) - set(ENGINES)
    if unknown:
        sys.exit("peers: unknown engine(s) %s (known: %s)" % (", ".join(sorted(unknown)), ", ".join(ENGINES)))
    settings = sorted(set([1, a.threads]))
    queries = selected(a.queries)
    loadavg_start = loadavg()
    results = []
    if not a.no_colonnade:
        if not a.colonnade or not (os.path.isfile(a.colonnade) and os.access(a.colonnade, os.X_OK)):
            sys.exit("peers: no colonnade binary at %r (build it: swift build -c release --product colonnade; "
                     "or pass --no-colonnade)" % a.colonnade)
        if not a.snapshot or not os.path.isfile(a.snapshot):
            sys.exit("peers: no snapshot at %r (colonnade generate ... --snapshot PATH)" % a.snapshot)
        print("peers: colonnade, threads %s ..." % settings, file=sys.stderr, flush=True)
        results.append(run_colonnade(a.colonnade, a.snapshot, settings, a.repeat, queries))
    for e in engines:
        if e not in SCREEN_ENGINES and not any(q in SQL_WHERE for q in queries):
            continue  # only screens asked for, which this engine does not run
        if e == "polars":
            print("peers: polars, threads %s (one process each) ..." % settings, file=sys.stderr, flush=True)
            runs = [run_worker(e, a.csv, [t], a.repeat, queries) for t in settings]
            merged = runs[0]
            merged["load_ms"] = statistics.median(r["load_ms"] for r in runs)
            for r in runs[1:]:
                merged["runs"] += r["runs"]
            results.append(merged)
        else:
            t = settings if e == "duckdb" else [1]
            print("peers: %s, threads %s ..." % (e, t), file=sys.stderr, flush=True)
            results.append(run_worker(e, a.csv, t, a.repeat, queries))
        print("peers: %s done (load %s ms)" % (e, fmt_ms(results[-1]["load_ms"])), file=sys.stderr, flush=True)

    row_counts = {r["engine"]: r["rows"] for r in results}
    mismatches = check(results)
    if len(set(row_counts.values())) > 1:
        mismatches.insert(0, "MISMATCH rows loaded: " + ", ".join("%s %s" % (LABELS[e], n)
                                                                  for e, n in row_counts.items()))
    meta = dict(title="%s, %s" % (a.size.split(" ")[0], datetime.date.today().isoformat()), size=a.size,
                rows=next(iter(row_counts.values())), data=os.path.basename(a.csv),
                machine=machine(), date=datetime.datetime.now().isoformat(timespec="seconds"),
                repeat=a.repeat, repeat_budget_s=REPEAT_BUDGET_S, min_runs=MIN_RUNS, threads=a.threads,
                loadavg_start=loadavg_start, loadavg_end=loadavg())
    text = render(results, meta, a.threads)
    print(text)
    for line in mismatches:
        print(line)
    print(agreement_sentence(results))
    if a.markdown:
        with open(a.markdown, "w") as f:
            f.write(text + "\n" + "\n".join(mismatches) + "\n")
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(meta=meta, queries={q: QUERIES[q] for q in queries}, sql=SQL_WHERE, screen_sql=SCREEN_SQL, results=results, mismatches=mismatches,
                           agreement=agreement(results)), f, indent=1)
    if a.svg:
        import plot
        report = dict(meta=meta, queries={q: QUERIES[q] for q in queries}, results=results)
        for path in plot.write(report, a.svg):
            print("peers: wrote %s" % path, file=sys.stderr)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
