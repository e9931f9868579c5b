#!/usr/bin/env python3
"""Colonnade's Arrow IPC and Parquet output, read by pyarrow, Polars and DuckDB; and the peers'
own writers and readers timed on the same data.

    interop.py --colonnade BIN --snapshot SNAP --workdir DIR [--repeat R] [--no-bench] [--json FILE]

1. Colonnade answers Q1-Q4 (count(*), sum(close)) on the snapshot (`colonnade filter --agg`).
2. `colonnade export` writes the snapshot as .arrow, .arrows, Parquet (uncompressed and Snappy)
   and a year-partitioned Parquet directory (each export timed: wall clock of the whole command,
   so it includes starting the process and loading and verifying the snapshot).
3. pyarrow, Polars and DuckDB read every one of those (DuckDB: the Parquet ones; it reads Arrow
   IPC only through an extension it would download) and answer Q1-Q4; every answer must equal
   Colonnade's (count exactly, sum(close) within a relative 1e-9). Row counts are compared too.
4. Unless --no-bench: pyarrow write_feather/write_parquet, Polars write_ipc/write_parquet and
   DuckDB COPY ... TO (FORMAT parquet) write the same table (read from our .arrow), and each
   reads our uncompressed Parquet back; MB/s of the file each writes or reads. The uncompressed
   writers are timed twice: to the page cache (as colonnade-bench's in-process export, no fsync)
   and saved (write + fsync, as `colonnade export` saves).

Before every timed write (not timed) the previous output is removed and the page cache's dirty
pages are written back (`sync`), so no run is throttled by the one before it.

--bench-json FILE: colonnade-bench --suite interop's report of the same run, copied into --json
so that one file holds everything Benchmarks/report.py renders.

Exit status 0 when every reader agrees with Colonnade, 1 on a MISMATCH, 2 when set-up failed.
The in-process export/import figures of Colonnade itself come from
`colonnade-bench --suite interop` (interop.sh runs both in the same run).
"""
import argparse
import datetime
import json
import os
import shutil
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import DATE_FROM, DATE_TO, QUERIES as ALL_QUERIES, SQL_WHERE, TICKERS, agree, machine, loadavg  # noqa: E402

# The range queries only: peers.QUERIES also holds the screens (S1-S4), which the readers here do not run.
QUERIES = {q: ALL_QUERIES[q] for q in ("Q1", "Q2", "Q3", "Q4")}


def colonnade_answers(binary, snapshot):
    out = {}
    for q, expr in QUERIES.items():
        cmd = [binary, "filter", "--snapshot", snapshot, "--where", expr, "--agg", "count,sum(close)", "--format", "csv"]
        p = subprocess.run(cmd, capture_output=True, text=True)
        if p.returncode != 0:
            sys.exit("interop: colonnade failed (exit %d): %s\n%s" % (p.returncode, " ".join(cmd), p.stderr))
        lines = [l for l in p.stdout.splitlines() if l.strip()]
        row = lines[-1].split(",")
        out[q] = (int(float(row[0])), float(row[1]) if row[1] not in ("", "null") else 0.0)
    return out


def colonnade_rows(binary, snapshot):
    p = subprocess.run([binary, "filter", "--snapshot", snapshot, "--agg", "count", "--format", "csv"],
                       capture_output=True, text=True)
    if p.returncode != 0:
        sys.exit("interop: colonnade filter --agg count failed: %s" % p.stderr)
    return int(float([l for l in p.stdout.splitlines() if l.strip()][-1]))


def settle(path):
    """Untimed, before a timed write: remove the last output and write back dirty pages."""
    if os.path.isdir(path):
        shutil.rmtree(path)
    elif os.path.exists(path):
        os.remove(path)
    os.sync()


def export(binary, snapshot, args, repeat, output):
    """Runs `colonnade export` `repeat` times; returns the median seconds."""
    times = []
    for _ in range(repeat):
        cmd = [binary, "export", "--snapshot", snapshot] + args
        settle(output)
        t0 = time.perf_counter()
        p = subprocess.run(cmd, capture_output=True, text=True)
        times.append(time.perf_counter() - t0)
        if p.returncode != 0:
            sys.exit("interop: %s failed (exit %d):\n%s" % (" ".join(cmd), p.returncode, p.stderr))
    return statistics.median(times)


def size_of(path):
    if os.path.isdir(path):
        return sum(os.path.getsize(os.path.join(d, f)) for d, _, fs in os.walk(path) for f in fs)
    return os.path.getsize(path)


# ------------------------------------------------------------------------------------------------
# Readers: each returns (rows, {query: (count, sum)}).

def pyarrow_answers(table):
    import pyarrow as pa
    import pyarrow.compute as pc
    import pyarrow.dataset as ds
    if "ticker" in table.column_names and pa.types.is_dictionary(table.schema.field("ticker").type):
        table = table.set_column(table.column_names.index("ticker"), "ticker", pc.cast(table["ticker"], pa.string()))
    f = ds.field
    d0, d1 = datetime.date.fromisoformat(DATE_FROM), datetime.date.fromisoformat(DATE_TO)
    exprs = {
        "Q1": (f("high") > 80) & (f("high") < 83),
        "Q2": (f("high") > 80) & (f("high") < 83) & (f("low") > 78) & (f("low") < 82)
              & (f("adj_high") > 75) & (f("adj_high") < 85) & (f("adj_low") > 70) & (f("adj_low") < 75),
        "Q3": f("ticker").isin(TICKERS) & (f("date") >= pa.scalar(d0, pa.date32())) & (f("date") <= pa.scalar(d1, pa.date32()))
              & (f("volume") > 1000000) & (f("close") > 20) & (f("close") < 200),
        "Q4": ((f("close") < 20) | (f("close") > 500)) & ~(f("volume") < 500000),
    }
    out = {}
    for q, e in exprs.items():
        hit = table.filter(e)
        s = pc.sum(hit["close"]).as_py()
        out[q] = (hit.num_rows, float(s) if s is not None else 0.0)
    return table.num_rows, out


def read_pyarrow(path, kind):
    import pyarrow.dataset as ds
    import pyarrow.ipc as ipc
    import pyarrow.parquet as pq
    if kind == "arrow":
        with open(path, "rb") as fh:
            return ipc.open_file(fh).read_all()
    if kind == "arrows":
        with open(path, "rb") as fh:
            return ipc.open_stream(fh).read_all()
    if kind == "dir":
        return ds.dataset(path, format="parquet", partitioning="hive").to_table()
    return pq.read_table(path)


def polars_answers(df):
    import polars as pl
    c = pl.col
    if df.schema["ticker"] != pl.String:
        df = df.with_columns(c("ticker").cast(pl.String))
    d0, d1 = datetime.date.fromisoformat(DATE_FROM), datetime.date.fromisoformat(DATE_TO)
    exprs = {
        "Q1": (c("high") > 80) & (c("high") < 83),
        "Q2": (c("high") > 80) & (c("high") < 83) & (c("low") > 78) & (c("low") < 82)
              & (c("adj_high") > 75) & (c("adj_high") < 85) & (c("adj_low") > 70) & (c("adj_low") < 75),
        "Q3": c("ticker").is_in(TICKERS) & (c("date") >= d0) & (c("date") <= d1)
              & (c("volume") > 1000000) & (c("close") > 20) & (c("close") < 200),
        "Q4": ((c("close") < 20) | (c("close") > 500)) & ~(c("volume") < 500000),
    }
    out = {}
    for q, e in exprs.items():
        n, s = df.lazy().filter(e).select(pl.len(), c("close").sum()).collect().row(0)
        out[q] = (int(n), float(s) if s is not None else 0.0)
    return df.height, out


def read_polars(path, kind):
    import polars as pl
    if kind == "arrow":
        return pl.read_ipc(path)
    if kind == "arrows":
        return pl.read_ipc_stream(path)
    if kind == "dir":
        return pl.read_parquet(os.path.join(path, "**", "*.parquet"), hive_partitioning=True)
    return pl.read_parquet(path)


def duckdb_answers(path, kind):
    import duckdb
    con = duckdb.connect(":memory:")
    if kind == "dir":
        src = "read_parquet('%s', hive_partitioning = true)" % os.path.join(path, "*", "*.parquet")
    else:
        src = "read_parquet('%s')" % path
    rows = con.execute("SELECT count(*) FROM %s" % src).fetchone()[0]
    out = {}
    for q in QUERIES:
        where = SQL_WHERE[q]
        sql = "SELECT count(*), sum(close) FROM %s WHERE " % src + where.format(d0="DATE '%s'" % DATE_FROM,
                                                                                d1="DATE '%s'" % DATE_TO)
        n, s = con.execute(sql).fetchone()
        out[q] = (int(n), float(s) if s is not None else 0.0)
    return rows, out


# ------------------------------------------------------------------------------------------------
# The peers' writers and readers on the same table.

def timed(fn, repeat, prepare=None):
    if prepare:
        prepare()
    fn()
    times = []
    for _ in range(repeat):
        if prepare:
            prepare()
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return statistics.median(times)


def fsynced(write):
    """`write(path)`, then fsync of the file: saved, as `colonnade export` saves."""
    def run(p):
        write(p)
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
        finally:
            os.close(fd)
    return run


def bench_peers(arrow_path, our_parquet, workdir, repeat):
    import duckdb
    import polars as pl
    import pyarrow as pa
    import pyarrow.feather as feather
    import pyarrow.parquet as pq
    table = read_pyarrow(arrow_path, "arrow").combine_chunks()
    df = pl.from_arrow(table).rechunk()
    con = duckdb.connect(":memory:")
    con.register("arrow_view", table)
    con.execute("CREATE TABLE quotes AS SELECT * FROM arrow_view")
    con.unregister("arrow_view")
    out = os.path.join(workdir, "peer-out")
    writers = [
        ("pyarrow", "write_feather (uncompressed)", lambda p: feather.write_feather(table, p, compression="uncompressed")),
        ("pyarrow", "write_feather (default: lz4)", lambda p: feather.write_feather(table, p)),
        # The like-for-like row: Colonnade writes PLAIN pages without dictionaries, and so does this one.
        ("pyarrow", "write_parquet (uncompressed, plain: no dictionary)",
         lambda p: pq.write_table(table, p, compression="none", use_dictionary=False)),
        ("pyarrow", "write_parquet (uncompressed)", lambda p: pq.write_table(table, p, compression="none")),
        ("pyarrow", "write_parquet (default: snappy)", lambda p: pq.write_table(table, p)),
        ("Polars", "write_ipc (uncompressed)", lambda p: df.write_ipc(p, compression="uncompressed")),
        ("Polars", "write_parquet (uncompressed)", lambda p: df.write_parquet(p, compression="uncompressed")),
        ("Polars", "write_parquet (default: zstd)", lambda p: df.write_parquet(p)),
        ("DuckDB", "COPY TO parquet (uncompressed)", lambda p: con.execute(
            "COPY quotes TO '%s' (FORMAT parquet, COMPRESSION uncompressed)" % p)),
        ("DuckDB", "COPY TO parquet (default: snappy)", lambda p: con.execute("COPY quotes TO '%s' (FORMAT parquet)" % p)),
    ]
    writers += [(engine, what + ", saved (+ fsync)", fsynced(fn)) for engine, what, fn in writers if "(uncompressed)" in what]
    results = []
    for engine, what, fn in writers:
        s = timed(lambda fn=fn: fn(out), repeat, prepare=lambda: settle(out))
        size = os.path.getsize(out)
        results.append(dict(engine=engine, what=what, seconds=s, bytes=size, mbps=size / s / 1e6, loadavg=loadavg(),
                            kind="write", saved="saved" in what))
        os.remove(out)
    size = os.path.getsize(our_parquet)
    readers = [
        ("pyarrow", "read_table (our uncompressed Parquet)", lambda: pq.read_table(our_parquet)),
        ("Polars", "read_parquet (our uncompressed Parquet)", lambda: pl.read_parquet(our_parquet)),
        ("DuckDB", "CREATE TABLE AS read_parquet (ours)", lambda: con.execute(
            "CREATE OR REPLACE TABLE t2 AS SELECT * FROM read_parquet('%s')" % our_parquet)),
    ]
    for engine, what, fn in readers:
        s = timed(fn, repeat)
        results.append(dict(engine=engine, what=what, seconds=s, bytes=size, mbps=size / s / 1e6, loadavg=loadavg(),
                            kind="read", saved=False))
    versions = dict(pyarrow=pa.__version__, polars=pl.__version__, duckdb=duckdb.__version__)
    return results, versions


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--colonnade", required=True)
    ap.add_argument("--snapshot", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--no-bench", action="store_true", help="only check that every reader agrees")
    ap.add_argument("--json")
    ap.add_argument("--bench-json", help="colonnade-bench --suite interop's report of this run, copied into --json")
    ap.add_argument("--size", default="", help="the size's name, for the report")
    a = ap.parse_args()
    load_start = loadavg()
    started = datetime.datetime.now(datetime.timezone.utc).strftime("%Y-%m-%d %H:%M UTC")
    try:
        import duckdb  # noqa: F401
        import polars  # noqa: F401
        import pyarrow  # noqa: F401
    except ImportError as e:
        print("interop: %s (run Benchmarks/peers/run.sh once to create the venv)" % e, file=sys.stderr)
        return 2

    work = os.path.join(a.workdir, "interop")
    shutil.rmtree(work, ignore_errors=True)
    os.makedirs(work)
    rows = colonnade_rows(a.colonnade, a.snapshot)
    answers = colonnade_answers(a.colonnade, a.snapshot)
    outputs = [
        ("q.arrow", "arrow", ["--format", "arrow"]),
        ("q.arrows", "arrows", ["--format", "arrows"]),
        ("q.parquet", "parquet", ["--format", "parquet"]),
        ("q-snappy.parquet", "parquet", ["--format", "parquet", "--compression", "snappy"]),
        ("q-years", "dir", ["--format", "parquet", "--partition-by", "year"]),
    ]
    exports = []
    for name, kind, args in outputs:
        path = os.path.join(work, name)
        s = export(a.colonnade, a.snapshot, args + ["--output", path], 1 if a.no_bench else a.repeat, path)
        size = size_of(path)
        exports.append(dict(output=name, args=" ".join(args), seconds=s, bytes=size, mbps=size / s / 1e6, loadavg=loadavg()))

    mismatches = []
    checks = []
    for name, kind, _ in outputs:
        path = os.path.join(work, name)
        readers = [("pyarrow", lambda: pyarrow_answers(read_pyarrow(path, kind))),
                   ("Polars", lambda: polars_answers(read_polars(path, kind)))]
        if kind in ("parquet", "dir"):
            readers.append(("DuckDB", lambda: duckdb_answers(path, kind)))
        for engine, fn in readers:
            n, got = fn()
            ok = n == rows
            if not ok:
                mismatches.append("MISMATCH %s read by %s: %d rows, Colonnade has %d" % (name, engine, n, rows))
            for q in QUERIES:
                if not agree(answers[q], got[q]):
                    ok = False
                    mismatches.append("MISMATCH %s %s read by %s: count=%d sum(close)=%r, Colonnade count=%d sum(close)=%r"
                                      % (name, q, engine, got[q][0], got[q][1], answers[q][0], answers[q][1]))
            checks.append(dict(output=name, engine=engine, rows=n, answers=got, agree=ok))

    print("## Colonnade's Arrow/Parquet output read by the peers (%d rows)\n" % rows)
    print("| output | reader | rows | Q1 | Q2 | Q3 | Q4 | agrees |")
    print("|---|---|---:|---:|---:|---:|---:|---|")
    for c in checks:
        cells = " | ".join("%d / %.6g" % tuple(c["answers"][q]) for q in QUERIES)
        print("| %s | %s | %d | %s | %s |" % (c["output"], c["engine"], c["rows"], cells, "yes" if c["agree"] else "**NO**"))
    print("| (snapshot) | Colonnade | %d | %s | |\n" % (rows, " | ".join("%d / %.6g" % answers[q] for q in QUERIES)))

    print("## colonnade export (whole command: process start, snapshot load + verification, write)\n")
    print("| output | options | median s | MB | MB/s |")
    print("|---|---|---:|---:|---:|")
    for e in exports:
        print("| %s | `%s` | %.3f | %.0f | %.0f |" % (e["output"], e["args"], e["seconds"], e["bytes"] / 1e6, e["mbps"]))
    print()

    peers, versions = [], {}
    if not a.no_bench:
        peers, versions = bench_peers(os.path.join(work, "q.arrow"), os.path.join(work, "q.parquet"), work, a.repeat)
        print("## Peers on the same table (in process, median of %d, MB/s of the file written or read)\n" % a.repeat)
        print("| engine | operation | median s | MB | MB/s |")
        print("|---|---|---:|---:|---:|")
        for p in peers:
            print("| %s | %s | %.3f | %.0f | %.0f |" % (p["engine"], p["what"], p["seconds"], p["bytes"] / 1e6, p["mbps"]))
        print("\nversions: %s; load average %s" % (", ".join("%s %s" % kv for kv in versions.items()), loadavg()))

    for m in mismatches:
        print(m)
    if a.json:
        bench = None
        if a.bench_json and os.path.exists(a.bench_json):
            with open(a.bench_json) as fh:
                bench = json.load(fh)
        meta = dict(date=started, size=a.size, repeat=a.repeat, loadavg_start=load_start, loadavg_end=loadavg(),
                    snapshot_bytes=os.path.getsize(a.snapshot))
        with open(a.json, "w") as fh:
            json.dump(dict(meta=meta, machine=machine(), rows=rows, colonnade=answers, exports=exports, checks=checks,
                           peers=peers, versions=versions, mismatches=mismatches, bench=bench), fh, indent=2)
    shutil.rmtree(work, ignore_errors=True)
    return 1 if mismatches else 0


if __name__ == "__main__":
    sys.exit(main())
