#!/usr/bin/env python3
"""Issue 35: Colonnade's zstd/LZ4 Parquet and Arrow output and its Delta Lake tables, read by
pyarrow, Polars, DuckDB and delta-rs; and the zstd writers timed beside the peers'.

    lakehouse.py --colonnade BIN --snapshot SNAP --workdir DIR [--check-only] [--repeat R] [--json FILE]

Checks (always):
1. Colonnade answers Q1-Q4 and the screen S1 (`filter --agg count,sum(close)`).
2. `colonnade export` writes zstd, zstd:9 and LZ4_RAW Parquet, a month-partitioned zstd Parquet
   directory, and zstd and LZ4_FRAME Arrow IPC; pyarrow, Polars and DuckDB (Parquet) read each and
   must give Colonnade's answers (count exactly, sum(close) within 1e-9 relative). So must Spark
   (PySpark in local mode, `spark.read.parquet`, Q1-Q4 and S1 in Spark SQL) on the Parquet outputs
   when `pyspark` imports and `java` runs (`pip install pyspark` into the venv; Java 17 is on our
   machines); otherwise it says it skipped Spark and why. Delta through Spark needs delta-spark's
   jars from Maven Central, which this machine cannot reach: not run.
3. A Delta table built by create -> append -> overwrite of one year -> append (`--partition-by
   year`): delta-rs (`deltalake.DeltaTable(path, version=N)`) and Polars `scan_delta` open every
   version with the rows Colonnade says it has (`colonnade import DIR --delta-version N`), and
   answer Q1 as Colonnade does on that version.
4. SIGKILL: appends killed at each step of the commit (the test helper `SnapshotCrashWriter
   delta-append-killed-at`, built beside the colonnade binary: the shipped binary has no such
   switch) and exports killed at random moments leave a table delta-rs opens at its last committed version, with its rows.
5. Two concurrent exports into one table: every version committed once, delta-rs reads them all.

Benchmark (without --check-only): the snapshot exported as zstd Parquet and as a Delta table by
`colonnade export` (wall clock of the command: load, verify, encode, compress, write, fsync),
beside Polars write_parquet (zstd, its default), DuckDB COPY (FORMAT parquet, COMPRESSION zstd)
and delta-rs write_deltalake (zstd), in-process on a table already in memory, each to the page
cache and with fsync, at the same thread count; bytes of each output; appending one day to the
Delta table. Load averages with every figure.

Exit status 0 when everything agrees, 1 on a MISMATCH, 2 when set-up failed.
"""
import argparse
import datetime
import json
import os
import random
import shutil
import signal
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import DATE_FROM, DATE_TO, QUERIES as ALL_QUERIES, SQL_WHERE, SCREEN_SQL, TICKERS, loadavg, machine  # noqa: E402
from interop import duckdb_answers, polars_answers, pyarrow_answers, read_polars, read_pyarrow, size_of  # noqa: E402

QUERIES = {q: ALL_QUERIES[q] for q in ("Q1", "Q2", "Q3", "Q4", "S1")}
failures = []


def run(cmd, env=None, check=True):
    p = subprocess.run(cmd, capture_output=True, text=True, env=env)
    if check and p.returncode != 0:
        print("lakehouse: %s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, p.stderr), file=sys.stderr)
        sys.exit(2)
    return p


def colonnade_answers(binary, snapshot, queries=QUERIES):
    out = {}
    for q, expr in queries.items():
        p = run([binary, "filter", "--snapshot", snapshot, "--where", expr, "--agg", "count,sum(close)", "--format", "csv"])
        row = [l for l in p.stdout.splitlines() if l.strip()][-1].split(",")
        out[q] = (int(float(row[0])), float(row[1]) if row[1] not in ("", "null") else 0.0)
    return out


def colonnade_count(binary, snapshot):
    p = run([binary, "filter", "--snapshot", snapshot, "--agg", "count", "--format", "csv"])
    return int(float([l for l in p.stdout.splitlines() if l.strip()][-1]))


def agree(a, b):
    return a[0] == b[0] and abs(a[1] - b[1]) <= 1e-9 * max(1.0, abs(a[1]), abs(b[1]))


def compare(label, rows, answers, expected_rows, expected):
    ok = rows == expected_rows
    if not ok:
        failures.append("%s: %d rows, Colonnade %d" % (label, rows, expected_rows))
    for q, want in expected.items():
        if q not in answers:
            continue
        if not agree(answers[q], want):
            ok = False
            failures.append("%s %s: %r, Colonnade %r" % (label, q, answers[q], want))
    print("  %-48s %s" % (label, "agrees" if ok else "MISMATCH"))


def s1_polars(df):
    import polars as pl
    c = pl.col
    if df.schema["ticker"] != pl.String:
        df = df.with_columns(c("ticker").cast(pl.String))
    df = df.sort("ticker", "date")
    n, s = df.lazy().filter(c("open") > 1.03 * c("close").shift(1).over("ticker")).select(pl.len(), c("close").sum()).collect().row(0)
    return int(n), float(s or 0.0)


def s1_duckdb(source):
    import duckdb
    con = duckdb.connect(":memory:")
    n, s = con.execute(SCREEN_SQL["S1"].format(table=source)).fetchone()
    return int(n), float(s or 0.0)


def check_files(binary, snapshot, workdir, answers, rows):
    print("zstd and LZ4 Parquet and Arrow IPC, read by pyarrow, Polars, DuckDB:")
    outputs = [
        ("parquet zstd", ["--format", "parquet", "--compression", "zstd"], "q-zstd.parquet", "parquet"),
        ("parquet zstd:9", ["--format", "parquet", "--compression", "zstd:9", "--row-group-rows", "100000"], "q-zstd9.parquet", "parquet"),
        ("parquet lz4 (LZ4_RAW)", ["--format", "parquet", "--compression", "lz4"], "q-lz4.parquet", "parquet"),
        ("parquet zstd, month partitions", ["--format", "parquet", "--compression", "zstd", "--partition-by", "month"], "q-month", "month"),
        ("arrow zstd", ["--format", "arrow", "--compression", "zstd"], "q-zstd.arrow", "arrow"),
        ("arrow lz4 (LZ4_FRAME)", ["--format", "arrow", "--compression", "lz4"], "q-lz4.arrow", "arrow"),
    ]
    spark = spark_session()
    for label, args, name, kind in outputs:
        path = os.path.join(workdir, name)
        run([binary, "export", "--snapshot", snapshot, "--output", path] + args)
        read_kind = "dir" if kind == "month" else kind
        if kind == "month":
            table = read_pyarrow_month(path)
        else:
            table = read_pyarrow(path, read_kind)
        n, a = pyarrow_answers(table)
        compare("pyarrow  " + label, n, a, rows, {q: v for q, v in answers.items() if q != "S1"})
        import polars as pl
        df = pl.read_parquet(os.path.join(path, "**", "*.parquet"), hive_partitioning=True) if kind == "month" else read_polars(path, read_kind)
        n, a = polars_answers(df)
        a["S1"] = s1_polars(df)
        compare("Polars   " + label, n, a, rows, answers)
        if kind in ("parquet", "month"):
            if kind == "month":
                source = "read_parquet('%s', hive_partitioning = true)" % os.path.join(path, "*", "*", "*.parquet")
                n, a = duckdb_answers_source(source)
            else:
                source = "read_parquet('%s')" % path
                n, a = duckdb_answers(path, "parquet")
            a["S1"] = s1_duckdb(source)
            compare("DuckDB   " + label, n, a, rows, answers)
            if spark is not None:
                n, a = spark_answers(spark, path)
                compare("Spark    " + label, n, a, rows, answers)
        # And back into Colonnade.
        back = os.path.join(workdir, "back-%s.snapshot" % name.replace("/", "_"))
        run([binary, "import", path, "--snapshot", back])
        compare("Colonnade " + label, colonnade_count(binary, back), colonnade_answers(binary, back), rows, answers)
        os.remove(back)
    if spark is not None:
        print("  (Spark %s, Java: %s)" % (spark.version, subprocess.run(["java", "-version"], capture_output=True, text=True).stderr.splitlines()[0]))
        spark.stop()


def spark_session():
    """A local PySpark session on every core, or None (with the reason printed) without pyspark or Java."""
    try:
        from pyspark.sql import SparkSession
    except ImportError:
        print("  Spark: skipped (pyspark is not installed in the venv: pip install pyspark)")
        return None
    if shutil.which("java") is None:
        print("  Spark: skipped (no java on PATH)")
        return None
    spark = (SparkSession.builder.master("local[%d]" % (os.cpu_count() or 1)).appName("colonnade-lakehouse")
             .config("spark.ui.enabled", "false").config("spark.ui.showConsoleProgress", "false").config("spark.sql.session.timeZone", "UTC").getOrCreate())
    spark.sparkContext.setLogLevel("ERROR")
    return spark


def spark_answers(spark, path):
    """Rows, Q1-Q4 and S1 from Spark SQL over the Parquet file or Hive directory at path."""
    spark.read.parquet(path).createOrReplaceTempView("quotes")
    rows = spark.sql("SELECT count(*) FROM quotes").collect()[0][0]
    out = {}
    for q in ("Q1", "Q2", "Q3", "Q4"):
        sql = "SELECT count(*), sum(close) FROM quotes WHERE " + SQL_WHERE[q].format(
            d0="DATE '%s'" % DATE_FROM, d1="DATE '%s'" % DATE_TO)
        n, s = spark.sql(sql).collect()[0]
        out[q] = (int(n), float(s) if s is not None else 0.0)
    n, s = spark.sql(SCREEN_SQL["S1"].format(table="quotes")).collect()[0]
    out["S1"] = (int(n), float(s) if s is not None else 0.0)
    return int(rows), out


def read_pyarrow_month(path):
    import pyarrow.dataset as ds
    return ds.dataset(path, format="parquet", partitioning="hive").to_table()


def duckdb_answers_source(source):
    import duckdb
    con = duckdb.connect(":memory:")
    rows = con.execute("SELECT count(*) FROM %s" % source).fetchone()[0]
    out = {}
    for q in ("Q1", "Q2", "Q3", "Q4"):
        sql = "SELECT count(*), sum(close) FROM %s WHERE " % source + SQL_WHERE[q].format(
            d0="DATE '%s'" % DATE_FROM, d1="DATE '%s'" % DATE_TO)
        n, s = con.execute(sql).fetchone()
        out[q] = (int(n), float(s) if s is not None else 0.0)
    return rows, out


def year_range(binary, snapshot, workdir):
    import pyarrow.parquet as pq
    path = os.path.join(workdir, "dates.parquet")
    run([binary, "export", "--snapshot", snapshot, "--format", "parquet", "--columns", "close", "--output", path])
    t = pq.read_table(path, columns=["date"])
    dates = t["date"].to_pylist()
    os.remove(path)
    return min(dates).year, max(dates).year


def delta_counts(path, version):
    import deltalake
    import polars as pl
    dt = deltalake.DeltaTable(path, version=version)
    n_rs = dt.to_pyarrow_table().num_rows
    n_pl = pl.scan_delta(path, version=version).select(pl.len()).collect().item()
    return dt, n_rs, n_pl


def colonnade_delta(binary, path, version, workdir):
    snap = os.path.join(workdir, "delta-v%d.snapshot" % version)
    if os.path.exists(snap):
        os.remove(snap)
    run([binary, "import", path, "--delta-version", str(version), "--snapshot", snap])
    out = colonnade_count(binary, snap), colonnade_answers(binary, snap, {"Q1": QUERIES["Q1"]})
    os.remove(snap)
    return out


def log_versions(path):
    log = os.path.join(path, "_delta_log")
    return sorted(int(n[:20]) for n in os.listdir(log) if len(n) == 25 and n.endswith(".json") and n[:20].isdigit())


def check_delta(binary, snapshot, workdir):
    import polars as pl
    print("Delta table: create -> append -> overwrite a year -> append, read by delta-rs and Polars scan_delta:")
    first, last = year_range(binary, snapshot, workdir)
    path = os.path.join(workdir, "quotes_delta")
    steps = [
        ("create", ["--where", "date < %d-07-01" % first]),
        ("append", ["--mode", "append", "--where", "%d-07-01 <= date <= %d-12-31" % (first, first)]),
        ("overwrite %d" % first, ["--mode", "overwrite", "--where", "date <= %d-12-31 and close > 50" % first]),
        ("append", ["--mode", "append", "--where", "date >= %d-01-01" % (first + 1)]),
    ]
    for _, args in steps:
        run([binary, "export", "--snapshot", snapshot, "--format", "delta", "--partition-by", "year", "--output", path] + args)
    for version, (label, _) in enumerate(steps):
        expected_rows, expected = colonnade_delta(binary, path, version, workdir)
        dt, n_rs, n_pl = delta_counts(path, version)
        compare("delta-rs v%d (%s)" % (version, label), n_rs, {}, expected_rows, {})
        compare("Polars scan_delta v%d" % version, n_pl, {}, expected_rows, {})
        df = pl.scan_delta(path, version=version).filter((pl.col("high") > 80) & (pl.col("high") < 83)) \
            .select(pl.len(), pl.col("close").sum()).collect().row(0)
        compare("Polars scan_delta v%d Q1" % version, expected_rows, {"Q1": (int(df[0]), float(df[1] or 0.0))}, expected_rows, expected)
    import deltalake
    if deltalake.DeltaTable(path).version() != len(steps) - 1:
        failures.append("delta-rs latest version %d, expected %d" % (deltalake.DeltaTable(path).version(), len(steps) - 1))
    return path, first


def check_kills(binary, snapshot, workdir, first):
    import deltalake
    print("SIGKILL during commits, then delta-rs opens the table:")
    path = os.path.join(workdir, "killed_delta")
    run([binary, "export", "--snapshot", snapshot, "--format", "delta", "--partition-by", "year", "--output", path,
         "--where", "date <= %d-03-31" % first])
    rng = random.Random(35)
    day = datetime.date(first, 4, 1)
    attempts = []
    helper = os.path.join(os.path.dirname(binary), "SnapshotCrashWriter")
    for step in ["data", "temporary", "linked", "synced"]:
        attempts.append(("at step '%s'" % step, step, None))
    for i in range(8):
        attempts.append(("after %.0f ms" % 0, None, rng.uniform(0.05, 1.5)))
    for label, step, delay in attempts:
        before = log_versions(path)[-1]
        d0 = day
        day = day + datetime.timedelta(days=7)
        where = "%s <= date < %s" % (d0.isoformat(), day.isoformat())
        if step is not None:
            if not os.access(helper, os.X_OK):
                print("  %s: not run (no %s; swift build builds it)" % (label, helper))
                continue
            cmd = [helper, "delta-append-killed-at", step, snapshot, where, path, "year"]
        else:
            cmd = [binary, "export", "--snapshot", snapshot, "--format", "delta", "--partition-by", "year", "--output", path,
                   "--mode", "append", "--where", where]
        p = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        if delay is not None:
            time.sleep(delay)
            p.send_signal(signal.SIGKILL)
            label = "after %.0f ms" % (delay * 1000)
        p.wait()
        versions = log_versions(path)
        latest = versions[-1]
        ok = latest in (before, before + 1) and versions == list(range(latest + 1))
        dt = deltalake.DeltaTable(path)
        n_rs = dt.to_pyarrow_table().num_rows
        expected_rows, _ = colonnade_delta(binary, path, latest, workdir)
        ok = ok and dt.version() == latest and n_rs == expected_rows
        if not ok:
            failures.append("killed %s: versions %r, delta-rs version %d with %d rows, Colonnade %d" % (label, versions, dt.version(), n_rs, expected_rows))
        print("  killed %-20s exit %-4s -> version %d, %d rows: %s" % (label, p.returncode, latest, n_rs, "agrees" if ok else "MISMATCH"))
    # Leftover temporaries are hidden ('.'-named) and never a version.
    return path


def check_concurrent(binary, snapshot, path, first):
    import deltalake
    print("Two concurrent exports into one table:")
    before = log_versions(path)[-1]
    cmds = [[binary, "export", "--snapshot", snapshot, "--format", "delta", "--partition-by", "year", "--output", path,
             "--mode", "append", "--where", "date = %d-12-%02d" % (first, d)] for d in (28, 29)]
    procs = [subprocess.Popen(c, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE) for c in cmds]
    codes = [p.wait() for p in procs]
    versions = log_versions(path)
    ok = codes == [0, 0] and versions == list(range(before + 3)) and deltalake.DeltaTable(path).version() == before + 2
    if not ok:
        failures.append("concurrent exports: exits %r, versions %r" % (codes, versions))
    print("  %-48s %s" % ("versions %d and %d, one commit each" % (before + 1, before + 2), "agrees" if ok else "MISMATCH"))


# ------------------------------------------------------------------------------------------------
# Benchmark

def fsync_tree(path):
    for d, _, fs in os.walk(path) if os.path.isdir(path) else [(os.path.dirname(path), [], [os.path.basename(path)])]:
        for f in fs:
            fd = os.open(os.path.join(d, f), os.O_RDONLY)
            os.fsync(fd)
            os.close(fd)


def settle(path):
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)
    os.sync()


# The peers suite's repeat budget: a run stops repeating after at least MIN_RUNS timed runs once
# they have taken REPEAT_BUDGET_S seconds.
sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import MIN_RUNS, REPEAT_BUDGET_S  # noqa: E402


def timed(fn, path, repeat, fsync=False):
    times = []
    for _ in range(repeat):
        settle(path)
        t0 = time.perf_counter()
        fn(path)
        if fsync:
            fsync_tree(path)
        times.append(time.perf_counter() - t0)
        if len(times) >= MIN_RUNS and sum(times) > REPEAT_BUDGET_S:
            break
    return statistics.median(times)


def bench(binary, snapshot, workdir, repeat, threads):
    import duckdb
    import polars as pl
    import pyarrow as pa
    import deltalake
    rows = colonnade_count(binary, snapshot)
    results = {"rows": rows, "threads": threads, "loadavg_before": loadavg(), "writers": [], "repeat": repeat,
               "repeat_budget_s": REPEAT_BUDGET_S, "min_runs": MIN_RUNS}
    arrow = os.path.join(workdir, "bench.arrow")
    run([binary, "export", "--snapshot", snapshot, "--format", "arrow", "--output", arrow])
    table = read_pyarrow(arrow, "arrow").combine_chunks()
    table = table.set_column(0, "ticker", table["ticker"].cast(pa.string()))
    df = pl.from_arrow(table).rechunk()
    con = duckdb.connect(":memory:")
    con.execute("SET threads = %d" % threads)
    con.register("arrow_view", table)
    con.execute("CREATE TABLE quotes AS SELECT * FROM arrow_view")
    con.unregister("arrow_view")
    os.remove(arrow)

    def colonnade(args):
        def w(path):
            run([binary, "export", "--snapshot", snapshot, "--output", path] + args)
        return w
    writers = [
        ("colonnade export parquet zstd (CLI, fsync)", colonnade(["--format", "parquet", "--compression", "zstd"]), True, "file"),
        ("colonnade export parquet zstd:3 (CLI, fsync)", colonnade(["--format", "parquet", "--compression", "zstd:3"]), True, "file"),
        ("colonnade export delta (CLI, fsync)", colonnade(["--format", "delta"]), True, "dir"),
        ("colonnade export delta --partition-by year (CLI, fsync)", colonnade(["--format", "delta", "--partition-by", "year"]), True, "dir"),
        ("Polars write_parquet (zstd default)", lambda p: df.write_parquet(p), False, "file"),
        ("DuckDB COPY (FORMAT parquet, COMPRESSION zstd)",
         lambda p: con.execute("COPY quotes TO '%s' (FORMAT parquet, COMPRESSION zstd)" % p), False, "file"),
        ("delta-rs write_deltalake (zstd)",
         lambda p: deltalake.write_deltalake(p, table, writer_properties=deltalake.WriterProperties(compression="ZSTD")), False, "dir"),
    ]
    for label, fn, is_cli, kind in writers:
        path = os.path.join(workdir, "bench-out" + (".parquet" if kind == "file" else ""))
        la0 = loadavg()
        if is_cli:
            t = timed(fn, path, repeat)
            tf = t
        else:
            t = timed(fn, path, repeat)
            tf = timed(fn, path, repeat, fsync=True)
        size = size_of(path)
        entry = {"writer": label, "seconds": t, "seconds_fsync": tf, "bytes": size, "mb_per_s_of_file": size / t / 1e6,
                 "loadavg": [la0, loadavg()]}
        results["writers"].append(entry)
        print("  %-58s %7.2f s  (fsync %7.2f s)  %8.1f MB  %6.1f MB/s of file   load %s" % (
            label, t, tf, size / 1e6, size / t / 1e6, la0))
        settle(path)
    # Appending one day to a Delta table of every row.
    path = os.path.join(workdir, "append_delta")
    settle(path)
    p = run([binary, "export", "--snapshot", snapshot, "--format", "parquet", "--columns", "close", "--output", os.path.join(workdir, "d.parquet")])
    import pyarrow.parquet as pq
    last = max(pq.read_table(os.path.join(workdir, "d.parquet"), columns=["date"])["date"].to_pylist())
    os.remove(os.path.join(workdir, "d.parquet"))
    run([binary, "export", "--snapshot", snapshot, "--format", "delta", "--partition-by", "year", "--output", path,
         "--where", "date < %s" % last.isoformat()])
    la0 = loadavg()
    t0 = time.perf_counter()
    run([binary, "export", "--snapshot", snapshot, "--format", "delta", "--partition-by", "year", "--output", path,
         "--mode", "append", "--where", "date = %s" % last.isoformat()])
    t = time.perf_counter() - t0
    results["append_one_day_seconds"] = t
    print("  %-58s %7.2f s   load %s" % ("colonnade export delta --mode append, one day (%s)" % last, t, la0))
    settle(path)
    results["loadavg_after"] = loadavg()
    return results


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--colonnade", required=True)
    ap.add_argument("--snapshot", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--check-only", action="store_true")
    ap.add_argument("--bench-only", action="store_true", help="skip the checks (a large table)")
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", type=int, default=os.cpu_count())
    ap.add_argument("--json")
    ap.add_argument("--bench-json", help="colonnade-bench --suite lakehouse --json FILE (Colonnade in process), embedded in --json")
    args = ap.parse_args()
    try:
        import deltalake  # noqa: F401
        import duckdb  # noqa: F401
        import polars  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as e:
        print("lakehouse: %s (run Benchmarks/peers/run.sh once, or pip install -r requirements.txt)" % e, file=sys.stderr)
        sys.exit(2)
    os.makedirs(args.workdir, exist_ok=True)
    print("machine: %s; load average %s" % (machine(), loadavg()))
    if not args.bench_only:
        answers = colonnade_answers(args.colonnade, args.snapshot)
        rows = colonnade_count(args.colonnade, args.snapshot)
        print("Colonnade: %d rows; %s" % (rows, ", ".join("%s %d" % (q, a[0]) for q, a in answers.items())))
        check_files(args.colonnade, args.snapshot, args.workdir, answers, rows)
        path, first = check_delta(args.colonnade, args.snapshot, args.workdir)
        killed = check_kills(args.colonnade, args.snapshot, args.workdir, first)
        check_concurrent(args.colonnade, args.snapshot, killed, first)
    report = {"checks_failed": failures}
    if not args.check_only:
        print("Export with zstd, %d thread(s):" % args.threads)
        report["bench"] = bench(args.colonnade, args.snapshot, args.workdir, args.repeat, args.threads)
    if args.bench_json and os.path.exists(args.bench_json):
        with open(args.bench_json) as fh:
            report["colonnade_bench"] = json.load(fh)
    if args.json:
        with open(args.json, "w") as fh:
            json.dump(report, fh, indent=1)
    if failures:
        print("MISMATCH:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("all readers agree")


if __name__ == "__main__":
    main()
