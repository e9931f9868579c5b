"""The lakehouse suite's section of docs/BENCHMARKS.md (issue 35), from lakehouse.json: the zstd
Parquet and Delta writers of Colonnade (the CLI, process start to files fsynced) beside Polars,
DuckDB and delta-rs writing zstd in process, and the one-day Delta append (Benchmarks/peers/lakehouse.py).

    python3 Benchmarks/suites/lakehouse.py FILE.json    # prints the section
"""
import json
import sys

POLARS = "Polars write_parquet (zstd default)"
OURS = "colonnade export parquet zstd (CLI, fsync)"
SIZE_LIMIT = 1.10  # issue 35: files no more than 10 % larger than Polars' default output
APPEND_TARGET_S = 1.0


def in_process(data):
    """Colonnade's in-process export measurements (colonnade-bench's lakehouse suite), if embedded."""
    bench = data.get("colonnade_bench") or {}
    return [r for r in bench.get("results", []) if r.get("suite") == "lakehouse" and r["name"].startswith("export ")]


def section(data):
    b = data.get("bench")
    if not b:
        return "Not measured in the committed figures: lakehouse.json holds no benchmark (a `--check-only` run)."
    writers = {w["writer"]: w for w in b["writers"]}
    budget = (", fewer (at least %d) once they have taken %.0f s" % (b["min_runs"], b["repeat_budget_s"])
              if "repeat_budget_s" in b else "")
    out = ["%s rows, %d threads; each writer's time is the median of up to %s runs%s; load average (1 min) %s before, %s after. "
           "Colonnade's rows are whole `colonnade export` processes (start, snapshot load, write, `fsync` of every file); "
           "the peers write in process from a table already in memory, timed to the page cache and, in a second set of "
           "runs, with every file fsynced. MB = 10^6 bytes written." % (
               format(b["rows"], ","), b["threads"], b.get("repeat", "?"), budget,
               "%.2f" % b["loadavg_before"], "%.2f" % b["loadavg_after"]), "",
           "| writer | to the page cache | with fsync | MB | MB/s of file (with fsync) | load at its start |",
           "|---|---:|---:|---:|---:|---:|"]
    for w in b["writers"]:
        out.append("| %s | %.2f s | %.2f s | %.1f | %.0f | %.2f |" % (
            w["writer"], w["seconds"], w["seconds_fsync"], w["bytes"] / 1e6, w["bytes"] / w["seconds_fsync"] / 1e6,
            w["loadavg"][0]))
    ours = writers.get(OURS)
    peers = [w for name, w in writers.items() if not name.startswith("colonnade")]
    inproc = in_process(data)
    out.append("")
    if inproc:
        # The comparison: in process on every side, to the page cache.
        out.append("In process, to the page cache, on every side (Colonnade: `colonnade-bench --suite lakehouse`, "
                   "the same writers from a table in memory, %s runs; the peers: the first column above):" % inproc[0]["runs"])
        out.append("")
        out.append("| writer, in process | to the page cache | MB | MB/s of file |")
        out.append("|---|---:|---:|---:|")
        for r in inproc:
            out.append("| Colonnade %s | %.2f s | %.1f | %.0f |" % (r["name"], r["seconds"], r["bytes"] / 1e6, r["bytes"] / r["seconds"] / 1e6))
        for w in peers:
            out.append("| %s | %.2f s | %.1f | %.0f |" % (w["writer"], w["seconds"], w["bytes"] / 1e6, w["bytes"] / w["seconds"] / 1e6))
        out.append("")
        zstd = next((r for r in inproc if r["name"].startswith("export Parquet zstd ") and "fsync" not in r["name"]
                     and "zstd:" not in r["name"]), None)
        if zstd and peers:
            fastest = min(peers, key=lambda p: p["seconds"])
            ratio = fastest["seconds"] / zstd["seconds"]
            out.append("Faster than every peer's zstd writer in process (the issue's measure): %s — the fastest peer, %s, "
                       "takes %.2f× Colonnade's %.2f s." % ("met" if ratio > 1 else "**not met**", fastest["writer"], ratio,
                                                           zstd["seconds"]))
            out.append("")
    if ours and peers:
        slowest_ratio = min(p["seconds_fsync"] / ours["seconds_fsync"] for p in peers)
        fastest = min(peers, key=lambda p: p["seconds_fsync"])
        out.append("Faster than every peer's zstd writer, both sides with fsync (Colonnade's also with its process start "
                   "and load): %s — the fastest peer, %s, takes %.2f× Colonnade's time." % (
                       "met" if slowest_ratio > 1 else "**not met**", fastest["writer"], slowest_ratio))
    polars = writers.get(POLARS)
    if ours and polars:
        ratio = ours["bytes"] / polars["bytes"]
        out.append("")
        out.append("File size against Polars' default output: %.1f MB against %.1f MB, %.3f× (target ≤ %.2f×): %s." % (
            ours["bytes"] / 1e6, polars["bytes"] / 1e6, ratio, SIZE_LIMIT, "met" if ratio <= SIZE_LIMIT else "**not met**"))
    if "append_one_day_seconds" in b:
        t = b["append_one_day_seconds"]
        out.append("")
        out.append("Appending the last day to the year-partitioned Delta table of every earlier row (`export --format delta --mode "
                   "append`, one process, one commit): %.2f s (target under %.0f s): %s." % (
                       t, APPEND_TARGET_S, "met" if t < APPEND_TARGET_S else "**not met**"))
    failed = data.get("checks_failed") or []
    out.append("")
    out.append("Read-back checks in this run: %s." % (
        "**%d failed**: %s" % (len(failed), "; ".join(failed)) if failed
        else "none failed (at 20 M rows the checks are skipped: they run on the small and medium tables, "
             "`Benchmarks/peers/lakehouse.sh --size medium --check-only`)" if b["rows"] >= 20_000_000 else "none failed"))
    return "\n".join(out)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        print(section(json.load(f)))
