#!/usr/bin/env python3
"""The interop-read suite's section of docs/BENCHMARKS.md (issue 32), from interop-read.json:
colonnade-bench's report of `--suite interop-read,codecs` (Benchmarks/suites/50-interop-read.sh)
with the load averages at its start and end.

    python3 Benchmarks/suites/interop-read.py FILE.json    # prints the section (the smoke check)
"""
import json
import re
import sys

FILES = [("polars-zstd.parquet", "Polars `write_parquet` (its default: zstd)"),
         ("pandas-lz4.feather", "pandas `to_feather` (its default: LZ4 frames)"),
         ("duckdb-snappy.parquet", "DuckDB `COPY … (FORMAT parquet)` (its default: Snappy)")]
PEER = re.compile(r"^(Polars read_parquet|Polars read_ipc|DuckDB read_parquet) (\S+) (\S+) t=(\d+)$")
CODEC_TARGET = {"ZSTD": 0.7, "LZ4": 0.5}


def ms(s):
    return "%.1f ms" % (s * 1e3) if s < 1 else "%.2f s" % s


def mbs(r):
    return "%.0f MB/s" % (r["bytes"] / r["seconds"] / 1e6)


def section(data):
    rows = [r for r in data["results"] if r["suite"] == "interop-read"]
    codecs = [r for r in data["results"] if r["suite"] == "codecs"]
    m = data["machine"]
    missing = [n for n in ("Colonnade decode", "colonnade import") if not any(r["name"].startswith(n) for r in rows)]
    if missing or not codecs:
        raise ValueError("interop-read.json lacks %s" % (", ".join(missing) or "the codecs rows"))
    peers = {}
    for r in rows:
        g = PEER.match(r["name"])
        if g:
            peers[(g.group(2), g.group(1), int(g.group(4)))] = r
    threads = sorted({t for (_, _, t) in peers})
    label = next(r["name"] for r in rows if r["name"].startswith("Colonnade decode")).rsplit(" ", 2)[1]

    def ours_at(f, t):
        # Older reports have one Colonnade row per file, at t=1.
        return next((r for r in rows if r["name"].startswith("Colonnade decode %s " % f) and r["name"].endswith(" t=%d" % t)), None)
    out = ["`Benchmarks/suites/50-interop-read.sh` (`colonnade-bench --suite interop-read,codecs --size %s`), commit %s, %s; "
           "%s, %d cores. Load average (1, 5, 15 min) %s at the start, %s at the end: %s." % (
               m["size"], m["commit"], m["date"], m["cpuModel"], m["cores"],
               " / ".join("%.2f" % x for x in data["loadavg_start"]), " / ".join("%.2f" % x for x in data["loadavg_end"]),
               "a quiet machine" if max(data["loadavg_start"][0], data["loadavg_end"][0]) <= m["cores"]
               else "**a loaded machine** (more runnable threads than cores): compare the rows with each other, same run, "
                    "not with an idle machine"),
           "",
           "Each file is the bench table (%s rows) as its writer makes it by default. *Decode* is in process, "
           "file to table, no save: Colonnade's `InteropReader.read(path:threads:)` (a Parquet file's column chunks, an Arrow file's record batches, "
           "decoded on `threads` threads) beside Polars `read_parquet`/`read_ipc` and DuckDB "
           "`CREATE TABLE t AS SELECT * FROM read_parquet(…)`, timed with `time.perf_counter()` around the "
           "read alone after the imports, at %s (`POLARS_MAX_THREADS`, DuckDB `SET threads`), in the same run "
           "on the same bytes; median of the runs shown, after one untimed warm-up. Peer ÷ Colonnade above 1 means "
           "Colonnade is faster." % (label, " and ".join("%d thread%s" % (t, "" if t == 1 else "s") for t in threads)),
           ""]
    head = "| file (bytes) |"
    sep = "|---|"
    cols = []
    for t in threads:
        head += " Colonnade decode, t=%d |" % t
        sep += "---:|"
        cols.append(("Colonnade", t))
        for reader in ("Polars", "DuckDB"):
            head += " %s t=%d (peer ÷ Colonnade t=%d) |" % (reader, t, t)
            sep += "---:|"
            cols.append((reader, t))
    head += " `colonnade import` end to end, **includes the durable save** (fsync) and process start |"
    sep += "---:|"
    out += [head, sep]
    for f, writer in FILES:
        first = ours_at(f, min(threads)) if threads else None
        if first is None:
            continue
        line = "| %s: %s (%.1f MB) |" % (f, writer, first["bytes"] / 1e6)
        for reader, t in cols:
            ours = ours_at(f, t)
            if reader == "Colonnade":
                line += " — |" if ours is None else " %s (%s, spread %.0f %%) |" % (ms(ours["seconds"]), mbs(ours), ours["spread"] * 100)
                continue
            p = next((v for (pf, pr, pt), v in peers.items() if pf == f and pt == t and pr.startswith(reader)), None)
            line += " — |" if p is None or ours is None else " %s (%.2f×) |" % (ms(p["seconds"]), p["seconds"] / ours["seconds"])
        e2e = next((r for r in rows if r["name"].startswith("colonnade import %s " % f)), None)
        line += " — |" if e2e is None else " %s |" % ms(e2e["seconds"])
        out.append(line)
    out.append("")
    for t in threads:
        polars = peers.get(("polars-zstd.parquet", "Polars read_parquet", t))
        ours = ours_at("polars-zstd.parquet", t)
        if polars and ours:
            ratio = polars["seconds"] / ours["seconds"]
            out.append("Target: Colonnade's in-process decode of Polars' default zstd Parquet at least as fast as Polars "
                       "reads it at the same thread count, %d: %s against %s, %.2f× — %s." % (
                           t, ms(ours["seconds"]), ms(polars["seconds"]), ratio, "met" if ratio >= 1 else "**not met**"))
        elif polars:
            out.append("Target at %d threads: not judged (no Colonnade row at %d threads in this report)." % (t, t))
    out.append("")
    out += ["Codec speed, one core, in process, on the same frames: our decoders on %s of generated quotes "
            "(compressed once, untimed, by `zstd -3` and by `lz4` with its default frame), beside the reference "
            "tools' in-memory benchmark `zstd -b -d`/`lz4 -b -d` (about 3 s each, their MB/s of output)." % (
                next((r["name"].split(" (")[0].split(" decode ")[1] for r in codecs), "CSV")),
            "",
            "The tools print their fastest run, so the ratio is our fastest run to theirs; our median is beside it.",
            "",
            "| codec | Colonnade, median | Colonnade, fastest run | reference tool (its fastest) | Colonnade ÷ tool (fastest) | Colonnade ÷ tool (our median) | target |",
            "|---|---:|---:|---:|---:|---:|---|"]
    for codec in ("ZSTD", "LZ4"):
        mine = [r for r in codecs if r["name"].startswith(codec + " ")]
        ours = next((r for r in mine if r["name"].endswith("(Colonnade, in process)")), None)
        best = next((r for r in mine if r["name"].endswith("fastest run)")), None)
        tool = next((r for r in mine if "-b -d" in r["name"]), None)
        if ours is None or tool is None or best is None:
            out.append("| %s | %s | — | not measured | — | — | ≥ %.1f×: not judged |" % (codec, mbs(ours) if ours else "—", CODEC_TARGET[codec]))
            continue
        ratio = tool["seconds"] / best["seconds"]
        out.append("| %s | %s (spread %.0f %%) | %s | %s: %s | %.2f× | %.2f× | ≥ %.1f×: %s |" % (
            codec, mbs(ours), ours["spread"] * 100, mbs(best), tool["name"].split("(")[1].split(",")[0], mbs(tool), ratio,
            tool["seconds"] / ours["seconds"], CODEC_TARGET[codec], "met" if ratio >= CODEC_TARGET[codec] else "**not met**"))
    return "\n".join(out)


if __name__ == "__main__":
    with open(sys.argv[1]) as f:
        print(section(json.load(f)))
