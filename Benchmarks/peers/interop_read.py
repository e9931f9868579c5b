#!/usr/bin/env python3
"""The interop-read peers: the medium data set as Polars, pandas and DuckDB write it by default,
and Polars' and DuckDB's readers timed on those files (colonnade-bench --suite interop-read runs
this, then times Colonnade's in-process decode of the same files in the same run).

    interop_read.py --source FILE.parquet --workdir DIR --threads T [--repeat R] [--reuse] [--json OUT]

1. Untimed (skipped with --reuse when the three files are there, so that every thread count
   times the same bytes): reads --source (Colonnade's export of the bench table) and writes
   polars-zstd.parquet (`DataFrame.write_parquet`, Polars' default: zstd),
   pandas-lz4.feather (`DataFrame.to_feather`, pandas' default: LZ4 frames; pyarrow's
   `feather.write_feather`, which pandas calls, when pandas is not installed), and
   duckdb-snappy.parquet (`COPY ... (FORMAT parquet)`, DuckDB's default: Snappy).
2. Timed, --repeat runs each, median: Polars `read_parquet` / `read_ipc` of each file it can
   read, and DuckDB `CREATE TABLE ... AS SELECT * FROM read_parquet(...)` (an in-memory table) of
   the Parquet files, each at --threads threads (POLARS_MAX_THREADS is set before Polars is
   imported; DuckDB `SET threads`). Every reader's row count must equal the source's.

Timing is in process: `time.perf_counter()` around the read alone, after the imports and the
untimed writes. A reader that fails raises (exit status 1, its traceback on stderr); a row
count that differs exits 1 naming it.

Writes JSON: {"files": {name: bytes}, "rows": N, "peers": [{"reader", "file", "seconds", "spread",
"runs", "times"}], "loadavg_start": [1, 5, 15 min], "loadavg": [at the end], "versions": {...}}.
"""
import argparse
import json
import os
import statistics
import sys
import time


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--source", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--repeat", type=int, default=5)
    ap.add_argument("--reuse", action="store_true", help="keep the files a previous run wrote")
    ap.add_argument("--json")
    args = ap.parse_args()
    load_start = list(os.getloadavg())
    os.environ["POLARS_MAX_THREADS"] = str(args.threads)
    import duckdb
    import polars as pl
    import pyarrow as pa
    import pyarrow.feather as feather

    os.makedirs(args.workdir, exist_ok=True)
    files = {
        "polars-zstd.parquet": os.path.join(args.workdir, "polars-zstd.parquet"),
        "pandas-lz4.feather": os.path.join(args.workdir, "pandas-lz4.feather"),
        "duckdb-snappy.parquet": os.path.join(args.workdir, "duckdb-snappy.parquet"),
    }
    df = pl.read_parquet(args.source)
    rows = df.height
    con = duckdb.connect()
    con.execute(f"SET threads={args.threads}")
    writer = "pyarrow.feather.write_feather (pandas not installed)"
    try:
        import pandas  # noqa: F401
        writer = "pandas.DataFrame.to_feather"
    except ImportError:
        pandas = None
    if not (args.reuse and all(os.path.exists(p) for p in files.values())):
        df.write_parquet(files["polars-zstd.parquet"])
        table = df.to_arrow()
        if pandas is not None:
            table.to_pandas().to_feather(files["pandas-lz4.feather"])
        else:
            feather.write_feather(table, files["pandas-lz4.feather"])
        con.execute(f"COPY (SELECT * FROM read_parquet('{args.source}')) TO '{files['duckdb-snappy.parquet']}' (FORMAT parquet)")
    del df

    def timed(fn):
        times = []
        for _ in range(args.repeat):
            t0 = time.perf_counter()
            n = fn()
            times.append(time.perf_counter() - t0)
            if n != rows:
                sys.exit(f"interop_read: {n} rows read, the source has {rows}")
        med = statistics.median(times)
        return med, (max(times) - min(times)) / med if med > 0 else 0.0, times

    def duck(path):
        con.execute(f"CREATE OR REPLACE TEMP TABLE t AS SELECT * FROM read_parquet('{path}')")
        return con.execute("SELECT count(*) FROM t").fetchone()[0]

    peers = []
    for name, path in files.items():
        if name.endswith(".parquet"):
            cases = [("Polars read_parquet", lambda p=path: pl.read_parquet(p).height),
                     ("DuckDB read_parquet", lambda p=path: duck(p))]
        else:
            cases = [("Polars read_ipc", lambda p=path: pl.read_ipc(p).height)]
        for reader, fn in cases:
            fn()  # warm-up, untimed (as Colonnade's side has)
            seconds, spread, times = timed(fn)
            peers.append({"reader": reader, "file": name, "seconds": seconds, "spread": spread, "runs": args.repeat,
                          "times": times})
    out = {
        "files": {n: os.path.getsize(p) for n, p in files.items()},
        "rows": rows,
        "threads": args.threads,
        "polars_threads": pl.thread_pool_size(),
        "peers": peers,
        "feather_writer": writer,
        "loadavg_start": load_start,
        "loadavg": list(os.getloadavg()),
        "versions": {"polars": pl.__version__, "duckdb": duckdb.__version__, "pyarrow": pa.__version__},
    }
    text = json.dumps(out, indent=2)
    if args.json:
        with open(args.json, "w") as f:
            f.write(text)
    print(text)


if __name__ == "__main__":
    main()
