#!/usr/bin/env python3
"""Charts of a peers run as self-contained SVG files (standard library only):

    python3 Benchmarks/peers/plot.py RESULTS.json OUTDIR     # RESULTS.json from peers.py --json

writes OUTDIR/peers-queries.svg (median query time per engine, at 1 thread and at all threads,
log scale) and OUTDIR/peers-load.svg (each engine's load time, log scale). peers.py --svg DIR
calls it after a run.
"""
import json
import math
import os
import sys
from xml.sax.saxutils import escape

LABELS = {"colonnade": "Colonnade", "duckdb": "DuckDB", "polars": "Polars", "numpy": "NumPy", "sqlite": "SQLite"}
SINGLE_THREADED = {"numpy", "sqlite"}
PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b"]


def fmt(v):
    """Three significant digits, as on the axis."""
    if v >= 1000:
        return "%.3gk" % (v / 1000)
    return "%.3g" % v


def bar_chart(title, subtitle, unit, series, groups):
    """A horizontal grouped bar chart, log scale. groups: [(label, [value or None per series])]."""
    width, left, right, top, bar, gap = 900.0, 190.0, 70.0, 78.0, 14.0, 12.0
    group_h = max(len(series), 1) * bar + gap
    plot_h = len(groups) * group_h
    height = top + plot_h + 40
    plot_w = width - left - right
    values = [v for _, vs in groups for v in vs if v is not None and v > 0 and math.isfinite(v)]
    lo = math.floor(math.log10(min(values))) if values else 0
    hi = math.ceil(math.log10(max(values))) if values else 1
    hi = max(hi, lo + 1)

    def x(v):
        t = (math.log10(v) - lo) / (hi - lo)
        return left + min(max(t, 0.0), 1.0) * plot_w

    out = ['<?xml version="1.0" encoding="UTF-8"?>',
           '<svg xmlns="http://www.w3.org/2000/svg" width="%.1f" height="%.1f" viewBox="0 0 %.1f %.1f" '
           'font-family="sans-serif" font-size="11">' % (width, height, width, height),
           '<rect x="0" y="0" width="%.1f" height="%.1f" fill="#ffffff"/>' % (width, height),
           '<text x="%.1f" y="20" font-size="15" font-weight="bold" fill="#212529">%s</text>' % (left, escape(title)),
           '<text x="%.1f" y="37" fill="#495057">%s</text>' % (left, escape(subtitle))]
    lx = left
    for i, name in enumerate(series):
        out.append('<rect x="%.1f" y="48" width="12" height="10" fill="%s"/><text x="%.1f" y="57" fill="#495057">%s</text>'
                   % (lx, PALETTE[i % len(PALETTE)], lx + 16, escape(name)))
        lx += 16 + 6.5 * len(name) + 18
    for e in range(lo, hi + 1):
        tx = x(10.0 ** e)
        out.append('<path d="M%.1f %.1fV%.1f" stroke="#e9ecef" stroke-width="1"/>' % (tx, top - 4, top + plot_h))
        out.append('<text x="%.1f" y="%.1f" text-anchor="middle" fill="#495057">%s</text>' % (tx, top + plot_h + 14, fmt(10.0 ** e)))
    out.append('<text x="%.1f" y="%.1f" text-anchor="middle" fill="#495057">%s (log scale)</text>'
               % (left + plot_w / 2, top + plot_h + 30, escape(unit)))
    for g, (label, vs) in enumerate(groups):
        y0 = top + g * group_h
        out.append('<text x="%.1f" y="%.1f" text-anchor="end" fill="#212529">%s</text>'
                   % (left - 8, y0 + len(series) * bar / 2 + 4, escape(label)))
        for s, v in enumerate(vs):
            if v is None or not (v > 0 and math.isfinite(v)):
                continue
            y = y0 + s * bar
            out.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"/>'
                       % (left, y + 1, max(x(v) - left, 1.0), bar - 2, PALETTE[s % len(PALETTE)]))
            out.append('<text x="%.1f" y="%.1f" fill="#495057" font-size="10">%s</text>' % (x(v) + 4, y + bar - 3, fmt(v)))
    out.append('<path d="M%.1f %.1fV%.1f" stroke="#868e96" stroke-width="1"/>' % (left, top - 4, top + plot_h))
    out.append("</svg>")
    return "\n".join(out) + "\n"


def charts(report):
    """{file name: SVG text} for a peers.py --json report."""
    results = report["results"]
    meta = report["meta"]
    m = meta.get("machine", {})
    engines = [r["engine"] for r in results]
    threads_all = meta.get("threads", 1)
    settings = sorted(set([1, threads_all]))
    by = {(r["engine"], run["query"], run["threads"]): run["ms"] for r in results for run in r["runs"]}
    queries = list(report.get("queries", {}).keys()) or sorted({q for (_, q, _) in by})
    subtitle = "%s rows, %s, %s cores; median ms of %s runs, %s" % (
        meta.get("rows"), m.get("cpu", "?"), m.get("usable_cores", "?"), meta.get("repeat"), meta.get("date", "")[:10])
    if meta.get("loadavg_start") is not None and meta.get("loadavg_end") is not None:
        subtitle += "; load average %.1f → %.1f (a shared machine)" % (meta["loadavg_start"], meta["loadavg_end"])
    groups = []
    for t in settings:
        for q in queries:
            # Single-threaded engines show their 1-thread time at every setting (as in the table).
            vs = [by.get((e, q, 1 if e in SINGLE_THREADED else t)) for e in engines]
            groups.append(("%s, %d thread%s" % (q, t, "" if t == 1 else "s"), vs))
    out = {"peers-queries.svg": bar_chart("Colonnade vs peers: query time (lower is better)", subtitle, "ms",
                                          [LABELS.get(e, e) for e in engines], groups)}
    loads = [(LABELS.get(r["engine"], r["engine"]), [r.get("load_ms")]) for r in results]
    out["peers-load.svg"] = bar_chart("Loading the data into each engine (outside the timed region)", subtitle, "ms",
                                      ["load ms"], loads)
    return out


def write(report, directory):
    os.makedirs(directory, exist_ok=True)
    paths = []
    for name, text in charts(report).items():
        path = os.path.join(directory, name)
        tmp = path + ".tmp"
        with open(tmp, "w") as f:
            f.write(text)
        os.replace(tmp, path)
        paths.append(path)
    return paths


def main(argv):
    if len(argv) != 3:
        sys.exit(__doc__)
    with open(argv[1]) as f:
        report = json.load(f)
    for path in write(report, argv[2]):
        print("wrote %s" % path)


if __name__ == "__main__":
    main(sys.argv)
