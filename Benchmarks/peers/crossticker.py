#!/usr/bin/env python3
"""Issue 31's across-ticker questions in Colonnade, Polars and DuckDB on the same CSV, agreeing
on answers, with each engine's in-process query time (Colonnade's `query_ms` from --timing).

    crossticker.py --csv quotes.csv --snapshot quotes.snapshot --colonnade .build/release/colonnade \
                   [--threads N] [--repeat R] [--json FILE]

X1 momentum decile today: xpct(pct_change(close, 250)) > 0.9 --on latest
    Polars: pct change with a zero or NaN base as null, `.rank("min").over("date")` over the
    non-null values, (rank - 1) / (count - 1); DuckDB: percent_rank() OVER (PARTITION BY date
    ORDER BY x) over the rows where x IS NOT NULL; both then keep each ticker's last row.
X2 relative strength: close / ref(close, FIRST) > mmax(close / ref(close, FIRST), 50)
    a join on date with the first ticker's closes, then a 50-row window per ticker.
X3 breadth: high >= mmax(high, 252), counted per date.
X4 weekly bars: first(open), max(high), min(low), last(close), sum(volume) per ticker and week.
Prints one line per engine and question, MISMATCH lines when answers differ (exit status 1), and
the load average.
"""
import argparse
import json
import os
import statistics
import subprocess
import sys
import time


# The peers suite's repeat budget: a run stops repeating after at least MIN_RUNS timed runs once
# they have taken REPEAT_BUDGET_S seconds.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import MIN_RUNS, REPEAT_BUDGET_S  # noqa: E402


def timed(fn, repeat):
    fn()  # warm-up
    times, result = [], None
    for _ in range(repeat):
        t = time.perf_counter()
        result = fn()
        times.append((time.perf_counter() - t) * 1e3)
        if len(times) >= MIN_RUNS and sum(times) > REPEAT_BUDGET_S * 1e3:
            break
    return statistics.median(times), result


def first_ticker(csv_path):
    with open(csv_path) as f:
        f.readline()
        return f.readline().split(",")[0]


def polars_runs(csv_path, first, repeat):
    import polars as pl
    df = pl.read_csv(csv_path, try_parse_dates=True)
    df = df.rename({n: n.lower() for n in df.columns}).select(["ticker", "date", "open", "high", "low", "close", "volume"])
    df = df.sort(["ticker", "date"])
    for c in ["open", "high", "low", "close", "volume"]:
        df = df.with_columns(pl.col(c).cast(pl.Float64).fill_nan(None))
    c = pl.col

    def x1():
        prev = c("close").shift(250).over("ticker")
        mom = pl.when(prev == 0).then(None).otherwise(c("close") / prev - 1).fill_nan(None)
        d = df.with_columns(mom.alias("m"))
        d = d.with_columns(c("m").rank("min").over("date").alias("r"), c("m").count().over("date").alias("n"))
        d = d.with_columns(pl.when(c("n") == 1).then(0.0).otherwise((c("r") - 1) / (c("n") - 1)).alias("p"))
        last = d.group_by("ticker").agg(pl.all().last())
        hit = last.filter(c("p") > 0.9)
        return hit.height, hit["close"].sum()

    ref = df.filter(c("ticker") == first).select(["date", c("close").alias("ref_close")])

    def x2():
        d = df.join(ref, on="date", how="left").sort(["ticker", "date"])
        rs = pl.when(c("ref_close") == 0).then(None).otherwise(c("close") / c("ref_close"))
        d = d.with_columns(rs.alias("rs"))
        d = d.with_columns(c("rs").rolling_max(50).over("ticker").alias("mx"))
        hit = d.filter(c("rs") > c("mx"))
        return hit.height, hit["close"].sum()

    def x3():
        d = df.with_columns(c("high").rolling_max(252).over("ticker").alias("mx")).filter(c("high") >= c("mx"))
        g = d.group_by("date").agg(pl.len().alias("n"))
        return g.height, int(g["n"].sum()), int(g["n"].max() or 0)

    def x4():
        g = df.with_columns(c("date").dt.truncate("1w").alias("week")).group_by(["ticker", "week"]).agg(
            c("open").drop_nulls().first(), c("high").max(), c("low").min(), c("close").drop_nulls().last(), c("volume").sum())
        return g.height, g["close"].sum()

    out = {}
    for name, fn in [("X1", x1), ("X2", x2), ("X3", x3), ("X4", x4)]:
        out[name] = timed(fn, repeat)
    return out


def duckdb_runs(csv_path, first, threads, repeat):
    import duckdb
    con = duckdb.connect()
    con.execute(f"SET threads = {threads}")
    con.execute(f"CREATE TABLE q AS SELECT * FROM read_csv_auto('{csv_path}') ORDER BY ticker, date")
    qs = {
        "X1": """WITH m AS (SELECT ticker, date, close,
                   CASE WHEN lag(close, 250) OVER w = 0 OR isnan(close) THEN NULL ELSE close / lag(close, 250) OVER w - 1 END AS x,
                   row_number() OVER (PARTITION BY ticker ORDER BY date DESC) AS rn
                 FROM q WINDOW w AS (PARTITION BY ticker ORDER BY date)),
               p AS (SELECT ticker, date, close, rn, percent_rank() OVER (PARTITION BY date ORDER BY x) AS p FROM m WHERE x IS NOT NULL)
               SELECT count(*), sum(close) FROM p WHERE rn = 1 AND p > 0.9""",
        "X2": f"""WITH r AS (SELECT date, close AS ref_close FROM q WHERE ticker = '{first}'),
               s AS (SELECT q.ticker, q.date, q.close, CASE WHEN r.ref_close = 0 THEN NULL ELSE q.close / r.ref_close END AS rs
                     FROM q LEFT JOIN r USING (date)),
               w AS (SELECT *, CASE WHEN count(rs) OVER w = 50 THEN max(rs) OVER w END AS mx FROM s
                     WINDOW w AS (PARTITION BY ticker ORDER BY date ROWS BETWEEN 49 PRECEDING AND CURRENT ROW))
               SELECT count(*), sum(close) FROM w WHERE rs > mx""",
        "X3": """WITH w AS (SELECT date, high, CASE WHEN count(high) OVER w = 252 THEN max(high) OVER w END AS mx FROM q
                     WINDOW w AS (PARTITION BY ticker ORDER BY date ROWS BETWEEN 251 PRECEDING AND CURRENT ROW)),
               g AS (SELECT date, count(*) AS n FROM w WHERE high >= mx GROUP BY date)
               SELECT count(*), sum(n), max(n) FROM g""",
        "X4": """WITH g AS (SELECT ticker, date_trunc('week', date) AS week, arg_min(open, date) AS o, max(high) AS h, min(low) AS l,
                     arg_max(close, date) AS c, sum(volume) AS v FROM q GROUP BY ALL)
               SELECT count(*), sum(c) FROM g""",
    }
    out = {}
    for name, sql in qs.items():
        ms, row = timed(lambda sql=sql: con.execute(sql).fetchone(), repeat)
        out[name] = (ms, tuple(row))
    return out


def colonnade_runs(binary, snapshot, first, threads, repeat):
    ref = f"close / ref(close, '{first}')"
    runs = {
        "X1": ["--where", "xpct(pct_change(close, 250)) > 0.9", "--on", "latest", "--agg", "count(*),sum(close)", "--format", "csv"],
        "X2": ["--where", f"{ref} > mmax({ref}, 50)", "--agg", "count(*),sum(close)", "--format", "csv"],
        "X3": ["--where", "high >= mmax(high, 252)", "--count", "--by", "date", "--format", "csv"],
        "X4": ["--agg", "first(open),max(high),min(low),last(close),sum(volume)", "--by", "ticker,week", "--format", "csv"],
    }
    out = {}
    for name, args in runs.items():
        p = subprocess.run([binary, "filter", "--snapshot", snapshot, "--threads", str(threads), "--timing", "--repeat", str(repeat)] + args,
                           capture_output=True, text=True, check=True)
        timing = json.loads(p.stderr.strip().splitlines()[-1])
        lines = [l.split(",") for l in p.stdout.strip().splitlines()[1:]]
        if name in ("X1", "X2"):
            result = (int(float(lines[0][0])), float(lines[0][1] or 0))
        elif name == "X3":
            counts = [int(l[1]) for l in lines]
            result = (len(counts), sum(counts), max(counts) if counts else 0)
        else:
            result = (len(lines), sum(float(l[5]) for l in lines if l[5]))
        out[name] = (timing["query_ms"], result)
    return out


def agree(a, b):
    """Counts exactly, sums within 1e-9 relative."""
    return len(a) == len(b) and all(abs(float(x or 0) - float(y or 0)) <= 1e-9 * max(1.0, abs(float(x or 0))) for x, y in zip(a, b))


TARGET_RATIO = 5.0  # each question at least 5x Polars' in-process time
X1_TARGET_MS = 100.0  # on 20 M rows (size large)


def load():
    return [round(x, 2) for x in os.getloadavg()]


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--csv", required=True)
    ap.add_argument("--snapshot", required=True)
    ap.add_argument("--colonnade", required=True)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--size", default="")
    ap.add_argument("--bench-json", help="colonnade-bench --suite crossticker's JSON, carried into --json")
    ap.add_argument("--json")
    a = ap.parse_args()
    first = first_ticker(a.csv)
    load_start = load()
    results = {"colonnade": colonnade_runs(a.colonnade, a.snapshot, first, a.threads, a.repeat),
               "polars": polars_runs(a.csv, first, a.repeat),
               "duckdb": duckdb_runs(a.csv, first, a.threads, a.repeat)}
    load_end = load()
    bad = 0
    print(f"load average {load_start} at start, {load_end} at end; threads {a.threads}; first ticker {first}")
    questions = {}
    for q in ["X1", "X2", "X3", "X4"]:
        base = results["colonnade"][q]
        agreed = True
        for engine, r in results.items():
            ms, answer = r[q]
            ratio = ms / base[0] if base[0] > 0 else float("inf")
            print(f"{q} {engine:10s} {ms:10.2f} ms  ({ratio:6.1f}x Colonnade)  {answer}")
            if not agree(tuple(answer), tuple(base[1])):
                print(f"MISMATCH {q}: {engine} {answer} vs colonnade {base[1]}")
                bad += 1
                agreed = False
        polars_ratio = results["polars"][q][0] / base[0] if base[0] > 0 else float("inf")
        questions[q] = dict(colonnade_ms=base[0], polars_ms=results["polars"][q][0], duckdb_ms=results["duckdb"][q][0],
                            polars_ratio=polars_ratio, answer=list(base[1]), agree=agreed)
        print(f"{q} Colonnade is {polars_ratio:.1f}x Polars (target {TARGET_RATIO:.0f}x): {'met' if polars_ratio >= TARGET_RATIO else 'NOT met'}")
    if a.json:
        bench = None
        if a.bench_json and os.path.exists(a.bench_json):
            with open(a.bench_json) as f:
                bench = json.load(f)
        out = dict(size=a.size, threads=a.threads, repeat=a.repeat, repeat_budget_s=REPEAT_BUDGET_S, min_runs=MIN_RUNS,
                   first_ticker=first, commit=os.environ.get("COLONNADE_COMMIT", ""),
                   load_start=load_start, load_end=load_end, target_ratio=TARGET_RATIO, x1_target_ms=X1_TARGET_MS,
                   questions=questions, mismatches=bad,
                   results={k: {q: list(v) for q, v in r.items()} for k, r in results.items()},
                   bench=[r for r in (bench or {}).get("results", []) if r.get("suite") == "crossticker"])
        with open(a.json, "w") as f:
            json.dump(out, f, indent=1, default=str)
            f.write("\n")
    sys.exit(1 if bad else 0)


if __name__ == "__main__":
    main()
