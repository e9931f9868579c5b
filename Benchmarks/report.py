#!/usr/bin/env python3
"""Writes docs/BENCHMARKS.md from the committed JSON, so that every figure in it can be recomputed.

    python3 Benchmarks/report.py            # docs/bench/*.json + Benchmarks/BENCHMARKS.md.in -> docs/BENCHMARKS.md
    python3 Benchmarks/report.py --check    # exit 1 if the page or any chart is not what the JSON gives
    python3 Benchmarks/report.py --draw-charts BIN   # BIN = colonnade-bench: redraw and stamp its charts

`Benchmarks/reproduce.sh` runs every suite, then this. Inputs (docs/bench/):
- colonnade-bench.json: `colonnade-bench --suite scan,screens,decode,snapshot,zip,import,cli,firsttouch`
  (the in-memory kernels, decoding, snapshots, zip, import end to end, the CLI on a saved
  snapshot, first-touch memory);
- peers.json: `Benchmarks/peers/run.sh --json FILE` (DuckDB, Polars, NumPy, SQLite; Colonnade
  through `filter --timing`);
- ingest.json: `Benchmarks/peers/ingest.sh --json FILE` (import beside the peers' readers);
- interop.json: `Benchmarks/peers/interop.sh --json FILE` (Arrow IPC and Parquet);
- run.json: what `reproduce.sh` ran: per suite, its size, attempts, and the load average at its
  start and end (a suite run while the load exceeded its thread count was repeated, and is marked
  if it stayed so);
- NAME.json for every further suite hook `Benchmarks/suites/NN-NAME.sh`, rendered by its
  `Benchmarks/suites/NAME.py` (`section(data) -> markdown`) where the template says
  `{{ section("NAME") }}`, or at the end of the page otherwise;
- Benchmarks/BENCHMARKS.md.in: the prose. Every `{{ expression }}` in it is a Python expression
  evaluated with the helpers below (`t`, `rate`, `x`, `pms`, ...) over those files; there are
  no figures in the prose that do not come from them.

Charts: the peers' (peers-queries.svg, peers-load.svg) are drawn here from peers.json by
Benchmarks/peers/plot.py and compared by --check. colonnade-bench draws its own (queries.svg,
selectivity.svg, loading.svg) with `--from-json colonnade-bench.json --svg DIR`; `--draw-charts`
runs that and stamps each SVG with the SHA-256 of the JSON it was drawn from and of its own
body, and --check (which has no benchmark build to redraw them) requires both to match.

Standard library only (Python 3.9+).
"""
import argparse
import fnmatch
import glob
import hashlib
import importlib.util
import json
import shutil
import statistics
import subprocess
import tempfile
import math
import os
import re
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
sys.path.insert(0, os.path.join(HERE, "peers"))
import peers  # noqa: E402  (the same renderer run.sh prints with)
import plot  # noqa: E402  (the same charts run.sh --svg draws)

SIZES = {"small": (100, 2520), "medium": (1000, 5000), "large": (2000, 10000)}

# The cli suite's queries (Benchmarks/ColonnadeBenchmarks/CLISuite.swift): name, text, --on latest.
CLI_QUERIES = ([(q, peers.QUERIES[q], False) for q in ("Q1", "Q2", "Q3", "Q4", "S1", "S2", "S3", "S4")]
               + [(s + "L", peers.QUERIES[s], True) for s in ("S1", "S2", "S3", "S4")])


def number(v):
    """JSON numbers, and colonnade-bench's "inf"/"nan" strings."""
    if isinstance(v, str):
        return {"inf": math.inf, "-inf": -math.inf, "nan": math.nan}[v]
    return v


class Bench:
    """colonnade-bench's JSON report."""

    def __init__(self, path):
        with open(path) as f:
            self.data = json.load(f)
        self.path = path
        self.machine = self.data["machine"]
        tickers, days = SIZES[self.machine["size"]]
        n = tickers * days
        self.label = "%dM" % (n // 1_000_000) if n >= 1_000_000 else "%dk" % (n // 1000)
        self.rows = n
        self.threads = self.machine["threads"]
        for r in self.data["results"]:
            for k in ("seconds", "spread", "items", "bytes"):
                r[k] = number(r[k])

    def has(self, pattern, suite=None):
        """Whether exactly one result matches `pattern` (as `find`)."""
        try:
            self.find(pattern, suite)
            return True
        except KeyError:
            return False

    def suites(self):
        return {r["suite"] for r in self.data["results"]}

    def find(self, pattern, suite=None):
        """The one result whose name matches `pattern` ({L}: the size label, {T}: all threads; * ? globs),
        in `suite` if given (two suites may name a row alike: the zip and cli suites' start-up)."""
        pattern = pattern.replace("{L}", self.label).replace("{T}", str(self.threads))
        hits = [r for r in self.data["results"] if fnmatch.fnmatchcase(r["name"], pattern) and suite in (None, r["suite"])]
        if len(hits) != 1:
            raise KeyError("%s: %d results match %r" % (self.path, len(hits), pattern))
        return hits[0]


def fmt_time(s):
    if s == math.inf:
        return "—"
    if s >= 1:
        return "%.2f s" % s
    if s >= 1e-3:
        return "%.2f ms" % (s * 1e3)
    return "%.1f µs" % (s * 1e6)


def fmt_rate(x, unit):
    if unit == "B":
        return "%.0f MB/s" % (x / 1e6)
    for scale, prefix in ((1e9, "G"), (1e6, "M"), (1e3, "k")):
        if x >= scale:
            return "%.2f %s%s/s" % (x / scale, prefix, unit) if prefix == "G" else "%.1f %s%s/s" % (x / scale, prefix, unit)
    return "%.1f %s/s" % (x, unit)


def fmt_ratio(r):
    if r >= 100:
        return "%.0f×" % r
    if r >= 10:
        return "%.1f×" % r
    return "%.2f×" % r


def bench_table(bench, suites=None, skip=()):
    """The results (of `suites`, all but `skip`) as the harness prints them, plus the number of timed runs."""
    out = ["```",
           "%-9s%-66s%11s%5s%8s%17s%7s  %s" % ("suite", "benchmark", "median", "runs", "spread", "throughput", "GB/s", "note")]
    for r in bench.data["results"]:
        if (suites is not None and r["suite"] not in suites) or r["suite"] in skip:
            continue
        rate = fmt_rate(r["items"] / r["seconds"], r["unit"]) if r["items"] > 0 and r["seconds"] not in (0, math.inf) else "—"
        gbs = "%.1f" % (r["bytes"] / r["seconds"] / 1e9) if r["bytes"] > 0 and r["seconds"] != math.inf else ""
        out.append("%-9s%-66s%11s%5s%8s%17s%7s  %s" % (r["suite"], r["name"], fmt_time(r["seconds"]), r["runs"],
                                                      "%.0f%%" % (r["spread"] * 100), rate, gbs, r["note"]))
    out.append("```")
    return "\n".join(out)


def zip_table(zipbench):
    """The zip suite's results as the harness prints them."""
    if zipbench is None:
        return "(no zip suite results: neither docs/bench/colonnade-bench.json nor docs/bench/zip-medium.json has them)"
    return bench_table(zipbench, suites=("zip",))


def zip_caveat(zipbench):
    """How busy the machine was during the zip suite's run."""
    m = zipbench.machine
    if m.get("loadAverageStart") is not None and m.get("loadAverageEnd") is not None:
        return "Load average (1 min) at start / end: %.1f / %.1f on %s cores." % (m["loadAverageStart"], m["loadAverageEnd"], m.get("cores", "?"))
    return "**The load average was not recorded for this run** (its JSON predates the field)."


INTEROP_COMMAND = "Benchmarks/peers/interop.sh --size large --repeat 3 --json docs/bench/interop.json"
INTEROP_TARGET_SIZE = "large"  # issue 14's targets are set for the 20 M-row table


def interop_command(interop):
    """The command that made interop.json (its size and repeat as recorded in it), or the one to run."""
    if interop is None:
        return INTEROP_COMMAND
    meta = interop.get("meta", {})
    return "Benchmarks/peers/interop.sh --size %s --repeat %s --json docs/bench/interop.json" % (
        meta.get("size") or "?", meta.get("repeat", "?"))


def ingest_command(ingest):
    """The command that made ingest.json: its size from the rows it expected (SIZES), not typed."""
    size, repeat = "medium", 3
    if ingest is not None:
        repeat = ingest.get("repeat", repeat)
        for name, (tickers, days) in SIZES.items():
            if tickers * days == ingest.get("expected_rows"):
                size = name
    return "Benchmarks/peers/ingest.sh --size %s --repeat %d --threads 1,2 --json docs/bench/ingest.json" % (size, repeat)


def ingest_section(ingest):
    """Issue 13's same-run comparison: `colonnade import` (files on disk to a durable snapshot)
    beside the peers' readers (into memory), from Benchmarks/peers/ingest.sh --json. Whole
    processes on both sides; with each side's start-up measured (a newer ingest.json), the times
    net of it are shown and the ratios judged on them. Without it, the ratios include Python's
    start-up on the peers' side only: shown, not judged."""
    if ingest is None:
        return "Not measured in the committed figures: docs/bench/ingest.json is missing. Make it with\n`%s`." % ingest_command(None)
    rows = ingest["rows"]
    like = all("startup" in r for r in rows)
    out = []
    if like:
        out.append("Whole processes on both sides, each side's fixed start-up measured the same way and shown "
                   "(`colonnade --version`; `python -c \"import polars\"` and so on); \"net\" is the median minus it, "
                   "and the ratio (peer ÷ Colonnade, > 1: Colonnade is faster) is of the net times.")
        out.append("")
        out.append("| input | engine | threads | median s (whole process) | start-up s | net s | net MB/s | vs colonnade (net) |")
        out.append("|---|---|---:|---:|---:|---:|---:|---:|")
    else:
        out.append("**Not like for like:** this ingest.json has no start-up figures, so each peer's time includes "
                   "starting Python and importing its library (not measured in that run) while Colonnade's includes its own start-up "
                   "only. The ratios are shown as measured and not judged against the targets; "
                   "`%s` measures both start-ups." % ingest_command(ingest))
        out.append("")
        out.append("| input | engine | threads | median s (whole process) | MB/s | vs colonnade |")
        out.append("|---|---|---:|---:|---:|---:|")

    def net(r):
        return r["seconds"] - r["startup"] if like else r["seconds"]
    ours = {(r["kind"], r["threads"]): r for r in rows if r["engine"] == "colonnade import"}
    for r in rows:
        base = ours.get((r["kind"], r["threads"]))
        ratio = fmt_ratio(net(r) / net(base)) if base else "—"
        if like:
            out.append("| %s %.0f MB | %s | %d | %.3f | %.3f | %.3f | %.0f | %s |" % (
                r["kind"].upper(), r["bytes"] / 1e6, r["engine"], r["threads"], r["seconds"], r["startup"], net(r),
                r["bytes"] / 1e6 / net(r), ratio))
        else:
            out.append("| %s %.0f MB | %s | %d | %.3f | %.0f | %s |" % (
                r["kind"].upper(), r["bytes"] / 1e6, r["engine"], r["threads"], r["seconds"], r["bytes"] / 1e6 / r["seconds"], ratio))
    verdicts = []
    for t in sorted({r["threads"] for r in rows}):
        j = [r for r in rows if r["engine"] == "colonnade import" and r["kind"] == "json" and r["threads"] == t]
        if j:
            rate = j[0]["bytes"] / 1e6 / j[0]["seconds"]
            target = 600 if t >= 2 else 400
            verdicts.append("JSON at %d thread%s: %.0f MB/s whole process (target ≥ %d: %s)" % (
                t, "s" if t > 1 else "", rate, target, "met" if rate >= target else "**not met**"))
        c = [r for r in rows if r["engine"] == "colonnade import" and r["kind"] == "csv" and r["threads"] == t]
        pol = [r for r in rows if r["engine"] == "Polars read_csv" and r["threads"] == t]
        if c and pol:
            x = net(pol[0]) / net(c[0])
            if like:
                verdicts.append("CSV at %d thread%s: %.2f× Polars `read_csv`, net of each side's start-up (target ≥ 2×: %s)"
                                % (t, "s" if t > 1 else "", x, "met" if x >= 2 else "**not met**"))
            else:
                verdicts.append("CSV at %d thread%s: %.2f× Polars `read_csv` with Python's start-up on one side only "
                                "(target ≥ 2×: not judged, not like for like)" % (t, "s" if t > 1 else "", x))
    load = ingest.get("load")
    tail = ("\n\nLoad average (1 min) at start / end: %s / %s." % (load[0], load[1])) if load else ""
    return "\n".join(out) + "\n\n" + "\n".join("- " + v for v in verdicts) + tail


def interop_section(interop):
    """Issue 14's figures from interop.json: exports and imports of Colonnade and the peers, same
    table, same run; the targets; the read-back check. Every number comes from the file."""
    if interop is None:
        return ("Not measured in the committed figures: docs/bench/interop.json is missing. Make it with\n"
                "`%s` (a quiet machine)." % INTEROP_COMMAND)
    meta, rows = interop.get("meta", {}), interop["rows"]
    bench = interop.get("bench") or {"results": [], "machine": {}}
    ours = {r["name"].rsplit(" ", 1)[0]: r for r in bench["results"] if r["suite"] == "interop"}
    bm = bench["machine"]
    out = []
    loads = [v for v in (meta.get("loadavg_start"), meta.get("loadavg_end"), bm.get("loadAverageStart"), bm.get("loadAverageEnd"))
             if v is not None]
    out.append("Run: %s, %s (%s rows), %s run(s) per figure (median), commit %s, %s, %s cores; load average (1 min) %s; versions: %s."
               % (meta.get("date", "?"), meta.get("size", "?"), "{:,}".format(rows), meta.get("repeat", "?"), bm.get("commit", "?"),
                  interop["machine"]["cpu"], interop["machine"]["usable_cores"],
                  "–".join("%.1f" % v for v in (min(loads), max(loads))) if loads else "not recorded",
                  ", ".join("%s %s" % kv for kv in sorted(interop.get("versions", {}).items())) or "—"))
    out.append("")
    judged = meta.get("size") == INTEROP_TARGET_SIZE
    if not judged:
        out.append("**This is a `%s` run (%s rows), not the run issue 14's targets are judged on:** they are set for "
                   "the 20 M-row (`%s`) table on a quiet machine (`%s`). The figures below show that every writer, "
                   "reader and check ran; their MB/s say little about the targets, and the targets table does not "
                   "judge them." % (meta.get("size") or "unrecorded", "{:,}".format(rows), INTEROP_TARGET_SIZE, INTEROP_COMMAND))
        out.append("")

    def verdict(ok, unmet="**not met**"):
        if not judged:
            return "not judged (%s run)" % (meta.get("size") or "unrecorded size")
        return "met" if ok else unmet

    def mbps(r):
        return r["bytes"] / r["seconds"] / 1e6

    def kind(p):
        return p.get("kind") or ("read" if "read" in p["what"] else "write")

    peers_w = [p for p in interop["peers"] if kind(p) == "write"]
    cache = [p for p in peers_w if "saved" not in p["what"]]
    saved = [p for p in peers_w if "saved" in p["what"]]
    if ours or cache:
        out.append("**Export to the page cache** (in process, no fsync; before each run the last file is removed and "
                   "dirty pages written back). Time to write the same %s-row table; ratio = the writer's time ÷ "
                   "Colonnade's for the same format (> 1: Colonnade is faster)." % "{:,}".format(rows))
        out.append("")
        out.append("| writer | format | median s | MB | MB/s | vs Colonnade |")
        out.append("|---|---|---:|---:|---:|---:|")
        fmt_of = lambda what: "Arrow IPC" if ("feather" in what or "ipc" in what) else "Parquet"
        base = {"Arrow IPC": ours.get("export Arrow IPC file"), "Parquet": ours.get("export Parquet uncompressed")}
        for name in ("export Arrow IPC file", "export Arrow IPC stream", "export Parquet uncompressed", "export Parquet Snappy",
                     "export Parquet --partition-by year"):
            r = ours.get(name)
            if r:
                out.append("| Colonnade `%s` | %s | %.3f | %.0f | %.0f | |" % (name[len("export "):], "Arrow IPC" if "Arrow" in name else "Parquet",
                                                                         r["seconds"], r["bytes"] / 1e6, mbps(r)))
        for p in cache:
            b = base.get(fmt_of(p["what"]))
            out.append("| %s %s | %s | %.3f | %.0f | %.0f | %s |" % (p["engine"], p["what"], fmt_of(p["what"]), p["seconds"],
                                                                   p["bytes"] / 1e6, mbps(p), fmt_ratio(p["seconds"] / b["seconds"]) if b else "—"))
        out.append("")
    out.append("**Saved** (written and fsync'd). `colonnade export` is the whole command, from process start to the "
               "file saved, including loading and verifying the %.0f MB snapshot; the peers' rows are in process "
               "(their table already in memory) plus an fsync of the file." % (meta.get("snapshot_bytes", 0) / 1e6))
    out.append("")
    out.append("| writer | median s | MB | MB/s |")
    out.append("|---|---:|---:|---:|")
    for e in interop["exports"]:
        out.append("| `colonnade export %s` | %.3f | %.0f | %.0f |" % (e["args"], e["seconds"], e["bytes"] / 1e6, e["mbps"]))
    for p in saved:
        out.append("| %s %s | %.3f | %.0f | %.0f |" % (p["engine"], p["what"], p["seconds"], p["bytes"] / 1e6, p["mbps"]))
    out.append("")
    readers = [p for p in interop["peers"] if kind(p) == "read"]
    if ours or readers:
        out.append("**Import** of our own files (Colonnade: memory-mapped, into a table; the peers read our uncompressed Parquet):")
        out.append("")
        out.append("| reader | median s | MB | MB/s |")
        out.append("|---|---:|---:|---:|")
        for name, r in ours.items():
            if name.startswith("import"):
                out.append("| Colonnade `%s` | %.3f | %.0f | %.0f |" % (name[len("import "):], r["seconds"], r["bytes"] / 1e6, mbps(r)))
        for p in readers:
            out.append("| %s %s | %.3f | %.0f | %.0f |" % (p["engine"], p["what"], p["seconds"], p["bytes"] / 1e6, p["mbps"]))
        out.append("")
    # Targets.
    out.append("| target | measured | |")
    out.append("|---|---|---|")
    arrow = ours.get("export Arrow IPC file")
    if arrow:
        out.append("| Arrow export ≥ 1.5 GB/s | file %.0f MB/s, stream %.0f MB/s | %s |"
                   % (mbps(arrow), mbps(ours["export Arrow IPC stream"]), verdict(mbps(arrow) >= 1500)))
    pq = ours.get("export Parquet uncompressed")
    # Like for like: Colonnade writes PLAIN pages without dictionaries; only a peer writer set the
    # same way does the same work (pyarrow use_dictionary=False). The others choose dictionary
    # encoding (smaller files, other work) and are shown, not judged against.
    plain = [p for p in cache if "parquet" in p["what"].lower() and "no dictionary" in p["what"]]
    pq_peers = [p for p in cache if "parquet" in p["what"].lower() and "(uncompressed" in p["what"]]
    if pq and plain:
        fastest = min(plain, key=lambda p: p["seconds"])
        out.append("| Parquet export (uncompressed) faster than the peers' Parquet writers, same encoding (PLAIN, no dictionary) | "
                   "%.3f s; %s %s %.3f s (%s) | %s |"
                   % (pq["seconds"], fastest["engine"], fastest["what"], fastest["seconds"], fmt_ratio(fastest["seconds"] / pq["seconds"]),
                      verdict(pq["seconds"] < fastest["seconds"])))
    elif pq and pq_peers:
        fastest = min(pq_peers, key=lambda p: p["seconds"])
        out.append("| Parquet export (uncompressed) faster than every peer's Parquet writer | %.3f s; fastest peer %s %s %.3f s (%s), "
                   "**not like for like**: that writer chose dictionary encoding (%.0f MB) where Colonnade writes PLAIN pages "
                   "(%.0f MB); this interop.json has no same-encoding row | not judged |"
                   % (pq["seconds"], fastest["engine"], fastest["what"], fastest["seconds"], fmt_ratio(fastest["seconds"] / pq["seconds"]),
                      fastest["bytes"] / 1e6, pq["bytes"] / 1e6))
    pi = ours.get("import Parquet uncompressed")
    if pi:
        out.append("| Parquet import of our own files ≥ 1 GB/s | %.0f MB/s (single file), %s (year= directory) | %s |"
                   % (mbps(pi), "%.0f MB/s" % mbps(ours["import Parquet year=… directory"]) if "import Parquet year=… directory" in ours else "—",
                      verdict(mbps(pi) >= 1000)))
    agree_all = not interop["mismatches"]
    out.append("| DuckDB over our partitioned Parquet answers Q1–Q4 as Colonnade | %s | %s |"
               % ("; ".join("%s %d / %.2f" % (q, c["answers"][q][0], c["answers"][q][1]) for c in interop["checks"]
                            if c["output"] == "q-years" and c["engine"] == "DuckDB" for q in sorted(c["answers"])) or "not run",
                  ("met" if judged else "agrees at %s size" % meta.get("size"))
                  if agree_all and any(c["output"] == "q-years" and c["engine"] == "DuckDB" for c in interop["checks"]) else "**not met**"))
    out.append("")
    out.append("Read-back check: %d reader/output pairs; %s" % (len(interop["checks"]),
               "every one gave Colonnade's row count and Q1–Q4 count and sum(close)." if agree_all
               else "**mismatches:** " + "; ".join(interop["mismatches"])))
    out.append("")
    out.append("| output | reader | rows | agrees |")
    out.append("|---|---|---:|---|")
    for c in interop["checks"]:
        out.append("| %s | %s | %s | %s |" % (c["output"], c["engine"], "{:,}".format(c["rows"]), "yes" if c["agree"] else "**no**"))
    return "\n".join(out)


def context(bench, peer, zipbench=None, interop=None, ingest=None):
    """The names a template expression can use."""
    def m(name):
        return bench.find(name)

    def sec(name):
        return m(name)["seconds"]

    def t(name):
        return fmt_time(sec(name))

    def rate(name):
        r = m(name)
        return fmt_rate(r["items"] / r["seconds"], r["unit"])

    def per_s(name):
        r = m(name)
        return r["items"] / r["seconds"]

    def gbs(name):
        r = m(name)
        return "%.1f GB/s" % (r["bytes"] / r["seconds"] / 1e9)

    def runs(name):
        return m(name)["runs"]

    def x(slow, fast):
        """How many times faster `fast` is than `slow`, by rows per second (names or numbers)."""
        a = per_s(slow) if isinstance(slow, str) else slow
        b = per_s(fast) if isinstance(fast, str) else fast
        return fmt_ratio(b / a)

    def tx(slow, fast):
        """Ratio of two medians (names): slow / fast."""
        return fmt_ratio(sec(slow) / sec(fast))

    by = {}
    if peer:
        for r in peer["results"]:
            for run in r["runs"]:
                by[(r["engine"], run["query"], run["threads"])] = run
    engines = {r["engine"]: r for r in peer["results"]} if peer else {}

    def p(engine, q, threads=1):
        if engine in peers.SINGLE_THREADED:
            threads = 1
        return by[(engine, q, threads)]

    def pms(engine, q, threads=1):
        return peers.fmt_ms(p(engine, q, threads)["ms"])

    def px(engine, q, threads=1):
        """peer ÷ Colonnade at the same thread count."""
        return fmt_ratio(p(engine, q, threads)["ms"] / p("colonnade", q, threads)["ms"])

    def pempty(engine, q, threads=1):
        return "%.3g ms" % p(engine, q, threads)["empty_ms"]

    def pempty_range(engine, threads=1):
        """The smallest and largest fixed cost over the queries, e.g. "0.41–1.2 ms"."""
        # The queries this report ran (an older peers.json has Q1–Q4 only, not the screens).
        v = [p(engine, q, threads)["empty_ms"] for q in peers.QUERIES
             if (engine, q, 1 if engine in peers.SINGLE_THREADED else threads) in by]
        return "%.3g–%.3g ms" % (min(v), max(v))

    def pload(engine):
        return peers.fmt_ms(engines[engine]["load_ms"])

    def fmt(v, spec="%.3g"):
        return spec % v

    def slower_with_threads():
        """Every figure that got slower with all threads than with one."""
        lines = []
        T = bench.threads
        for q in ("Q1", "Q2", "Q3", "Q4"):
            for zm in ("off", "on"):
                one, all_ = "%s {L} t=1 zonemaps=%s" % (q, zm), "%s {L} t={T} zonemaps=%s" % (q, zm)
                if T > 1 and sec(all_) > sec(one):
                    lines.append("- colonnade-bench %s, zone maps %s: %s with 1 thread, %s with %d"
                                 % (q, zm, t(one), t(all_), T))
        if peer:
            T = peer["meta"]["threads"]
            for q in peers.QUERIES:
                for e in [e for e in engines if e not in peers.SINGLE_THREADED]:
                    if T > 1 and (e, q, T) in by and by[(e, q, T)]["ms"] > by[(e, q, 1)]["ms"]:
                        lines.append("- peers run, %s %s: %s ms with 1 thread, %s ms with %d"
                                     % (peers.LABELS[e], q, pms(e, q, 1), pms(e, q, T), T))
        return "\n".join(lines) if lines else "- none in these runs"

    def load_caveat():
        """How busy the machine was, from the load averages both JSON files record."""
        cores = bench.machine.get("cores") or 1
        loads = [v for v in (bench.machine.get("loadAverageStart"), bench.machine.get("loadAverageEnd"),
                             peer["meta"].get("loadavg_start") if peer else None,
                             peer["meta"].get("loadavg_end") if peer else None) if v is not None]
        if not loads:
            return "**The load on the machine was not recorded** for these runs."
        if max(loads) <= 0.5 * cores:
            return ("The machine was quiet: load average (1 min) at most %.1f on %d cores during these runs."
                    % (max(loads), cores))
        if max(loads) <= cores:
            # The runs use up to `cores` threads themselves, so a load up to the core count is what
            # they alone give; it does not show other work.
            return ("Load average (1 min) up to %.1f on %d cores during these runs: no more than their own "
                    "threads (up to %d) give." % (max(loads), cores, cores))
        return ("**Measured on a shared machine: load average (1 min) up to %.1f on %d cores.** Other work "
                "was running during these runs, so single figures can be several times slower than on an "
                "idle machine and ratios between rows measured minutes apart move with the load. Figures "
                "for decisions should come from a re-run on a quiet machine (one command, below)."
                % (max(loads), cores))

    def peers_tables():
        meta = dict(peer["meta"])
        text = peers.render(peer["results"], meta, meta["threads"])
        # The renderer's own heading is replaced by this document's.
        return "\n".join(text.splitlines()[2:]).strip()

    def zsec(name):
        return zipbench.find(name, "zip")["seconds"]

    def zx(slow, fast):
        """Ratio of two zip-suite medians (names): slow / fast; "not measured" when either is."""
        if math.inf in (zsec(slow), zsec(fast)):
            return "not measured"
        return fmt_ratio(zsec(slow) / zsec(fast))

    def zrate(name):
        r = zipbench.find(name, "zip")
        if r["seconds"] == math.inf:
            return r["note"] or "not measured"
        return fmt_rate(r["items"] / r["seconds"], r["unit"])

    def zverdict(condition, *names, good="met"):
        """A zip target's verdict: "not measured" when a figure it needs is (a missing tool)."""
        missing = [n for n in names if zsec(n) == math.inf]
        if missing:
            return "not measured (%s)" % "; ".join(zipbench.find(n, "zip")["note"] for n in missing)
        return good if condition else "**not met**"

    def zip_net():
        """Polars against import big.zip net of each side's start-up, when the suite measured both."""
        names = ("start-up: colonnade --version", "start-up: python -c 'import polars'")
        if not all(zipbench.has(n, "zip") for n in names) or math.inf in [zsec(n) for n in names + ("*Polars read_csv",)]:
            return " (each side's start-up not measured in this run)"
        net = (zsec("*Polars read_csv") - zsec(names[1])) / (zsec("colonnade import big.zip*") - zsec(names[0]))
        return ", %s net of each side's start-up" % fmt_ratio(net)

    def ok(v):
        return "met" if v else "**not met**"

    # --- The memory roof: only a column at least 4× the last-level cache measures memory. ---
    l3 = bench.machine.get("l3CacheBytes") or 32 << 20  # older reports: this machine's 32 MiB (lscpu)
    column_bytes = bench.rows * 8
    memory_bound = column_bytes >= 4 * l3

    def regime():
        """What the scan figures of this run measure: memory, or the cache."""
        if memory_bound:
            return ("memory-bound: one Float64 column is %.0f MB, %.1f× the %.0f MiB L3 cache%s"
                    % (column_bytes / 1e6, column_bytes / l3, l3 / 2**20, "" if bench.machine.get("l3CacheBytes") else " (lscpu; not recorded in this JSON)"))
        return ("**cache-resident, not a memory roof**: one Float64 column is %.0f MB, %.1f× the %.0f MiB L3 cache "
                "(a roof needs ≥ 4×: the `large` size, 20 M rows, 160 MB)%s"
                % (column_bytes / 1e6, column_bytes / l3, l3 / 2**20, "" if bench.machine.get("l3CacheBytes") else " (L3 from lscpu; not recorded in this JSON)"))

    def roof_verdict(v):
        """A verdict on a memory-bound target: judged only where the run is memory-bound."""
        return ok(v) if memory_bound else "not judged: %s rows are cache-resident (judged at `large`)" % bench.label

    # --- The user's path: colonnade filter on a saved snapshot (the cli suite). ---
    def user_path_table():
        if "cli" not in bench.suites():
            return ("Not measured in the committed figures: this colonnade-bench.json has no `cli` suite "
                    "(`Benchmarks/reproduce.sh` runs it). The in-memory kernel figures below are not what a user runs.")
        T, L = bench.threads, bench.label

        def ct(name):
            return fmt_time(bench.find(name, "cli")["seconds"])

        def chas(name):
            return bench.has(name, "cli")
        lines = ["Start-up of any `colonnade` process (`--version`): %s." % ct("start-up: colonnade --version"), "",
                 "| query | process start to answer, 1 thread | %d threads | `query_ms` (in process), 1 thread | %d threads | in-memory kernel, 1 thread (not the user's path) | count |" % (T, T),
                 "|---|---:|---:|---:|---:|---:|---:|"]
        for q, text, latest in CLI_QUERIES:
            what = "--on latest" if latest else "whole table"
            p1 = "%s {L} t=1 process start to answer (%s)" % (q, what)
            if not chas(p1):
                continue
            pT = "%s {L} t={T} process start to answer (%s)" % (q, what)
            q1 = "%s {L} t=1 query_ms (%s)" % (q, what)
            qT = "%s {L} t={T} query_ms (%s)" % (q, what)
            if q.startswith("Q"):
                kernel = "%s {L} t=1 zonemaps=on" % q
            elif latest:
                kernel = "%s * --on latest {L} t=1" % q[:2]
            else:
                kernel = "%s * {L} t=1" % q
            hits = [r for r in bench.data["results"] if r["suite"] in ("scan", "screens")
                    and fnmatch.fnmatchcase(r["name"], kernel.replace("{L}", L).replace("{T}", str(T)))
                    and (latest or "--on latest" not in r["name"])]
            k = fmt_time(hits[0]["seconds"]) if len(hits) == 1 else "—"
            count = bench.find(p1, "cli")["note"].split(";")[0].replace("count ", "")
            lines.append("| %s%s | %s | %s | %s | %s | %s | %s |" % (q, " (last rows only)" if latest else "", ct(p1), ct(pT) if chas(pT) else "—",
                                                          ct(q1), ct(qT) if chas(qT) else "—", k, "{:,}".format(int(count)) if count.isdigit() else count))
        return "\n".join(lines)

    # --- First-touch memory (the firsttouch suite). ---
    def first_touch():
        if "firsttouch" not in bench.suites():
            return ("Not measured in the committed figures: this colonnade-bench.json has no `firsttouch` suite "
                    "(`Benchmarks/reproduce.sh` runs it). No figure for it is given here.")
        a, b = "first memset of 500 MiB*", "second memset of the same 500 MiB"
        c, d = "first memcpy of 500 MiB into fresh memory", "second memcpy into the same 500 MiB"
        return ("`colonnade-bench --suite firsttouch` (this run): the first `memset` of 500 MiB of fresh memory ran at %s "
                "and the second at %s; the first `memcpy` into fresh memory at %s and the second at %s."
                % (rate(a), rate(b), rate(c), rate(d)))

    # --- Peers: agreement from the answers, and Colonnade's load as measured. ---
    def agreement_sentence():
        return peers.agreement_sentence(peer["results"]) if peer else "No peers run."

    def colonnade_load():
        """Colonnade's snapshot load in the peers run, from every process's --timing (median, and the first)."""
        r = engines["colonnade"]
        loads = [float(run["timing"]["load_ms"]) for run in r["runs"] if "timing" in run]
        if not loads:
            return "%s ms" % peers.fmt_ms(r["load_ms"])
        return ("median %s ms over the %d `filter` processes (the first, with the file not yet in the page cache: %s ms)"
                % (peers.fmt_ms(statistics.median(loads)), len(loads), peers.fmt_ms(loads[0])))

    names = dict(locals())
    names.update(bench=bench, peer=peer, machine=bench.machine, zipbench=zipbench,
                 zip_table=lambda: zip_table(zipbench), zip_caveat=lambda: zip_caveat(zipbench), L=bench.label, T=bench.threads,
                 rows=bench.rows, math=math, fmt_ratio=fmt_ratio, fmt_time=fmt_time,
                 bench_table=lambda: bench_table(bench, skip=("zip",)),
                 interop=interop, interop_section=lambda: interop_section(interop), INTEROP_COMMAND=INTEROP_COMMAND,
                 interop_command=lambda: interop_command(interop),
                 ingest_section=lambda: ingest_section(ingest), INGEST_COMMAND=ingest_command(ingest),
                 peer_budget=lambda: peers.repeat_budget_text(peer["meta"]))
    return names


def render(template, names):
    builtins = {f.__name__: f for f in (min, max, abs, len, round, sorted, sum, any, all, str, int, float)}

    def sub(match):
        expression = match.group(1)
        try:
            value = eval(expression, {"__builtins__": builtins}, names)
        except Exception as e:
            line = template.count("\n", 0, match.start()) + 1
            raise SystemExit("report.py: template line %d: {{%s}}: %s: %s" % (line, expression, type(e).__name__, e))
        return str(value)
    return re.sub(r"\{\{(.+?)\}\}", sub, template, flags=re.S)


# The charts colonnade-bench draws (`--from-json FILE --svg DIR`), stamped by --draw-charts.
BENCH_CHARTS = ("queries.svg", "selectivity.svg", "loading.svg")
STAMP = re.compile(r"<!-- drawn by colonnade-bench --from-json (\S+) sha256:([0-9a-f]{64}); this chart's body sha256:([0-9a-f]{64}) -->\n")


def sha256_file(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def stamp(svg, source_name, source_hash):
    """`svg` with a stamp after its XML declaration: the JSON it was drawn from and its body's hash."""
    body = STAMP.sub("", svg)
    line = "<!-- drawn by colonnade-bench --from-json %s sha256:%s; this chart's body sha256:%s -->\n" % (
        source_name, source_hash, hashlib.sha256(body.encode()).hexdigest())
    if body.startswith("<?xml"):
        end = body.index("\n") + 1
        return body[:end] + line + body[end:]
    return line + body


def check_stamp(path, source):
    """None when the chart at `path` carries a stamp of `source`'s current bytes and its body is
    unchanged since; else why not."""
    try:
        with open(path) as f:
            svg = f.read()
    except FileNotFoundError:
        return "missing"
    found = STAMP.search(svg)
    if not found:
        return "no stamp (drawn before charts were stamped, or by hand): redraw with report.py --draw-charts BIN"
    if found.group(2) != sha256_file(source):
        return "drawn from another %s than the committed one" % os.path.basename(source)
    if hashlib.sha256(STAMP.sub("", svg).encode()).hexdigest() != found.group(3):
        return "edited after it was drawn"
    return None


def draw_charts(binary, source, directory):
    """Runs `binary --from-json source --svg TMP`, stamps each chart and moves it into `directory`."""
    with tempfile.TemporaryDirectory() as tmp:
        p = subprocess.run([binary, "--from-json", source, "--svg", tmp], capture_output=True, text=True)
        if p.returncode != 0:
            raise SystemExit("report.py: %s --from-json %s failed (exit %d):\n%s" % (binary, source, p.returncode, p.stderr))
        drawn = sorted(os.listdir(tmp))
        if drawn != sorted(BENCH_CHARTS):
            raise SystemExit("report.py: colonnade-bench drew %s, not %s" % (", ".join(drawn) or "nothing", ", ".join(BENCH_CHARTS)))
        digest = sha256_file(source)
        for name in drawn:
            with open(os.path.join(tmp, name)) as f:
                svg = f.read()
            path = os.path.join(directory, name)
            with open(path + ".tmp", "w") as f:
                f.write(stamp(svg, "docs/bench/" + os.path.basename(source), digest))
            os.replace(path + ".tmp", path)
            print("report.py: drew %s" % path)


# --- Suite hooks: Benchmarks/suites/NN-NAME.sh writes docs/bench/NAME.json. ---
BUILT_IN = {"colonnade-bench", "peers", "ingest", "interop"}


def hook_suites():
    """The suite names of Benchmarks/suites/NN-NAME.sh, in run order."""
    names = []
    for path in sorted(glob.glob(os.path.join(HERE, "suites", "*.sh"))):
        base = os.path.basename(path)[:-3]
        names.append(base.split("-", 1)[1] if re.match(r"^\d+-", base) else base)
    return names


def hook_section(name, data):
    """The markdown of suite `name` from its Benchmarks/suites/NAME.py `section(data)`."""
    path = os.path.join(HERE, "suites", name + ".py")
    if data is None:
        return "Not measured in the committed figures: docs/bench/%s.json is missing (`Benchmarks/reproduce.sh` makes it)." % name
    if not os.path.exists(path):
        return "```\n%s\n```" % json.dumps(data, indent=1, sort_keys=True)[:4000]
    spec = importlib.util.spec_from_file_location("suite_" + name.replace("-", "_"), path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.section(data)


def run_section(run):
    """What reproduce.sh ran, from run.json: per suite, its attempts and load average."""
    if run is None:
        return ("**These figures were not made by one `Benchmarks/reproduce.sh` run** (docs/bench/run.json is missing): "
                "each JSON file was made by its own command at its own time, with the size, commit and load "
                "average it records, shown with each section.")
    lines = ["`Benchmarks/reproduce.sh --size %s` at commit %s, %s → %s, %s cores (%s)." % (
        run["size"], run["commit"], run["started"], run["ended"], run["cores"], run.get("cpu", "?")), ""]
    refreshed = [r for r in run["suites"] if r.get("refreshed")]
    if refreshed:
        lines += ["Suites run again on their own later (`Benchmarks/reproduce.sh --suite NAME --update-page`, same size and "
                  "rules) say so in their last column, with the commit they ran at; their sections show that run, and the "
                  "others the full run above: %s." % ", ".join(r["name"] for r in refreshed), ""]
    judged = all("other_cores" in r for r in run["suites"])
    if judged:
        lines += ["A suite counts as loaded when the load average at its start exceeded its threads, or other "
                  "processes used more than a quarter of a core on average while it ran (busy CPU time from "
                  "`/proc/stat` less the suite's own processes' CPU time, over its wall time). The load average "
                  "at its end is shown, not judged: it counts the suite's own threads.", "",
                  "| suite | attempts | load average (1 min) at start / end | other processes (cores) | seconds | |",
                  "|---|---:|---|---:|---:|---|"]
    else:
        lines += ["This run judged a suite loaded when the load average at its start or its end exceeded its "
                  "threads; the end counts the suite's own threads, so a suite that keeps every core busy can "
                  "be marked loaded on an otherwise idle machine (reproduce.sh now measures other processes' "
                  "CPU time instead).", "",
                  "| suite | attempts | load average (1 min) at start / end | seconds | |",
                  "|---|---:|---|---:|---|"]
    for r in run["suites"]:
        verdict = ("**loaded**: %s in every attempt; compare its rows with each other, not with an idle machine" % (
            "the machine was busy with other work" if judged else "the load exceeded the %d threads" % r["threads"])
            if r["loaded"] else ("quiet" if judged else "quiet enough (load ≤ threads)"))
        if r.get("refreshed"):
            verdict += "; run again at commit %s, ended %s" % (r["commit"], r["ended"])
        others = ["%.2f" % r["other_cores"]] if judged else []
        lines.append("| " + " | ".join([r["name"], "%d" % r["attempts"], "%.2f / %.2f" % (r["load_start"], r["load_end"])]
                                       + others + ["%.0f" % r["seconds"], verdict]) + " |")
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--bench", default=os.path.join(ROOT, "docs", "bench", "colonnade-bench.json"))
    ap.add_argument("--peers", default=os.path.join(ROOT, "docs", "bench", "peers.json"))
    ap.add_argument("--zip", default=os.path.join(ROOT, "docs", "bench", "zip-medium.json"))
    ap.add_argument("--interop", default=os.path.join(ROOT, "docs", "bench", "interop.json"),
                    help="Benchmarks/peers/interop.sh --json FILE (optional)")
    ap.add_argument("--ingest", default=os.path.join(ROOT, "docs", "bench", "ingest.json"),
                    help="Benchmarks/peers/ingest.sh --json FILE (optional)")
    ap.add_argument("--run", default=os.path.join(ROOT, "docs", "bench", "run.json"), help="reproduce.sh's record (optional)")
    ap.add_argument("--charts", default=os.path.join(ROOT, "docs", "bench"), help="where the charts are")
    ap.add_argument("--template", default=os.path.join(HERE, "BENCHMARKS.md.in"))
    ap.add_argument("--output", default=os.path.join(ROOT, "docs", "BENCHMARKS.md"))
    ap.add_argument("--check", action="store_true", help="compare with --output and the charts instead of writing")
    ap.add_argument("--draw-charts", metavar="COLONNADE_BENCH", help="redraw and stamp colonnade-bench's charts from --bench, then render")
    a = ap.parse_args()
    if a.draw_charts:
        draw_charts(a.draw_charts, a.bench, a.charts)
    bench = Bench(a.bench)
    with open(a.peers) as f:
        peer = json.load(f)
    with open(a.template) as f:
        template = f.read()
    # The zip suite: from colonnade-bench.json when it ran it, else its own report.
    if "zip" in bench.suites():
        zipbench = bench
    else:
        zipbench = Bench(a.zip) if os.path.exists(a.zip) else None

    def optional(path):
        if not os.path.exists(path):
            return None
        with open(path) as f:
            return json.load(f)
    interop, ingest, run = optional(a.interop), optional(a.ingest), optional(a.run)
    names = context(bench, peer, zipbench, interop, ingest)
    hooks = {n: optional(os.path.join(os.path.dirname(a.bench), n + ".json")) for n in hook_suites() if n not in BUILT_IN}
    placed = set()

    def section(name):
        placed.add(name)
        return hook_section(name, hooks.get(name))
    inputs = [p for p in (a.bench, a.peers, a.ingest, a.interop, a.run) if os.path.exists(p)]
    inputs += [os.path.join(os.path.dirname(a.bench), n + ".json") for n, d in hooks.items() if d is not None]
    if zipbench is not None and zipbench is not bench:
        inputs.append(a.zip)
    names.update(section=section, run_section=lambda: run_section(run), run=run,
                 inputs=", ".join("`docs/bench/%s`" % os.path.basename(p) for p in inputs), input_count=len(inputs))
    text = render(template, names)
    rest = [n for n in hooks if n not in placed]
    if rest:
        text += "\n## Further suites\n\n" + "\n\n".join("### %s\n\n%s" % (n, hook_section(n, hooks[n])) for n in rest) + "\n"
    outputs = {a.output: text}
    for name, svg in plot.charts(peer).items():
        outputs[os.path.join(a.charts, name)] = svg
    if a.check:
        stale = []
        for path, expected in outputs.items():
            try:
                with open(path) as f:
                    if f.read() != expected:
                        stale.append(path + " (not what the JSON gives)")
            except FileNotFoundError:
                stale.append(path + " (missing)")
        for name in BENCH_CHARTS:
            why = check_stamp(os.path.join(a.charts, name), a.bench)
            if why:
                stale.append("%s (%s)" % (os.path.join(a.charts, name), why))
        if stale:
            print("report.py: stale: %s; run python3 Benchmarks/report.py (charts: --draw-charts BIN)" % "; ".join(stale), file=sys.stderr)
            return 1
        print("report.py: %s match the JSON; %s carry the stamp of %s" % (", ".join(outputs), ", ".join(BENCH_CHARTS), a.bench))
        return 0
    for path, expected in outputs.items():
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(expected)
        os.replace(tmp, path)
        print("report.py: wrote %s" % path)
    for name in BENCH_CHARTS:
        why = check_stamp(os.path.join(a.charts, name), a.bench)
        if why:
            print("report.py: warning: %s: %s" % (name, why), file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
