#!/usr/bin/env python3
"""Ingest end to end: `colonnade import` beside DuckDB read_json/read_csv, Polars read_csv and
pyarrow read_csv on the same files, at 1 and 2 threads (issue 13).

    ingest.py --colonnade BIN --json-dir DIR --csv FILE --workdir DIR [--repeat R] [--threads 1,2] [--json OUT]

Every figure is the wall clock of a whole process, start-up included, page cache warm (one
untimed warm-up run each), median of R runs, as MB/s of the input files; beside it, each side's
fixed start-up, measured the same way by a process that does nothing else (`colonnade --version`;
`python -c "import duckdb"` and so on), so a table can show the times net of it (like for like:
whole processes on both sides, each side's fixed cost shown). Every run's exit status is checked
and every run must report the expected rows; a failure ends the run (exit status 1) with the
command's standard error:
- colonnade: `colonnade import FILES --threads N --snapshot S` (decode, merge, save and fsync a
  snapshot; S removed before each run);
- the peers: `python -c` importing the library, then reading into memory (DuckDB: CREATE TABLE
  AS SELECT, with SET threads; Polars: POLARS_MAX_THREADS; pyarrow: set_cpu_count and
  set_io_thread_count). The peers keep their table in memory and write nothing, so they do
  less work than colonnade, which saves a durable file.
DuckDB read_json reads the per-ticker dataset_data files and unnests `data` into one row per
quote (a list of JSON values per row: it does not type the columns).
"""
import argparse
import json
import os
import re
import statistics
import subprocess
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from peers import loadavg, machine  # noqa: E402


def wall(cmd, env=None, repeat=3, before=None, rows=None):
    """Median wall seconds of `cmd` over `repeat` runs after one warm-up, and the times. Each run's
    exit status is checked; with `rows`, each run's standard output must state that many rows (the
    last integer it prints: `imported N rows …` or a peer's row count)."""
    times = []
    for i in range(repeat + 1):
        if before:
            before()
        t0 = time.perf_counter()
        p = subprocess.run(cmd, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        dt = time.perf_counter() - t0
        if p.returncode != 0:
            raise RuntimeError("%s failed (exit %d):\n%s" % (" ".join(cmd)[:300], p.returncode, p.stderr.strip()[-4000:]))
        if rows is not None:
            said = [int(x.replace(",", "")) for x in re.findall(r"\d[\d,]*", p.stdout)]
            if not said or rows not in said:
                raise RuntimeError("%s reported %r, not %d rows" % (" ".join(cmd)[:300], p.stdout.strip()[-300:], rows))
        if i > 0:
            times.append(dt)
    return statistics.median(times), times


STARTUP = {"duckdb": "import duckdb", "polars": "import polars", "pyarrow": "import pyarrow, pyarrow.csv"}


def peer_script(engine, kind, path, threads):
    if engine == "duckdb":
        if kind == "json":
            read = ("SELECT unnest(dataset_data.data) AS row FROM read_json('%s/*.json', format = 'auto', "
                    "maximum_object_size = 67108864)" % path)
        else:
            read = "SELECT * FROM read_csv('%s')" % path
        return ("import duckdb; c = duckdb.connect(); c.execute('SET threads = %d'); "
                "c.execute(\"CREATE TABLE t AS %s\"); print(c.execute('SELECT count(*) FROM t').fetchone()[0])"
                % (threads, read.replace('"', '\\"')))
    if engine == "polars":
        return "import polars as pl; print(pl.read_csv('%s').height)" % path
    if engine == "pyarrow":
        return ("import pyarrow as pa, pyarrow.csv as c; pa.set_cpu_count(%d); pa.set_io_thread_count(%d); "
                "print(c.read_csv('%s', read_options=c.ReadOptions(use_threads=%s)).num_rows)"
                % (threads, threads, path, threads > 1))
    raise ValueError(engine)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--colonnade", required=True)
    ap.add_argument("--json-dir", required=True)
    ap.add_argument("--csv", required=True)
    ap.add_argument("--workdir", required=True)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--threads", default="1,2")
    ap.add_argument("--json")
    a = ap.parse_args()
    threads_list = [int(x) for x in a.threads.split(",")]
    json_files = sorted(os.path.join(a.json_dir, f) for f in os.listdir(a.json_dir) if f.endswith(".json"))
    json_bytes = sum(os.path.getsize(f) for f in json_files)
    csv_bytes = os.path.getsize(a.csv)
    snapshot = os.path.join(a.workdir, "ingest.snapshot")

    def fresh():
        if os.path.exists(snapshot):
            os.remove(snapshot)

    rows = []
    load_start = loadavg()
    with open(a.csv, "rb") as f:
        expected = sum(1 for _ in f) - 1  # the CSV's data lines: every input holds the same rows
    # Each side's fixed cost: a process that starts and imports its library, nothing else.
    startup = {"colonnade import": wall([a.colonnade, "--version"], repeat=a.repeat)[0]}
    for engine, imports in STARTUP.items():
        startup[engine] = wall([sys.executable, "-c", imports], repeat=a.repeat)[0]
    for kind, inputs, size in (("json", json_files, json_bytes), ("csv", [a.csv], csv_bytes)):
        for threads in threads_list:
            cmd = [a.colonnade, "import"] + inputs + ["--threads", str(threads), "--snapshot", snapshot]
            med, times = wall(cmd, repeat=a.repeat, before=fresh, rows=expected)
            rows.append(dict(engine="colonnade import", kind=kind, threads=threads, seconds=med, times=times, bytes=size,
                             startup=startup["colonnade import"]))
            engines = ["duckdb"] if kind == "json" else ["duckdb", "polars", "pyarrow"]
            for engine in engines:
                env = dict(os.environ, POLARS_MAX_THREADS=str(threads))
                script = peer_script(engine, kind, a.json_dir if kind == "json" else a.csv, threads)
                med, times = wall([sys.executable, "-c", script], env=env, repeat=a.repeat, rows=expected)
                name = {"duckdb": "DuckDB read_%s" % kind, "polars": "Polars read_csv", "pyarrow": "pyarrow read_csv"}[engine]
                rows.append(dict(engine=name, kind=kind, threads=threads, seconds=med, times=times, bytes=size,
                                 startup=startup[engine]))
    load_end = loadavg()

    print("| input | engine | threads | median s | start-up s | net s | net MB/s | vs colonnade (net) |")
    print("|---|---|---:|---:|---:|---:|---:|---:|")
    for r in rows:
        ours = next(x for x in rows if x["engine"] == "colonnade import" and x["kind"] == r["kind"] and x["threads"] == r["threads"])
        net, our_net = r["seconds"] - r["startup"], ours["seconds"] - ours["startup"]
        print("| %s %.0f MB | %s | %d | %.3f | %.3f | %.3f | %.0f | %.2f× |" % (
            r["kind"].upper(), r["bytes"] / 1e6, r["engine"], r["threads"], r["seconds"], r["startup"], net,
            r["bytes"] / net / 1e6, net / our_net))
    print("\nload average at start / end: %s / %s (the machine may be shared)" % (load_start, load_end))
    if a.json:
        with open(a.json, "w") as f:
            json.dump(dict(machine=machine(), rows=rows, startup=startup, expected_rows=expected, repeat=a.repeat,
                           date=time.strftime("%Y-%m-%dT%H:%M:%S"), load=[load_start, load_end]), f, indent=2)


if __name__ == "__main__":
    main()
