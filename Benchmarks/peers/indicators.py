#!/usr/bin/env python3
"""Issue 30's indicator screens (I1-I4, each also as of the latest day, and S3 with exact windows)
through Colonnade, Polars, DuckDB and TA-Lib on the same data, every engine checked to agree.

Usually started by indicators.sh (which generates the data and installs TA-Lib):

    indicators.py --csv quotes.csv --snapshot quotes.snapshot --colonnade .build/release/colonnade \
                  [--threads 1,2] [--repeat R] [--json FILE] [--bench-json FILE]

- Colonnade: `colonnade filter --where TEXT --agg count,sum(close) --timing --repeat R` (its
  `query_ms`: in-process query time after the snapshot is loaded), `--on latest` for the L rows.
- Polars (in process after `read_csv`, timed as Polars' query alone), seeded like TA-Lib: the first
  n-1 values of each ticker's series nulled and the n-th replaced by `rolling_mean(n)`, then
  `ewm_mean(alpha, adjust=False, ignore_nulls=True)`, all `.over("ticker")`. `greatest` is guarded
  against a null `prev` row (Polars' `max_horizontal` ignores nulls; Colonnade's is null then).
- TA-Lib (0.8, the C library in PyPI's `ta-lib` wheel): EMA, RSI, ATR and SMA per ticker over NumPy
  arrays (ticker slices of the sorted table), single-threaded; I3's running maximum is NumPy's.
- DuckDB where SQL expresses it: I3 (a running max is a window), and S3's exact answer in
  DECIMAL(38, 8) (strict comparisons), which Colonnade's must equal.

"Latest" is Colonnade's `--on latest` rule: each ticker's last row, provided it is at most 7
calendar days before the table's newest date. Counts must agree exactly across engines and
thread counts and sum(close) within 1e-9 relative; any other answer is a MISMATCH (exit status 1).
"""
import argparse
import csv
import json
import os
import statistics
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import peers  # noqa: E402  (timing, agreement and machine helpers shared with the peers suite)

TR = "greatest(high - low, abs(high - prev(close)), abs(low - prev(close)))"
SCREENS = {
    "I1": "ema(close, 12) > ema(close, 26) and prev(ema(close, 12)) <= prev(ema(close, 26))",
    "I2": "rsi(close, 14) < 30",
    "I3": "close / cummax(close) - 1 < -0.2 and volume > 2 * mavg(volume, 20)",
    "I4": "close > prev(close) + 2 * rma(%s, 14)" % TR,
    "S3": "close > mavg(close, 50) and mavg(close, 50) > mavg(close, 200)",
}
QUERIES = dict(SCREENS)
for _q in list(SCREENS):
    QUERIES[_q + "L"] = SCREENS[_q]
MAX_STALE_DAYS = 7
LABELS = {"colonnade": "Colonnade", "polars": "Polars", "talib": "TA-Lib", "duckdb": "DuckDB"}
# What each peer answers (the rest it cannot express in its own terms).
PEER_QUERIES = {
    "polars": list(QUERIES),
    "talib": ["I1", "I1L", "I2", "I2L", "I3", "I3L", "I4", "I4L"],
    "duckdb": ["I3", "I3L", "S3", "S3L"],
}


def load_columns(path):
    """The CSV's header as Colonnade's identifiers (peers.read_header)."""
    return peers.read_header(path)


# --------------------------------------------------------------------------------------------
# Workers (each in its own process: Polars reads POLARS_MAX_THREADS at import).

def worker_polars(path, threads, repeat, queries):
    import polars as pl
    if pl.thread_pool_size() != threads:
        sys.exit("indicators: polars uses %d threads, expected %d" % (pl.thread_pool_size(), threads))
    names, ids = load_columns(path)
    schema = {n: (pl.String if i in ("ticker", "date") else pl.Float64) for n, i in zip(names, ids)}
    t0 = time.perf_counter()
    df = pl.read_csv(path, schema=schema).rename(dict(zip(names, ids)))
    df = df.with_columns(pl.col("date").str.to_date("%Y-%m-%d")).rechunk()
    load_ms = (time.perf_counter() - t0) * 1e3
    c = pl.col

    def seeded(x, n, alpha, lead=0):
        """TA-Lib's seeding: null before the n-th value (after `lead` leading nulls), the n-th the
        mean of the first n, then the exponential recursion (evaluated .over("ticker"))."""
        i = pl.int_range(pl.len()) - lead
        seed = pl.when(i < n - 1).then(None).when(i == n - 1).then(x.rolling_mean(n)).otherwise(x)
        return seed.ewm_mean(alpha=alpha, adjust=False, ignore_nulls=True)

    def ema(x, n, lead=0):
        return seeded(x, n, 2.0 / (n + 1), lead)

    def rma(x, n, lead=0):
        return seeded(x, n, 1.0 / n, lead)

    prev_close = c("close").shift(1)
    change = c("close") - prev_close
    gain = pl.when(change > 0).then(change).otherwise(0.0)
    loss = pl.when(change < 0).then(-change).otherwise(0.0)
    ag, al = rma(pl.when(change.is_null()).then(None).otherwise(gain), 14, lead=1), \
        rma(pl.when(change.is_null()).then(None).otherwise(loss), 14, lead=1)
    rsi = pl.when(ag + al == 0).then(0.0).otherwise(100 * ag / (ag + al))
    tr = pl.when(prev_close.is_null()).then(None).otherwise(
        pl.max_horizontal(c("high") - c("low"), (c("high") - prev_close).abs(), (c("low") - prev_close).abs()))
    e12, e26 = ema(c("close"), 12), ema(c("close"), 26)
    exprs = {
        "I1": ((e12 > e26) & (e12.shift(1) <= e26.shift(1))).over("ticker"),
        "I2": (rsi < 30).over("ticker"),
        "I3": ((c("close") / c("close").cum_max() - 1 < -0.2) & (c("volume") > 2 * c("volume").rolling_mean(20))).over("ticker"),
        "I4": (c("close") > prev_close + 2 * rma(tr, 14, lead=1)).over("ticker"),
        "S3": ((c("close") > c("close").rolling_mean(50)) & (c("close").rolling_mean(50) > c("close").rolling_mean(200))).over("ticker"),
    }
    newest = df["date"].max()
    cutoff = newest - __import__("datetime").timedelta(days=MAX_STALE_DAYS)
    latest = (c("date") == c("date").max().over("ticker")) & (c("date") >= cutoff)
    for q in SCREENS:
        exprs[q + "L"] = exprs[q] & latest
    out = []
    for q in queries:
        e = exprs[q]

        def run(e=e):
            return df.lazy().filter(e).select(pl.len(), c("close").sum()).collect().row(0)
        ms, times, res = peers.timed(run, repeat)
        out.append(dict(query=q, threads=threads, ms=ms, times=times, result=peers.norm(*res)))
    return dict(engine="polars", version=pl.__version__, load_ms=load_ms, rows=df.height, runs=out,
                note="seeded like TA-Lib, then ewm_mean(adjust=False, ignore_nulls=True), all .over(\"ticker\")")


def worker_talib(path, threads, repeat, queries):
    import numpy as np
    import polars as pl
    import talib
    names, ids = load_columns(path)
    schema = {n: (pl.String if i in ("ticker", "date") else pl.Float64) for n, i in zip(names, ids)}
    t0 = time.perf_counter()
    df = pl.read_csv(path, schema=schema).rename(dict(zip(names, ids)))
    df = df.with_columns(pl.col("date").str.to_date("%Y-%m-%d"))
    close, high, low, volume = (np.ascontiguousarray(df[k].to_numpy()) for k in ("close", "high", "low", "volume"))
    days = df["date"].to_numpy().astype("datetime64[D]").astype(np.int64)
    ticker = df["ticker"].to_numpy()
    load_ms = (time.perf_counter() - t0) * 1e3
    # Ticker slices (rows are sorted by ticker, then date).
    bounds = np.flatnonzero(ticker[1:] != ticker[:-1]) + 1
    starts = np.concatenate(([0], bounds)).tolist()
    ends = np.concatenate((bounds, [len(ticker)])).tolist()
    last_rows = np.array(ends) - 1
    fresh = last_rows[days[last_rows] >= days.max() - MAX_STALE_DAYS]
    n = len(close)

    def per_ticker(fn):
        out = np.empty(n)
        for s, e in zip(starts, ends):
            out[s:e] = fn(s, e)
        return out

    def prev(x):
        p = np.empty(n)
        p[1:] = x[:-1]
        p[starts] = np.nan
        return p

    def i1():
        e12 = per_ticker(lambda s, e: talib.EMA(close[s:e], 12))
        e26 = per_ticker(lambda s, e: talib.EMA(close[s:e], 26))
        with np.errstate(invalid="ignore"):
            return (e12 > e26) & (prev(e12) <= prev(e26))

    def i2():
        rsi = per_ticker(lambda s, e: talib.RSI(close[s:e], 14))
        with np.errstate(invalid="ignore"):
            return rsi < 30

    def i3():
        cummax = per_ticker(lambda s, e: np.maximum.accumulate(close[s:e]))
        sma = per_ticker(lambda s, e: talib.SMA(volume[s:e], 20))
        with np.errstate(invalid="ignore"):
            return (close / cummax - 1 < -0.2) & (volume > 2 * sma)

    def i4():
        atr = per_ticker(lambda s, e: talib.ATR(high[s:e], low[s:e], close[s:e], 14))
        with np.errstate(invalid="ignore"):
            return close > prev(close) + 2 * atr
    masks = {"I1": i1, "I2": i2, "I3": i3, "I4": i4}
    out = []
    for q in queries:
        base = q.rstrip("L")
        if q.endswith("L"):
            # Every ticker's series in full (each value depends on all earlier rows), kept at its latest row.
            def run(base=base):
                m = masks[base]()[fresh]
                return int(m.sum()), float(close[fresh][m].sum())
        else:
            def run(base=base):
                m = masks[base]()
                return int(m.sum()), float(close[m].sum())
        ms, times, res = peers.timed(run, repeat)
        out.append(dict(query=q, threads=1, ms=ms, times=times, result=peers.norm(*res)))
    return dict(engine="talib", version=talib.__version__, load_ms=load_ms, rows=n, runs=out,
                note="TA-Lib per ticker over NumPy slices (one thread); I3's running max is NumPy's")


def worker_duckdb(path, threads, repeat, queries):
    import duckdb
    names, ids = load_columns(path)
    con = duckdb.connect(":memory:")
    con.execute("SET threads = %d" % threads)
    types = {i: ("VARCHAR" if i == "ticker" else "DATE" if i == "date" else "DOUBLE") for i in ids}
    spec = "{" + ", ".join("'%s': '%s'" % (i, t) for i, t in types.items()) + "}"
    t0 = time.perf_counter()
    con.execute("CREATE TABLE quotes AS SELECT * FROM read_csv(?, header = false, skip = 1, delim = ',', "
                "columns = %s, dateformat = '%%Y-%%m-%%d')" % spec, [path])
    load_ms = (time.perf_counter() - t0) * 1e3
    w = "OVER (PARTITION BY ticker ORDER BY date ROWS BETWEEN %d PRECEDING AND CURRENT ROW)"
    latest = ("row_number() OVER (PARTITION BY ticker ORDER BY date DESC) AS rn, "
              "date >= (SELECT max(date) FROM quotes) - INTERVAL %d DAY AS fresh" % MAX_STALE_DAYS)
    cols = {
        "I3": ("max(close) OVER (PARTITION BY ticker ORDER BY date ROWS UNBOUNDED PRECEDING) AS cmax, "
               "CASE WHEN count(volume) %s = 20 THEN avg(volume) %s END AS v20" % (w % 19, w % 19),
               "close / cmax - 1 < -0.2 AND volume > 2 * v20"),
        # S3 exactly: the CSV's decimals summed in DECIMAL(38, 8), compared without rounding.
        "S3": ("CASE WHEN count(close) %s = 50 THEN sum(CAST(close AS DECIMAL(38, 8))) %s END AS s50, "
               "CASE WHEN count(close) %s = 200 THEN sum(CAST(close AS DECIMAL(38, 8))) %s END AS s200"
               % (w % 49, w % 49, w % 199, w % 199),
               "CAST(close AS DECIMAL(38, 8)) * 50 > s50 AND s50 * 200 > s200 * 50"),
    }
    out = []
    for q in queries:
        base = q.rstrip("L")
        select, where = cols[base]
        if q.endswith("L"):
            sql = ("SELECT count(*), sum(close) FROM (SELECT ticker, date, close, volume, %s, %s FROM quotes) "
                   "WHERE rn = 1 AND fresh AND %s" % (select, latest, where))
        else:
            sql = "SELECT count(*), sum(close) FROM (SELECT ticker, date, close, volume, %s FROM quotes) WHERE %s" % (select, where)
        ms, times, res = peers.timed(lambda: con.execute(sql).fetchone(), repeat)
        out.append(dict(query=q, threads=threads, ms=ms, times=times, result=peers.norm(*res), sql=sql))
        if base == "S3":
            # The exact answers with strict and with non-strict comparisons: an engine that sums
            # doubles may decide a decimal tie either way, so its answer must lie between them.
            lenient = sql.replace("* 50 >", "* 50 >=").replace("* 200 >", "* 200 >=")
            out[-1]["exact"] = [peers.norm(*res), peers.norm(*con.execute(lenient).fetchone())]
    return dict(engine="duckdb", version=duckdb.__version__, load_ms=load_ms, rows=None, runs=out,
                note="window functions; S3 in DECIMAL(38, 8), exact (the reference for Colonnade's S3)")


WORKERS = {"polars": worker_polars, "talib": worker_talib, "duckdb": worker_duckdb}


# --------------------------------------------------------------------------------------------
# Parent.

def run_colonnade(binary, snapshot, threads_list, repeat, queries):
    out = []
    for threads in threads_list:
        for q in queries:
            cmd = [binary, "filter", "--snapshot", snapshot, "--where", QUERIES[q], "--agg", "count,sum(close)",
                   "--format", "csv", "--timing", "--repeat", str(repeat), "--threads", str(threads)]
            if q.endswith("L"):
                cmd += ["--on", "latest", "--max-stale", str(MAX_STALE_DAYS)]
            p = subprocess.run(cmd, capture_output=True, text=True)
            if p.returncode != 0:
                sys.exit("indicators: colonnade failed (exit %d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
            lines = [l for l in p.stdout.splitlines() if l.strip()]
            timing = next((json.loads(l) for l in reversed(p.stderr.splitlines()) if l.strip().startswith("{")), None)
            if timing is None or len(lines) < 2:
                sys.exit("indicators: unexpected colonnade output for %s:\n%s\n%s" % (" ".join(cmd), p.stdout, p.stderr))
            row = next(csv.reader([lines[-1]]))
            count, total = int(float(row[0])), float(row[1]) if row[1] not in ("", "null") else 0.0
            out.append(dict(query=q, threads=threads, ms=float(timing["query_ms"]), result=(count, total), timing=timing))
    return dict(engine="colonnade", version=peers.colonnade_version(binary),
                load_ms=statistics.median(float(r["timing"].get("load_ms", "nan")) for r in out), runs=out,
                note="`filter --timing` query_ms (in process, snapshot loaded)")


def run_worker(engine, csv_path, threads, repeat, queries):
    env = dict(os.environ)
    env["POLARS_MAX_THREADS"] = str(threads)
    cmd = [sys.executable, os.path.abspath(__file__), "--worker", engine, "--csv", csv_path,
           "--threads", str(threads), "--repeat", str(repeat), "--queries", ",".join(queries)]
    p = subprocess.run(cmd, stdout=subprocess.PIPE, env=env, text=True)
    if p.returncode != 0:
        sys.exit("indicators: the %s worker failed (exit %d): %s" % (engine, p.returncode, " ".join(cmd)))
    return json.loads(p.stdout)


def check(results):
    """MISMATCH lines: per query, every engine's (count, sum) against the first answer. S3 has an
    exact answer (DuckDB's decimal arithmetic, strict comparisons): Colonnade's must be it, and
    an engine summing doubles must lie between it and the answer with non-strict comparisons
    (a decimal tie decided by rounding; its own answer is shown)."""
    lines = []
    for q in QUERIES:
        runs = [(r["engine"], run["threads"], tuple(run["result"])) for r in results for run in r["runs"] if run["query"] == q]
        if not runs:
            continue
        exact = next((run["exact"] for r in results for run in r["runs"] if run["query"] == q and "exact" in run), None)
        if exact is not None:
            for engine, threads, res in runs:
                ok = peers.agree(tuple(exact[0]), res) if engine == "colonnade" else peers.within(exact, res)
                if not ok:
                    lines.append("MISMATCH %s: %s (%d threads) count=%d sum(close)=%r, exact count=%d (strict) .. %d (ties)"
                                 % (q, LABELS[engine], threads, res[0], res[1], exact[0][0], exact[1][0]))
            continue
        ref_engine, ref_threads, ref = runs[0]
        for engine, threads, res in runs[1:]:
            if not peers.agree(ref, res):
                lines.append("MISMATCH %s: %s (%d threads) count=%d sum(close)=%r, but %s (%d threads) count=%d sum(close)=%r"
                             % (q, LABELS[ref_engine], ref_threads, ref[0], ref[1], LABELS[engine], threads, res[0], res[1]))
    return lines


def render(results, threads_list):
    """A markdown table: per query, each engine's median ms at each thread count, and the answer."""
    head = ["query", "matched"]
    cols = []
    for r in results:
        for t in sorted({run["threads"] for run in r["runs"]}):
            cols.append((r["engine"], t))
            head.append("%s t=%d" % (LABELS[r["engine"]], t))
    lines = ["| " + " | ".join(head) + " |", "|" + "---|" * 2 + "---:|" * len(cols)]
    for q in QUERIES:
        cells, matched = [], None
        for engine, t in cols:
            run = next((run for r in results if r["engine"] == engine for run in r["runs"]
                        if run["query"] == q and run["threads"] == t), None)
            cells.append(("%.3g ms" % run["ms"] if run else "—")
                         + (" (%s)" % format(run["result"][0], ",") if run and matched is not None and run["result"][0] != matched else ""))
            if run and matched is None:
                matched = run["result"][0]
        if matched is None:
            continue
        lines.append("| %s `%s`%s | %s | %s |" % (q, QUERIES[q], " (--on latest)" if q.endswith("L") else "",
                                                  format(matched, ","), " | ".join(cells)))
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--snapshot")
    ap.add_argument("--colonnade")
    ap.add_argument("--threads", default=str(os.cpu_count()), help="comma-separated thread counts")
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--engines", default="polars,talib,duckdb")
    ap.add_argument("--queries", default=",".join(QUERIES))
    ap.add_argument("--json")
    ap.add_argument("--bench-json", help="colonnade-bench --suite indicators --json FILE, embedded in --json")
    ap.add_argument("--size", default="")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    a = ap.parse_args()
    queries = [q for q in a.queries.split(",") if q]
    unknown = [q for q in queries if q not in QUERIES]
    if unknown:
        sys.exit("indicators: unknown query %s (known: %s)" % (", ".join(unknown), ", ".join(QUERIES)))
    threads_list = [int(t) for t in a.threads.split(",")]
    if a.worker:
        json.dump(WORKERS[a.worker](a.csv, threads_list[0], a.repeat, queries), sys.stdout)
        return
    load_start = peers.loadavg()
    started = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())
    results = []
    if a.colonnade:
        results.append(run_colonnade(a.colonnade, a.snapshot, threads_list, a.repeat, queries))
    for engine in [e for e in a.engines.split(",") if e]:
        mine = [q for q in queries if q in PEER_QUERIES[engine]]
        if not mine:
            continue
        # TA-Lib is single-threaded; DuckDB (I3 and S3's exact decimal answer, slow) runs once, at the most threads.
        per_thread = [1] if engine == "talib" else [max(threads_list)] if engine == "duckdb" else threads_list
        runs = []
        for t in per_thread:
            r = run_worker(engine, a.csv, t, a.repeat, mine)
            runs += r["runs"]
        r["runs"] = runs
        results.append(r)
    load_end = peers.loadavg()
    mismatches = check(results)
    print("load average (1 min) at start / end: %s / %s" % (load_start, load_end))
    print(render(results, threads_list))
    for line in mismatches:
        print(line)
    if a.json:
        data = dict(suite="indicators", size=a.size, started=started, machine=peers.machine(),
                    load_start=load_start, load_end=load_end, queries=QUERIES, results=results,
                    agree=not mismatches, mismatches=mismatches)
        if a.bench_json and os.path.exists(a.bench_json):
            with open(a.bench_json) as f:
                data["colonnade_bench"] = json.load(f)
        with open(a.json, "w") as f:
            json.dump(data, f, indent=1)
            f.write("\n")
    sys.exit(1 if mismatches else 0)


if __name__ == "__main__":
    main()
